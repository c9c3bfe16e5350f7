package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
)

func cmdApply(c *client, pos []string) error {
	req := map[string]any{
		"organisation":           c.v("organisation"),
		"technical_contact":      map[string]string{"name": c.v("tech-name"), "email": c.v("tech-email")},
		"administrative_contact": map[string]string{"name": c.v("admin-name"), "email": c.v("admin-email")},
		"policy_version":         c.v("policy-version"),
		"maintenance_statement":  c.v("maintenance"),
	}
	var body any = req
	if f := c.v("file"); f != "" {
		b, err := readInput(f)
		if err != nil {
			return err
		}
		body = b
	}
	b, _, err := c.do("POST", "/ops/v1/applications", body)
	if err != nil {
		return err
	}
	return c.emit(b, func() error { return c.kv(b) })
}

func cmdApplications(c *client, pos []string) error {
	path := "/ops/v1/applications"
	if s := c.v("state"); s != "" {
		path += "?state=" + url.QueryEscape(s)
	}
	return listTable(c, path, "applications", "id", "state", "submitted", "organisation")
}

// showOne GETs collection+ID for the one positional ID and shows the object.
func showOne(c *client, pos []string, what, collection string) error {
	id, err := one(pos, what)
	if err != nil {
		return err
	}
	b, _, err := c.do("GET", collection+url.PathEscape(id), nil)
	if err != nil {
		return err
	}
	return c.emit(b, func() error { return c.kv(b) })
}

func cmdApplication(c *client, pos []string) error {
	return showOne(c, pos, "application ID", "/ops/v1/applications/")
}

func cmdApprove(c *client, pos []string) error {
	id, err := one(pos, "application ID")
	if err != nil {
		return err
	}
	req := map[string]any{}
	if ns := c.v("namespace"); ns != "" {
		req["namespace"] = ns
	}
	if ps := c.lists["prefix"]; len(ps) > 0 {
		req["prefixes"] = ps
	}
	if v := c.v("custom-ids"); v != "" {
		req["custom_ids"] = v == "true"
	}
	if n := c.v("note"); n != "" {
		req["note"] = n
	}
	b, _, err := c.do("POST", "/ops/v1/applications/"+url.PathEscape(id)+"/approve", req)
	if err != nil {
		return err
	}
	return c.emit(b, func() error {
		var r struct {
			SNAA struct {
				ID, Namespace string
				Prefixes      []string
				CustomIDs     bool `json:"custom_ids"`
			}
			Key struct{ ID, Name, Secret string }
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		fmt.Fprintf(c.out, "approved: SNAA %s, namespace %s, prefixes %s, custom ids %v\n",
			r.SNAA.ID, r.SNAA.Namespace, strings.Join(r.SNAA.Prefixes, ", "), r.SNAA.CustomIDs)
		fmt.Fprintf(c.out, "key %s (%s) — shown only now, store it:\n%s\n", r.Key.ID, r.Key.Name, r.Key.Secret)
		return nil
	})
}

func cmdReject(c *client, pos []string) error {
	id, err := one(pos, "application ID")
	if err != nil {
		return err
	}
	b, _, err := c.do("POST", "/ops/v1/applications/"+url.PathEscape(id)+"/reject", map[string]string{"note": c.v("note")})
	if err != nil {
		return err
	}
	return c.emit(b, func() error { return c.kv(b) })
}

func cmdSNAAs(c *client, pos []string) error {
	return listTable(c, "/ops/v1/snaas", "snaas", "id", "namespace", "prefixes", "custom_ids", "suspended", "organisation")
}

func cmdSNAA(c *client, pos []string) error {
	return showOne(c, pos, "SNAA ID", "/ops/v1/snaas/")
}

func cmdSNAASet(c *client, pos []string) error {
	id, err := one(pos, "SNAA ID")
	if err != nil {
		return err
	}
	req := map[string]any{}
	// A switch not given leaves the field as it is.
	for opt, field := range map[string]string{"custom-ids": "custom_ids", "suspended": "suspended"} {
		if v := c.v(opt); v != "" {
			req[field] = v == "true"
		}
	}
	if ps := c.lists["prefix"]; len(ps) > 0 {
		req["prefixes"] = ps
	}
	if v := c.v("max-keys"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return usageErr("--max-keys %q: want an integer", v)
		}
		req["max_keys"] = n // its range is the API's to check
	}
	b, _, err := c.do("PATCH", "/ops/v1/snaas/"+url.PathEscape(id), req)
	if err != nil {
		return err
	}
	return c.emit(b, func() error { return c.kv(b) })
}

func cmdKeysIssue(c *client, pos []string) error {
	snaa, err := one(pos, "SNAA_ID")
	if err != nil {
		return err
	}
	b, _, err := c.do("POST", "/ops/v1/snaas/"+url.PathEscape(snaa)+"/keys", map[string]string{"name": c.v("name")})
	if err != nil {
		return err
	}
	return c.emit(b, func() error {
		var k struct{ ID, Name, Secret string }
		if err := json.Unmarshal(b, &k); err != nil {
			return err
		}
		fmt.Fprintf(c.out, "key %s (%s) — shown only now, store it:\n%s\n", k.ID, k.Name, k.Secret)
		return nil
	})
}

func cmdKeysList(c *client, pos []string) error {
	snaa, err := one(pos, "SNAA_ID")
	if err != nil {
		return err
	}
	return listTable(c, "/ops/v1/snaas/"+url.PathEscape(snaa)+"/keys", "keys", "id", "name", "created", "last_used", "revoked")
}

func cmdKeysRevoke(c *client, pos []string) error {
	if len(pos) != 2 {
		return usageErr("want SNAA_ID and KEY_ID")
	}
	if _, _, err := c.do("DELETE", "/ops/v1/snaas/"+url.PathEscape(pos[0])+"/keys/"+url.PathEscape(pos[1]), nil); err != nil {
		return err
	}
	if c.json {
		fmt.Fprintln(c.out, `{"revoked":true}`)
	} else {
		fmt.Fprintf(c.out, "key %s revoked\n", pos[1])
	}
	return nil
}

func cmdAudit(c *client, pos []string) error {
	q := url.Values{}
	if a := c.v("after"); a != "" {
		q.Set("after", a)
	}
	if l := c.v("limit"); l != "" {
		q.Set("limit", l)
	}
	return listTable(c, "/ops/v1/audit?"+q.Encode(), "entries", "seq", "time", "actor", "action", "target")
}

func cmdBackup(c *client, pos []string) error {
	name, err := one(pos, "FILE")
	if err != nil {
		return err
	}
	req, err := http.NewRequest("GET", c.base+"/ops/v1/backup", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	res, err := (&http.Client{}).Do(req) // no timeout: a big database takes a while
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		ae := &apiError{Status: res.StatusCode, Title: res.Status, body: b}
		if json.Unmarshal(b, ae) != nil || ae.Detail == "" {
			ae.Detail = strings.TrimSpace(string(b))
		}
		return ae
	}
	tmp := name + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, res.Body)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		return err
	}
	if c.json {
		fmt.Fprintf(c.out, "{\"file\":%q,\"bytes\":%d}\n", name, n)
	} else {
		fmt.Fprintf(c.out, "backup written to %s (%d bytes)\n", name, n)
	}
	return nil
}
