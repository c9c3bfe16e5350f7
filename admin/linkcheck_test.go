package admin

import (
	"bytes"
	"encoding/csv"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pidnode/linkcheck"
	"pidnode/registry"
)

// putLinkResult stores a link check result of the identifier id of ns as
// the checker does (linkcheck.PutResult), and for a broken one the
// feed's event.
func (e *env) putLinkResult(ns, id, u, state string) {
	e.t.Helper()
	display := e.namer.Full(testPrefix, ns, id)
	key, _, err := e.namer.Key(display)
	if err != nil {
		e.t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := registry.LinkResult{Handle: display, URL: u, Kind: "target", State: state, Checked: now, Since: now}
	if state != registry.LinkOK && state != registry.LinkRecovering {
		r.Status, r.Error, r.Failures, r.FirstFailure = 404, "http", 3, &now
	}
	err = e.srv.reg.Update(func(tx registry.Tx) error {
		if err := linkcheck.PutResult(tx.Tx, e.namer, key, nil, &r); err != nil {
			return err
		}
		if state != registry.LinkBroken {
			return nil
		}
		tail, err := registry.AuditTail(&registry.AuditEntry{Actor: registry.ActorLinkcheck, Action: registry.ActLinkBroken, Target: display,
			After: map[string]any{"url": u, "linkcheck": map[string]any{"state": state, "status": 404, "error": "http", "checked": now, "failures": 3}}})
		if err != nil {
			return err
		}
		return tx.AppendHandleAudit(key, tail)
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// TestLinkcheckRoutes: the namespace's listing shows its broken and
// recovering URLs by default, a state filter narrows or widens it, pages
// resume without gap or duplicate, CSV carries the same rows; one
// identifier's route shows its every result; another SNAA sees none of
// them; broken events are in the namespace's feed; bad parameters are
// problems naming the field.
func TestLinkcheckRoutes(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "LCA", "custom_ids": true})
	b := e.snaa(map[string]any{"namespace": "LCB"})
	for i := 0; i < 6; i++ {
		e.want(e.do("PUT", fmt.Sprintf("/pid/v2?customid=id-%d", i), a.Key.Secret, validPayload()), 201)
	}
	e.want(e.do("PUT", "/pid/v2/handles/21.12345/LCB/", b.Key.Secret, validPayload()), 201)
	states := []string{registry.LinkBroken, registry.LinkOK, registry.LinkBroken, registry.LinkFailing, registry.LinkRecovering, registry.LinkBroken}
	for i, st := range states {
		e.putLinkResult("LCA", fmt.Sprintf("ID-%d", i), fmt.Sprintf("https://a.example.org/%d", i), st)
	}
	e.putLinkResult("LCA", "ID-0", "https://a.example.org/variant-0", registry.LinkOK)
	e.putLinkResult("LCB", "OTHER", "https://b.example.org/x", registry.LinkBroken)

	base := "/pid/v2/handles/21.12345/LCA/linkcheck"
	list := func(key, query string) linkcheck.Page {
		t.Helper()
		var p linkcheck.Page
		e.want(e.do("GET", base+query, key, nil), 200).json(t, &p)
		return p
	}
	urls := func(p linkcheck.Page) []string {
		var out []string
		for _, r := range p.Targets {
			out = append(out, r.URL)
		}
		return out
	}
	for _, c := range []struct {
		query string
		want  []int
	}{
		{"", []int{0, 2, 4, 5}},
		{"?state=broken", []int{0, 2, 5}},
		{"?state=failing", []int{3}},
		{"?state=recovering", []int{4}},
		{"?state=all", []int{0, 2, 3, 4, 5}},
	} {
		var want []string
		for _, i := range c.want {
			want = append(want, fmt.Sprintf("https://a.example.org/%d", i))
		}
		if got := urls(list(a.Key.Secret, c.query)); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("GET linkcheck%s = %v, want %v", c.query, got, want)
		}
	}
	// Paging: two at a time, through every page.
	var paged []string
	cur := ""
	for n := 0; ; n++ {
		q := "?state=all&limit=2"
		if cur != "" {
			q += "&cursor=" + url.QueryEscape(cur)
		}
		p := list(a.Key.Secret, q)
		paged = append(paged, urls(p)...)
		if cur = p.NextCursor; cur == "" {
			break
		}
		if n > 5 {
			t.Fatal("paging does not end")
		}
	}
	if len(paged) != 5 || paged[0] != "https://a.example.org/0" || paged[4] != "https://a.example.org/5" {
		t.Errorf("paged listing: %v", paged)
	}
	// CSV.
	r := e.want(e.do("GET", base+"?limit=3", a.Key.Secret, nil, "Accept", "text/csv"), 200)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Errorf("Content-Type %q", ct)
	}
	rows, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil {
		t.Fatalf("CSV: %v\n%s", err, r.Body)
	}
	if len(rows) != 4 || strings.Join(rows[0], ",") != "handle,url,kind,state,status,error,final_url,checked,since,first_failure,failures" || rows[1][1] != "https://a.example.org/0" || rows[1][3] != "broken" || rows[1][4] != "404" {
		t.Errorf("CSV rows: %q", rows)
	}
	if l := r.Header.Get("Link"); !strings.Contains(l, `rel="next"`) || !strings.Contains(l, "cursor=") {
		t.Errorf("CSV Link header %q, want the next page", l)
	}
	// One identifier.
	var one linkcheck.Record
	e.want(e.do("GET", "/pid/v2/handles/21.12345/LCA/id-0/linkcheck", a.Key.Secret, nil), 200).json(t, &one)
	if len(one.Results) != 2 || !strings.EqualFold(one.Handle, "21.12345/SVC/LCA/ID-0") {
		t.Errorf("one identifier's results: %+v", one)
	}
	e.want(e.do("GET", "/pid/v2/handles/21.12345/LCA/no-such/linkcheck", a.Key.Secret, nil), 404).problem(t)
	// Another SNAA: its own only; not A's.
	e.want(e.do("GET", base, b.Key.Secret, nil), 403).problem(t)
	e.want(e.do("GET", "/pid/v2/handles/21.12345/LCA/id-0/linkcheck", b.Key.Secret, nil), 403).problem(t)
	var pb linkcheck.Page
	e.want(e.do("GET", "/pid/v2/handles/21.12345/LCB/linkcheck", b.Key.Secret, nil), 200).json(t, &pb)
	if len(pb.Targets) != 1 || pb.Targets[0].URL != "https://b.example.org/x" {
		t.Errorf("B's listing: %+v", pb)
	}
	// Bad parameters.
	for _, q := range []string{"?state=gone", "?state=broken&state=failing", "?limit=0", "?cursor=!!"} {
		p := e.want(e.do("GET", base+q, a.Key.Secret, nil), 400).problem(t)
		if strings.HasPrefix(q, "?state") && (len(p.Errors) != 1 || p.Errors[0].Field != "state") {
			t.Errorf("GET linkcheck%s: problem %+v, want one naming state", q, p)
		}
	}
	// The feed shows the broken events, with the check.
	pa := e.feedPage(a.Key.Secret, "LCA", 0, 1000)
	var broken int
	for _, ev := range pa.Events {
		if ev.Action == registry.ActLinkBroken {
			broken++
			if ev.After == nil || ev.After.Linkcheck == nil || ev.After.Linkcheck.State != "broken" || ev.After.Linkcheck.Status != 404 || ev.After.URL == "" {
				t.Errorf("broken event %+v", ev)
			}
		}
	}
	if broken != 3 {
		t.Errorf("A's feed holds %d broken events, want 3", broken)
	}
	// The reserved id.
	if r := e.do("PUT", "/pid/v2?customid=x/linkcheck", a.Key.Secret, validPayload()); r.Status == 201 {
		t.Error("a custom id ending in /linkcheck was created")
	}
}

