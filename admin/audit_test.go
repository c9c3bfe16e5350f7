package admin

import (
	"strings"
	"testing"
	"time"
)

// TestAuditPages: GET /ops/v1/audit pages newest first with a next link,
// filters by SNAA, action and date, refuses a malformed filter in words,
// and with after still follows the log oldest first.
func TestAuditPages(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "AUDA"})
	b := e.snaa(map[string]any{"namespace": "AUDB"})
	e.want(e.do("POST", "/pid/v2/keys", a.Key.Secret, map[string]string{"name": "second"}), 201)
	e.want(e.do("POST", "/pid/v2/keys", b.Key.Secret, map[string]string{"name": "second"}), 201)

	type page struct {
		Entries []AuditEntry
		Next    string
	}
	var all page
	e.want(e.do("GET", "/ops/v1/audit?after=0&limit=1000", testOpKey, nil), 200).json(t, &all)
	n := len(all.Entries)
	if n < 6 {
		t.Fatalf("%d audit entries, want at least 6", n)
	}
	var p page
	e.want(e.do("GET", "/ops/v1/audit?limit=2", testOpKey, nil), 200).json(t, &p)
	if len(p.Entries) != 2 || p.Entries[0].Seq != all.Entries[n-1].Seq || p.Entries[1].Seq != all.Entries[n-2].Seq || p.Next == "" {
		t.Fatalf("first page %+v, want the two newest of %d and a next", p, n)
	}
	seen := 2
	for next := p.Next; next != ""; {
		var q page
		e.want(e.do("GET", "/ops/v1/audit?limit=2&before="+next, testOpKey, nil), 200).json(t, &q)
		for _, en := range q.Entries {
			if want := all.Entries[n-1-seen].Seq; en.Seq != want {
				t.Fatalf("entry %d of the pages has seq %d, want %d", seen, en.Seq, want)
			}
			seen++
		}
		next = q.Next
	}
	if seen != n {
		t.Errorf("the pages hold %d entries, the log %d", seen, n)
	}

	var f page
	e.want(e.do("GET", "/ops/v1/audit?snaa="+a.SNAA.ID, testOpKey, nil), 200).json(t, &f)
	var actions []string
	for _, en := range f.Entries {
		if strings.Contains(en.Actor+en.Target, b.SNAA.ID) {
			t.Errorf("the filter by %s keeps %+v", a.SNAA.ID, en)
		}
		actions = append(actions, en.Action)
	}
	if got := strings.Join(actions, " "); got != "key.issue key.issue snaa.create application.approve" {
		t.Errorf("entries about %s: %s", a.SNAA.ID, got)
	}
	e.want(e.do("GET", "/ops/v1/audit?action=key.", testOpKey, nil), 200).json(t, &f)
	if len(f.Entries) != 4 {
		t.Errorf("action=key. kept %d entries, want 4", len(f.Entries))
	}
	today := time.Now().UTC().Format(time.DateOnly)
	e.want(e.do("GET", "/ops/v1/audit?action=key.issue&from="+today+"&to="+today, testOpKey, nil), 200).json(t, &f)
	if len(f.Entries) != 4 {
		t.Errorf("key.issue today: %d entries, want 4", len(f.Entries))
	}
	e.want(e.do("GET", "/ops/v1/audit?to=2001-01-01", testOpKey, nil), 200).json(t, &f)
	if len(f.Entries) != 0 || f.Next != "" {
		t.Errorf("entries before 2001: %+v", f)
	}
	pr := e.want(e.do("GET", "/ops/v1/audit?from=yesterday", testOpKey, nil), 400).problem(t)
	if !strings.Contains(pr.Detail, "from must be a date such as") {
		t.Errorf("a malformed from: %q", pr.Detail)
	}
}
