package admin

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"pidnode/handlev"
	"pidnode/store"
	"pidnode/write"
)

// search lists the namespace with the given query and returns the handles of
// every page (following next_cursor with the given limit).
func (e *env) search(key, coll, rawQuery string, limit int) []string {
	e.t.Helper()
	var out []string
	cursor := ""
	for pages := 0; ; pages++ {
		q := rawQuery + fmt.Sprintf("&limit=%d", limit)
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		var page struct {
			Items      []Identifier
			NextCursor string `json:"next_cursor"`
		}
		r := e.want(e.do("GET", coll+"?"+q, key, nil), 200)
		r.json(e.t, &page)
		for _, it := range page.Items {
			out = append(out, it.Handle)
		}
		if page.NextCursor == "" || pages > 100 {
			break
		}
		cursor = page.NextCursor
	}
	slices.Sort(out)
	return out
}

func TestSearchByURLFollowsUpdates(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "SRCH", "custom_ids": true})
	other := e.snaa(map[string]any{"namespace": "OTHR"})
	coll := "/pid/v2/handles/21.12345/SRCH/"
	create := func(key, coll, id, u string) string {
		t.Helper()
		p := validPayload()
		p["url"] = u
		var ident Identifier
		if id == "" {
			e.want(e.do("PUT", coll, key, p), 201).json(t, &ident)
		} else {
			e.want(e.do("PUT", coll+id, key, p, "If-None-Match", "*"), 201).json(t, &ident)
		}
		return ident.Handle
	}
	h1 := create(a.Key.Secret, coll, "one", "https://lab.example.org/a/1")
	h2 := create(a.Key.Secret, coll, "two", "https://lab.example.org/a/2")
	h3 := create(a.Key.Secret, coll, "three", "https://lab.example.org/b/3")
	// Same URL in another namespace: never visible to SRCH.
	create(other.Key.Secret, "/pid/v2/handles/21.12345/OTHR/", "", "https://lab.example.org/a/1")

	cases := []struct {
		name, query string
		want        []string
	}{
		{"exact", "url=" + url.QueryEscape("https://lab.example.org/a/1"), []string{h1}},
		{"exact is not a prefix", "url=" + url.QueryEscape("https://lab.example.org/a/"), nil},
		{"prefix", "url=" + url.QueryEscape("https://lab.example.org/a/*"), []string{h1, h2}},
		{"prefix of all", "url=" + url.QueryEscape("https://lab.example.org/*"), []string{h1, h2, h3}},
		{"no match", "url=" + url.QueryEscape("https://elsewhere.example.org/*"), nil},
		{"status and url", "status=REGISTERED&url=" + url.QueryEscape("https://lab.example.org/b/*"), []string{h3}},
	}
	check := func(stage string) {
		t.Helper()
		for _, c := range cases {
			want := slices.Clone(c.want)
			slices.Sort(want)
			for _, limit := range []int{1, 100} {
				if got := e.search(a.Key.Secret, coll, c.query, limit); !slices.Equal(got, want) {
					t.Errorf("%s: %s (limit %d) = %v, want %v", stage, c.name, limit, got, want)
				}
			}
		}
	}
	check("after create")
	e.conform("IdentifierList", e.want(e.do("GET", coll+"?limit=1&url="+url.QueryEscape("https://lab.example.org/*"), a.Key.Secret, nil), 200).Body)

	// Move /a/1 from one to three, and three's old URL to two: the index follows.
	e.want(e.do("PUT", coll+"one", a.Key.Secret, map[string]any{"url": "https://lab.example.org/c/1"}), 200)
	e.want(e.do("PUT", coll+"three", a.Key.Secret, map[string]any{"url": "https://lab.example.org/a/1"}), 200)
	e.want(e.do("PUT", coll+"two", a.Key.Secret, map[string]any{"url": "https://lab.example.org/b/3"}), 200)
	cases = cases[:0]
	cases = append(cases,
		struct {
			name, query string
			want        []string
		}{"moved exact", "url=" + url.QueryEscape("https://lab.example.org/a/1"), []string{h3}},
		struct {
			name, query string
			want        []string
		}{"old url of two gone", "url=" + url.QueryEscape("https://lab.example.org/a/2"), nil},
		struct {
			name, query string
			want        []string
		}{"b prefix", "url=" + url.QueryEscape("https://lab.example.org/b/*"), []string{h2}},
		struct {
			name, query string
			want        []string
		}{"c exact", "url=" + url.QueryEscape("https://lab.example.org/c/1"), []string{h1}},
	)
	// A bulk update moves URLs too.
	e.want(e.do("POST", coll+"bulk", a.Key.Secret, []any{
		map[string]any{"id": "one", "url": "https://lab.example.org/d/1"},
	}), 200)
	cases[3].query, cases[3].name = "url="+url.QueryEscape("https://lab.example.org/d/*"), "bulk-moved prefix"
	check("after moves")

	// The index holds exactly one entry per record of the two namespaces.
	var n int
	e.db.View(func(tx *store.Tx) error {
		n = tx.Bolt().Bucket(store.BucketURLIndex).Stats().KeyN
		return nil
	})
	if n != 4+1 { // 4 records + the built marker
		t.Errorf("URL index holds %d keys, want 5", n)
	}

	// A cursor from another range is refused.
	e.want(e.do("GET", coll+"?url=x&cursor=QUJD", a.Key.Secret, nil), 400)
}

