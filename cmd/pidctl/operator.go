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

// cmdApply sends an application through the public route, which takes no
// key: an applicant has none, and a key file in the environment is not
// sent (a listener that refuses keys in clear text would refuse the
// application).
func cmdApply(c *client, pos []string) error {
	if len(pos) != 0 {
		return usageErr("apply takes no positional arguments")
	}
	req := map[string]any{
		"organisation":           c.v("organisation"),
		"technical_contact":      map[string]string{"name": c.v("tech-name"), "email": c.v("tech-email")},
		"administrative_contact": map[string]string{"name": c.v("admin-name"), "email": c.v("admin-email")},
		"policy_version":         c.v("policy-version"),
		"maintenance_statement":  c.v("maintenance"),
	}
	if ps := c.lists["prefix"]; len(ps) > 0 {
		req["prefixes"] = ps
	}
	if c.v("custom-ids") == "true" {
		req["custom_ids"] = true
	}
	var body any = req
	if f := c.v("file"); f != "" {
		b, err := readInput(f)
		if err != nil {
			return err
		}
		body = b
	}
	c.key = ""
	b, _, err := c.do("POST", "/apply/v1/applications", body)
	if err != nil {
		return err
	}
	return c.emit(b, func() error {
		var rc struct {
			ID          string `json:"id"`
			State       string `json:"state"`
			StatusToken string `json:"status_token"`
			StatusURL   string `json:"status_url"`
		}
		if err := json.Unmarshal(b, &rc); err != nil {
			return err
		}
		fmt.Fprintf(c.out, "application %s: %s\n", rc.ID, rc.State)
		fmt.Fprintf(c.out, "status token — shown only now, store it (e.g. in a file for --token-file):\n%s\n", rc.StatusToken)
		fmt.Fprintf(c.out, "status: pidctl apply-status %s --token-file FILE, or GET %s with the token as bearer\n", rc.ID, c.base+rc.StatusURL)
		return nil
	})
}

// cmdApplyStatus shows an application's state to its applicant: the status
// token from --token-file (or PIDCTL_STATUS_TOKEN_FILE) is the bearer token,
// and no API key is sent.
func cmdApplyStatus(c *client, pos []string) error {
	id, err := one(pos, "application ID")
	if err != nil {
		return err
	}
	f := c.v("token-file")
	if f == "" {
		f = os.Getenv("PIDCTL_STATUS_TOKEN_FILE")
	}
	if f == "" {
		return usageErr("give the status token that apply printed: --token-file FILE (or PIDCTL_STATUS_TOKEN_FILE)")
	}
	tok, err := os.ReadFile(f)
	if err != nil {
		return err
	}
	c.key = strings.TrimSpace(string(tok))
	b, _, err := c.do("GET", "/apply/v1/applications/"+url.PathEscape(id), nil)
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
	if sh := c.v("shard"); sh != "" {
		req["shard"] = sh
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
	// A switch not given leaves the field as it is; with none given there
	// is nothing to change, and a request would only write an audit entry.
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
	if len(req) == 0 {
		return usageErr("nothing to change: give --custom-ids/--no-custom-ids, --suspended/--no-suspended, --prefix P or --max-keys N")
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
	return c.issueKey("/ops/v1/snaas/" + url.PathEscape(snaa) + "/keys")
}

// ownKeys is the path of the calling SNAA's keys (the same on either base).
const ownKeys = "/pid/v2/keys"

func cmdKeysCreate(c *client, pos []string) error {
	if len(pos) != 0 {
		return usageErr("keys create takes no positional arguments; an operator issues an SNAA a key with keys issue SNAA_ID")
	}
	return c.issueKey(ownKeys)
}

func (c *client) issueKey(path string) error {
	b, _, err := c.do("POST", path, map[string]string{"name": c.v("name")})
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

// cmdKeysList lists SNAA_ID's keys (the operator's route), or with no
// argument the caller's own (an SNAA key).
func cmdKeysList(c *client, pos []string) error {
	path := ownKeys
	switch len(pos) {
	case 0:
	case 1:
		path = "/ops/v1/snaas/" + url.PathEscape(pos[0]) + "/keys"
	default:
		return usageErr("want at most one SNAA_ID (none: your own keys)")
	}
	return listTable(c, path, "keys", "id", "name", "created", "last_used", "revoked")
}

// cmdKeysRevoke revokes SNAA_ID's key KEY_ID (the operator's route), or
// with KEY_ID alone one of the caller's own keys (an SNAA key).
func cmdKeysRevoke(c *client, pos []string) error {
	var path string
	switch len(pos) {
	case 1:
		path = ownKeys + "/" + url.PathEscape(pos[0])
	case 2:
		path = "/ops/v1/snaas/" + url.PathEscape(pos[0]) + "/keys/" + url.PathEscape(pos[1])
	default:
		return usageErr("want KEY_ID (one of your own keys) or SNAA_ID KEY_ID (operator)")
	}
	keyID := pos[len(pos)-1]
	if _, _, err := c.do("DELETE", path, nil); err != nil {
		return err
	}
	if c.json {
		fmt.Fprintln(c.out, `{"revoked":true}`)
	} else {
		fmt.Fprintf(c.out, "key %s revoked\n", keyID)
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
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
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
