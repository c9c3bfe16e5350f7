package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// The namespace's change feed, link check results and webhook endpoints
// (docs/product.md §4.3-4.5), all under the key's collection path.

// collection is the key's collection path on the chosen base (--test):
// …/handles/{prefix}/{ns}/.
func (c *client) collection() (string, error) {
	me, err := c.whoami()
	if err != nil {
		return "", err
	}
	return show(me["collection"]), nil
}

// feedState is what an event shows of an identifier before or after.
type feedState struct {
	URL       string `json:"url"`
	Status    string `json:"status"`
	Linkcheck *struct {
		State  string `json:"state"`
		Status int    `json:"status"`
		Error  string `json:"error"`
	} `json:"linkcheck"`
}

func (s *feedState) fields() map[string]string {
	m := map[string]string{}
	if s == nil {
		return m
	}
	if s.URL != "" {
		m["url"] = s.URL
	}
	if s.Status != "" {
		m["status"] = s.Status
	}
	if lc := s.Linkcheck; lc != nil {
		v := lc.State
		if lc.Status != 0 {
			v += " " + strconv.Itoa(lc.Status)
		}
		if lc.Error != "" {
			v += " " + lc.Error
		}
		m["link"] = v
	}
	return m
}

// cmdEvents prints a page of the feed after --after (default 0, the
// start), and every following page with --all. The last line says how to
// continue: the next --after.
func cmdEvents(c *client, pos []string) error {
	if len(pos) != 0 {
		return usageErr("events takes no positional arguments")
	}
	coll, err := c.collection()
	if err != nil {
		return err
	}
	after := c.v("after")
	if after == "" {
		after = "0"
	}
	var rows [][]string
	for {
		q := url.Values{"after": {after}}
		if l := c.v("limit"); l != "" {
			q.Set("limit", l)
		}
		b, _, err := c.do("GET", coll+"events?"+q.Encode(), nil, "Accept", "application/json")
		if err != nil {
			return err
		}
		var page struct {
			Events []struct {
				Seq     uint64     `json:"seq"`
				Time    string     `json:"time"`
				Action  string     `json:"action"`
				Handle  string     `json:"handle"`
				KeyName string     `json:"key_name"`
				Before  *feedState `json:"before"`
				After   *feedState `json:"after"`
			} `json:"events"`
			NextAfter uint64 `json:"next_after"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			return err
		}
		if c.json {
			c.out.Write(b)
		}
		for _, e := range page.Events {
			bf, af := e.Before.fields(), e.After.fields()
			var ch []string
			for _, k := range []string{"url", "status", "link"} {
				switch bv, av := bf[k], af[k]; {
				case bv == av:
				case bv == "":
					ch = append(ch, k+": "+av)
				default:
					ch = append(ch, k+": "+bv+" → "+av)
				}
			}
			rows = append(rows, []string{strconv.FormatUint(e.Seq, 10), e.Time, e.Action, e.Handle, e.KeyName, strings.Join(ch, "; ")})
		}
		after = strconv.FormatUint(page.NextAfter, 10)
		if c.v("all") != "true" || len(page.Events) == 0 {
			break
		}
	}
	if !c.json {
		c.table("SEQ\tTIME\tACTION\tHANDLE\tKEY\tCHANGE", rows)
		fmt.Fprintf(c.out, "next: --after %s\n", after)
	}
	return nil
}

// cmdLinkcheck lists the namespace's URLs the link checker found not ok
// (--state), or every result of one identifier.
func cmdLinkcheck(c *client, pos []string) error {
	cols := []string{"handle", "url", "kind", "state", "status", "error", "checked", "failures"}
	switch len(pos) {
	case 0:
		coll, err := c.collection()
		if err != nil {
			return err
		}
		q := url.Values{}
		for _, k := range []string{"state", "limit", "cursor"} {
			if v := c.v(k); v != "" {
				q.Set(k, v)
			}
		}
		b, _, err := c.do("GET", coll+"linkcheck?"+q.Encode(), nil, "Accept", "application/json")
		if err != nil {
			return err
		}
		return c.emit(b, func() error {
			var page struct {
				Targets    []map[string]any `json:"targets"`
				NextCursor string           `json:"next_cursor"`
			}
			if err := json.Unmarshal(b, &page); err != nil {
				return err
			}
			c.rows(cols, page.Targets)
			if page.NextCursor != "" {
				fmt.Fprintf(c.out, "more: --cursor %s\n", page.NextCursor)
			}
			return nil
		})
	case 1:
		if c.v("state") != "" || c.v("limit") != "" || c.v("cursor") != "" {
			return usageErr("--state, --limit and --cursor page the namespace's listing; an identifier's results are all shown")
		}
		path, err := c.handlePath(pos[0])
		if err != nil {
			return err
		}
		b, _, err := c.do("GET", path+"/linkcheck", nil, "Accept", "application/json")
		if err != nil {
			return err
		}
		return c.emit(b, func() error {
			var rec struct {
				Results []map[string]any `json:"results"`
			}
			if err := json.Unmarshal(b, &rec); err != nil {
				return err
			}
			c.rows(cols, rec.Results)
			return nil
		})
	}
	return usageErr("linkcheck takes at most one HANDLE")
}

// rows prints objects as a table, a column per key in cols.
func (c *client) rows(cols []string, objs []map[string]any) {
	header := make([]string, len(cols))
	for i, col := range cols {
		header[i] = strings.ToUpper(strings.ReplaceAll(col, "_", " "))
	}
	rows := make([][]string, 0, len(objs))
	for _, o := range objs {
		row := make([]string, len(cols))
		for i, col := range cols {
			row[i] = show(o[col])
		}
		rows = append(rows, row)
	}
	c.table(strings.Join(header, "\t"), rows)
}

// webhookPath is the collection's webhooks path, with the endpoint id and
// what follows it, if any.
func (c *client) webhookPath(parts ...string) (string, error) {
	coll, err := c.collection()
	if err != nil {
		return "", err
	}
	p := coll + "webhooks"
	for _, s := range parts {
		p += "/" + url.PathEscape(s)
	}
	return p, nil
}

func cmdWebhooksList(c *client, pos []string) error {
	if len(pos) != 0 {
		return usageErr("webhooks list takes no positional arguments")
	}
	p, err := c.webhookPath()
	if err != nil {
		return err
	}
	return listTable(c, p, "webhooks", "id", "state", "url", "kinds", "cursor", "failures", "last_error")
}

func cmdWebhooksAdd(c *client, pos []string) error {
	if len(pos) != 0 {
		return usageErr("webhooks add takes no positional arguments")
	}
	if c.v("url") == "" {
		return usageErr("give the endpoint: --url URL")
	}
	req := map[string]any{"url": c.v("url")}
	if k := c.lists["kind"]; len(k) > 0 {
		req["kinds"] = k
	}
	if d := c.v("description"); d != "" {
		req["description"] = d
	}
	if a := c.v("after"); a != "" {
		n, err := strconv.ParseUint(a, 10, 64)
		if err != nil {
			return usageErr("--after %q: want a sequence number", a)
		}
		req["after"] = n
	}
	p, err := c.webhookPath()
	if err != nil {
		return err
	}
	b, _, err := c.do("POST", p, req)
	if err != nil {
		return err
	}
	return c.emit(b, func() error {
		var wh struct{ ID, URL, Secret string }
		if err := json.Unmarshal(b, &wh); err != nil {
			return err
		}
		fmt.Fprintf(c.out, "webhook %s → %s\nsigning secret — shown only now, store it:\n%s\n", wh.ID, wh.URL, wh.Secret)
		return nil
	})
}

func cmdWebhooksGet(c *client, pos []string) error { return webhookCall(c, pos, "GET") }

// webhookCall sends method to the endpoint named by pos (and the sub-route
// in sub, if any) and prints the endpoint it answers.
func webhookCall(c *client, pos []string, method string, sub ...string) error {
	id, err := one(pos, "webhook ID")
	if err != nil {
		return err
	}
	p, err := c.webhookPath(append([]string{id}, sub...)...)
	if err != nil {
		return err
	}
	b, _, err := c.do(method, p, nil)
	if err != nil {
		return err
	}
	return c.emit(b, func() error { return c.kv(b) })
}

func cmdWebhooksDeliveries(c *client, pos []string) error {
	id, err := one(pos, "webhook ID")
	if err != nil {
		return err
	}
	p, err := c.webhookPath(id, "deliveries")
	if err != nil {
		return err
	}
	if l := c.v("limit"); l != "" {
		p += "?limit=" + url.QueryEscape(l)
	}
	return listTable(c, p, "deliveries", "attempt", "time", "first_seq", "last_seq", "events", "ok", "status", "error", "detail")
}

func cmdWebhooksEnable(c *client, pos []string) error { return webhookCall(c, pos, "POST", "enable") }

func cmdWebhooksDelete(c *client, pos []string) error {
	id, err := one(pos, "webhook ID")
	if err != nil {
		return err
	}
	p, err := c.webhookPath(id)
	if err != nil {
		return err
	}
	if _, _, err := c.do("DELETE", p, nil); err != nil {
		return err
	}
	if c.json {
		fmt.Fprintln(c.out, `{"deleted":true}`)
	} else {
		fmt.Fprintf(c.out, "webhook %s deleted\n", id)
	}
	return nil
}