// TestConsoleLinks: the console's link check page shows the namespace's
// broken and recovering URLs, escaped, and not another namespace's.
func TestConsoleLinks(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "LCC", "custom_ids": true})
	b := e.snaa(map[string]any{"namespace": "LCD"})
	e.want(e.do("PUT", "/pid/v2?customid=c-1", a.Key.Secret, validPayload()), 201)
	e.want(e.do("PUT", "/pid/v2/handles/21.12345/LCD/", b.Key.Secret, validPayload()), 201)
	e.putLinkResult("LCC", "C-1", "https://a.example.org/<script>alert(1)</script>", registry.LinkBroken)
	e.putLinkResult("LCD", "OTHER", "https://b.example.org/other-namespace", registry.LinkBroken)
	br := e.browser()
	br.signIn(a.Key.Secret)
	p := br.get("/console/links")
	wantPage(t, p, 200, "Link checks", "broken", "404")
	checkEscaped(t, p, "<script>alert(1)</script>")
	if strings.Contains(p.Body, "other-namespace") {
		t.Error("the console shows another namespace's link check")
	}
	wantPage(t, br.get("/console/links?state=failing"), 200, "No URLs in this state")
	wantPage(t, br.get("/console/links?state=nonsense"), 400)
}

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestLinkcheckGolden: the listing's JSON and CSV bytes
// (docs/architecture.md practice 10): testdata/linkcheck.json and .csv,
// rewritten with -update.
func TestLinkcheckGolden(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "GLD", "custom_ids": true})
	for i, st := range []string{registry.LinkBroken, registry.LinkRecovering, registry.LinkFailing} {
		e.want(e.do("PUT", fmt.Sprintf("/pid/v2?customid=g-%d", i), a.Key.Secret, validPayload()), 201)
		e.putLinkResult("GLD", fmt.Sprintf("G-%d", i), fmt.Sprintf("https://g.example.org/%d?a=1,b=\"2\"", i), st)
	}
	base := "/pid/v2/handles/21.12345/GLD/linkcheck?state=all"
	for _, c := range []struct{ file, accept string }{{"linkcheck.json", "application/json"}, {"linkcheck.csv", "text/csv"}} {
		got := e.want(e.do("GET", base, a.Key.Secret, nil, "Accept", c.accept), 200).Body
		path := filepath.Join("testdata", c.file)
		if *updateGolden {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./admin -run TestLinkcheckGolden -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s:\n%s", c.accept, path, got)
		}
	}
}