// TestReindexURLs: a record written without the API (import) is found after a
// rebuild, and the rebuild reproduces what the writes maintained.
func TestReindexURLs(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "IMP"})
	coll := "/pid/v2/handles/21.12345/IMP/"
	e.want(e.do("PUT", coll, a.Key.Secret, validPayload()), 201)
	key, _, _ := e.namer.Key("21.12345/svc/IMP/IMPORTED1")
	err := e.db.Update(func(tx *store.Tx) error {
		return tx.PutRecord(key, &store.Stored{Version: 1, Record: handlev.Record{Handle: "21.12345/svc/IMP/IMPORTED1",
			Values: []handlev.Value{{Index: 1, Type: handlev.TypeURL, Data: []byte("https://imported.example.org/x"), TTL: 86400}}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	q := "url=" + url.QueryEscape("https://imported.example.org/*")
	if got := e.search(a.Key.Secret, coll, q, 10); len(got) != 0 {
		t.Fatalf("before reindex: %v", got)
	}
	n, err := write.Reindex(e.db, e.namer, nil)
	if err != nil || n != 2 {
		t.Fatalf("write.Reindex = %d, %v; want 2 entries", n, err)
	}
	if got := e.search(a.Key.Secret, coll, q, 10); !slices.Equal(got, []string{"21.12345/svc/IMP/IMPORTED1"}) {
		t.Fatalf("after reindex: %v", got)
	}
	if got := e.search(a.Key.Secret, coll, "url="+url.QueryEscape("https://landing.example.org/item/42"), 10); len(got) != 1 {
		t.Fatalf("API-written record after reindex: %v", got)
	}
	// The rebuild files the imported record in the search index too: its
	// words, and the namespace's total.
	var page struct {
		Items []Identifier
		Total int
	}
	e.want(e.do("GET", coll+"?q=imported+example", a.Key.Secret, nil), 200).json(t, &page)
	if len(page.Items) != 1 || page.Items[0].Handle != "21.12345/svc/IMP/IMPORTED1" || page.Total != 1 {
		t.Fatalf("search q=imported after reindex: %+v", page)
	}
	e.want(e.do("GET", coll+"?page=1", a.Key.Secret, nil), 200).json(t, &page)
	if page.Total != 2 {
		t.Fatalf("total after reindex = %d, want 2", page.Total)
	}
}

func TestHistoryFromAuditLog(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "HIST", "custom_ids": true})
	var second IssuedKey
	e.want(e.do("POST", "/ops/v1/snaas/"+a.SNAA.ID+"/keys", testOpKey, map[string]any{"name": "ci-robot"}), 201).json(t, &second)
	coll := "/pid/v2/handles/21.12345/HIST/"
	e.want(e.do("PUT", coll+"h1", a.Key.Secret, validPayload(), "If-None-Match", "*"), 201)
	e.want(e.do("PUT", coll+"h2", a.Key.Secret, validPayload(), "If-None-Match", "*"), 201) // not in h1's history
	e.want(e.do("PUT", coll+"h1", second.Secret, map[string]any{"url": "https://landing.example.org/moved"}), 200)
	e.want(e.do("PUT", coll+"h1", a.Key.Secret, map[string]any{"metadata": map[string]any{"status": "DEPRECATED"}}), 200)

	r := e.want(e.do("GET", coll+"h1/history", a.Key.Secret, nil), 200)
	e.conform("History", r.Body)
	var h struct {
		Handle  string
		Version int
		Changes []HistoryEntry
	}
	r.json(t, &h)
	if h.Handle != "21.12345/svc/HIST/H1" || h.Version != 3 || len(h.Changes) != 3 {
		t.Fatalf("history %s", r.Body)
	}
	type row struct{ action, key, before, after string }
	var got []row
	for _, c := range h.Changes {
		if c.Time.IsZero() || time.Since(c.Time) > time.Minute {
			t.Errorf("change %d: time %v", c.Seq, c.Time)
		}
		u := func(x any) string {
			m, _ := x.(map[string]any)
			s, _ := m["url"].(string)
			return s
		}
		got = append(got, row{c.Action, c.KeyName, u(c.Before), u(c.After)})
	}
	want := []row{
		{ActHandleCreate, "initial", "", "https://landing.example.org/item/42"},
		{ActHandleUpdate, "ci-robot", "https://landing.example.org/item/42", "https://landing.example.org/moved"},
		{ActHandleUpdate, "initial", "https://landing.example.org/moved", "https://landing.example.org/moved"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("history rows\n got %v\nwant %v", got, want)
	}
	last := h.Changes[2]
	if st := last.Before.(map[string]any)["metadata"].(map[string]any)["status"]; st != "REGISTERED" {
		t.Errorf("before.status = %v", st)
	}
	if st := last.After.(map[string]any)["metadata"].(map[string]any)["status"]; st != "DEPRECATED" {
		t.Errorf("after.status = %v", st)
	}
	// The audit log listing is unaffected by the per-record index entries.
	var al struct{ Entries []AuditEntry }
	e.want(e.do("GET", "/ops/v1/audit?after=0&limit=1000", testOpKey, nil), 200).json(t, &al)
	for i, en := range al.Entries {
		if en.Seq != uint64(i+1) {
			t.Fatalf("audit entry %d has seq %d", i, en.Seq)
		}
	}
	if len(al.Entries) < 7 || !strings.HasPrefix(al.Entries[len(al.Entries)-1].Action, "handle.") {
		t.Errorf("audit log: %d entries", len(al.Entries))
	}
}

// committedTx returns the id of the last committed write transaction.
// committedTx counts the commits so far, less the store's own freelist
// checkpoints (one may fall between two counts of a test).
func (e *env) committedTx() int {
	e.t.Helper()
	var id int
	e.db.View(func(tx *store.Tx) error { id = tx.Bolt().ID(); return nil })
	return id - int(e.db.FreelistSyncs())
}

// TestBulkOneTransaction: 1000 items are one commit; a bulk with invalid items
// writes exactly the valid ones.
func TestBulkOneTransaction(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.LastUsedInterval = time.Hour })
	a := e.snaa(map[string]any{"namespace": "ONE", "custom_ids": true})
	coll := "/pid/v2/handles/21.12345/ONE/"
	// The first request of a key writes its last-used time (asynchronously);
	// let that happen before counting commits.
	e.want(e.do("GET", "/pid/v2/me", a.Key.Secret, nil), 200)
	if err := e.srv.keys.Flush(); err != nil {
		t.Fatal(err)
	}
	items := make([]any, MaxBulkItems)
	for i := range items {
		p := validPayload()
		p["id"] = fmt.Sprintf("item-%04d", i)
		p["url"] = fmt.Sprintf("https://landing.example.org/bulk/%d", i)
		items[i] = p
	}
	before, records := e.committedTx(), e.recordCount()
	r := e.want(e.do("POST", coll+"bulk", a.Key.Secret, items), 200)
	if got := e.committedTx() - before; got != 1 {
		t.Errorf("bulk of %d items took %d commits, want 1", len(items), got)
	}
	var out struct{ Items []BulkResult }
	r.json(t, &out)
	for i, it := range out.Items {
		if it.Status != 201 {
			t.Fatalf("item %d: %+v", i, it)
		}
	}
	if n := e.recordCount() - records; n != MaxBulkItems {
		t.Errorf("%d records written, want %d", n, MaxBulkItems)
	}

	// Mixed: every third item invalid; exactly the others are written, in one commit.
	mixed := make([]any, 30)
	var valid []string
	for i := range mixed {
		p := validPayload()
		p["id"] = fmt.Sprintf("mixed-%02d", i)
		if i%3 == 0 {
			p["url"] = "ftp://not-allowed.example.org/"
		} else {
			valid = append(valid, fmt.Sprintf("21.12345/svc/ONE/MIXED-%02d", i))
		}
		mixed[i] = p
	}
	before, records = e.committedTx(), e.recordCount()
	r = e.want(e.do("POST", coll+"bulk", a.Key.Secret, mixed), 200)
	if got := e.committedTx() - before; got != 1 {
		t.Errorf("mixed bulk took %d commits, want 1", got)
	}
	r.json(t, &out)
	var written []string
	for i, it := range out.Items {
		if (i%3 == 0) != (it.Status == 422) {
			t.Errorf("item %d: status %d", i, it.Status)
		}
		if it.Status == 201 {
			written = append(written, it.Handle)
		}
	}
	if !slices.Equal(written, valid) || e.recordCount()-records != len(valid) {
		t.Errorf("written %v (%d new records), want %v", written, e.recordCount()-records, valid)
	}
	for i := 0; i < 30; i += 3 {
		e.want(e.do("GET", coll+fmt.Sprintf("mixed-%02d", i), a.Key.Secret, nil), 404)
	}
}

// TestApproveIndexesImportedNamespace: records imported into a namespace no
// SNAA owns are not indexed (nobody can search them) until the SNAA owning
// it is approved; then they are found by URL.
func TestApproveIndexesImportedNamespace(t *testing.T) {
	e := newEnv(t)
	for i, h := range []string{"21.12345/svc/LATE/A1", "21.T12345/svc/LATE/B1"} {
		key, _, _ := e.namer.Key(h)
		err := e.db.Update(func(tx *store.Tx) error {
			return tx.PutRecord(key, &store.Stored{Version: 1, Record: handlev.Record{Handle: h,
				Values: []handlev.Value{{Index: 1, Type: handlev.TypeURL, Data: []byte(fmt.Sprintf("https://old.example.org/%d", i)), TTL: 86400}}}})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n, err := write.Reindex(e.db, e.namer, nil); err != nil || n != 0 {
		t.Fatalf("write.Reindex = %d, %v; want 0 (no SNAA owns LATE)", n, err)
	}
	a := e.snaa(map[string]any{"namespace": "LATE", "prefixes": []string{"21.12345", "21.T12345"}})
	q := "url=" + url.QueryEscape("https://old.example.org/*")
	if got := e.search(a.Key.Secret, "/pid/v2/handles/21.12345/LATE/", q, 10); !slices.Equal(got, []string{"21.12345/svc/LATE/A1"}) {
		t.Errorf("production prefix after approval: %v", got)
	}
	if got := e.search(a.Key.Secret, "/testpid/v2/handles/21.T12345/LATE/", q, 10); !slices.Equal(got, []string{"21.T12345/svc/LATE/B1"}) {
		t.Errorf("test prefix after approval: %v", got)
	}
}
