package admin

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"pidnode/handlev"
	"pidnode/model"
	"pidnode/store"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestWriteLifecycle(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 11, 9, 43, 14, 0, time.UTC)}
	e := newEnv(t, func(c *Config) { c.Now = clk.now })
	a := e.snaa(map[string]any{"namespace": "K7Q", "custom_ids": true})
	key := a.Key.Secret
	coll := "/pid/v2/handles/21.12345/K7Q/"

	// Create with a generated id.
	r := e.want(e.do("POST", coll, key, validPayload()), 201)
	e.conform("Identifier", r.Body)
	var id Identifier
	r.json(t, &id)
	if looks, ok := handlev.ValidGenerated([]byte("K7Q"), []byte(strings.ReplaceAll(id.ID, "-", ""))); !looks || !ok {
		t.Fatalf("generated id %s has no valid check character", id.ID)
	}
	if id.Handle != "21.12345/svc/K7Q/"+id.ID || r.Header.Get("ETag") != `"1"` || r.Header.Get("Location") != coll+id.ID {
		t.Fatalf("handle %s ETag %s Location %s", id.Handle, r.Header.Get("ETag"), r.Header.Get("Location"))
	}
	item := coll + id.ID
	key1 := "21.12345/SVC/K7Q/" + strings.ReplaceAll(id.ID, "-", "")

	// The record has the docs/product.md §3 layout.
	st, ok, err := e.db.Get(key1)
	if err != nil || !ok {
		t.Fatalf("record %s: %v %v", key1, ok, err)
	}
	var idx []int32
	for _, v := range st.Record.Values {
		idx = append(idx, v.Index)
		if v.TTL != 86400 || v.TTLType != handlev.TTLRelative || v.Perm != handlev.PermDefault || v.Timestamp != clk.now().Unix() {
			t.Errorf("value %d: ttl %d/%d perm %v ts %d", v.Index, v.TTLType, v.TTL, v.Perm, v.Timestamp)
		}
	}
	if fmt.Sprint(idx) != "[1 10 11 12 13 14 16 100]" {
		t.Errorf("indices %v, want [1 10 11 12 13 14 16 100]", idx)
	}
	adm, err := handlev.DecodeAdmin(st.Record.Values[7].Data)
	if err != nil || adm != (handlev.Admin{Mask: handlev.AdminAll, Handle: "21.12345/svc/K7Q/ADMIN", Index: 300}) {
		t.Errorf("HS_ADMIN %+v %v", adm, err)
	}
	if got := string(st.Record.Values[5].Data); got != `{"label":"Sample 42","description":"A catalyst sample","resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://landing.example.org/item/42.ttl","media_type":"text/turtle","encoding_format":"UTF-8","size":12345}]}` {
		t.Errorf("RESOURCE = %s", got)
	}
	var changes []model.ChangeEntry
	json.Unmarshal(st.Record.Values[6].Data, &changes)
	if len(changes) != 6 || changes[0].HasAgent.Role != "OWNER" || changes[0].HasAgent.Name != testApplication["organisation"] || changes[0].DatetimeLog != "2026-03-11T09:43:14Z" {
		t.Errorf("changes %+v", changes)
	}

	// Read: ETag, 304.
	e.want(e.do("GET", item, key, nil), 200)
	e.want(e.do("GET", item, key, nil, "If-None-Match", `"1"`), 304)
	// Lower case and without dashes reads the same record.
	e.want(e.do("GET", strings.ToLower(coll+strings.ReplaceAll(id.ID, "-", "")), key, nil), 200)

	// Update by merge: status changes, related added; other fields stay, timestamps of unchanged values kept.
	clk.add(time.Hour)
	upd := map[string]any{"metadata": map[string]any{"status": "OBSOLETED",
		"related_identifiers": []any{related("HandleIdentifier", "21.12345/K7Q/NEW", "https://hdl.handle.net/21.12345/K7Q/NEW")}}}
	e.conform("HandleUpdate", mustJSON(t, upd))
	r = e.want(e.do("PUT", item, key, upd, "If-Match", `"1"`), 200)
	e.conform("Identifier", r.Body)
	var id2 Identifier
	r.json(t, &id2)
	if id2.Version != 2 || id2.Metadata["status"] != "OBSOLETED" || id2.Metadata["curation_contact"] != "pids@example.org" || r.Header.Get("ETag") != `"2"` {
		t.Errorf("after update: %s", r.Body)
	}
	st, _, _ = e.db.Get(key1)
	for _, v := range st.Record.Values {
		changed := v.Index == 11 || v.Index == 15 || v.Index == 16
		if want := clk.now().Unix(); changed != (v.Timestamp == want) {
			t.Errorf("value %d timestamp %d (changed=%v)", v.Index, v.Timestamp, changed)
		}
	}
	changes = nil
	json.Unmarshal(valueAt(st.Record, 16), &changes)
	if len(changes) != 8 || changes[6].ChangedField != "STATUS" || changes[6].Description != "status changed from REGISTERED to OBSOLETED" || changes[7].ChangedField != "RELATED_IDS" {
		t.Errorf("changes after update: %+v", changes[6:])
	}
	// History shows the change log.
	r = e.want(e.do("GET", item+"/history", key, nil), 200)
	e.conform("History", r.Body)

	// Stale If-Match → 412, nothing written.
	e.want(e.do("PUT", item, key, map[string]any{"url": "https://other.example.org/"}, "If-Match", `"1"`), 412).problem(t)
	// null removes an optional field; null on a required one is 422.
	r = e.want(e.do("PUT", item, key, map[string]any{"metadata": map[string]any{"related_identifiers": nil}}), 200)
	id2 = Identifier{}
	r.json(t, &id2)
	if _, ok := id2.Metadata["related_identifiers"]; ok || id2.Version != 3 {
		t.Errorf("related not removed: %s", r.Body)
	}
	e.want(e.do("PUT", item, key, map[string]any{"metadata": map[string]any{"resource_info": map[string]any{"resource_category": nil}}}), 422)
	// Nested merge: only the label changes.
	r = e.want(e.do("PUT", item, key, map[string]any{"metadata": map[string]any{"resource_info": map[string]any{"label": "New label"}}}), 200)
	r.json(t, &id2)
	ri := id2.Metadata["resource_info"].(map[string]any)
	if ri["label"] != "New label" || ri["resource_category"] != "SAMPLE" || id2.Version != 4 {
		t.Errorf("nested merge: %s", r.Body)
	}
	// A no-op update writes nothing.
	r = e.want(e.do("PUT", item, key, map[string]any{"url": "https://landing.example.org/item/42"}), 200)
	if r.Header.Get("ETag") != `"4"` {
		t.Errorf("no-op update bumped the version: %s", r.Header.Get("ETag"))
	}
	// Update of an unknown id → 404; DELETE → 405 with the policy.
	e.want(e.do("PUT", coll+"NOPE", key, map[string]any{"url": "https://e.org/"}), 404).problem(t)
	p := e.want(e.do("DELETE", item, key, nil), 405).problem(t)
	if !strings.Contains(p.Detail, "persistent") || !strings.Contains(p.Detail, "OBSOLETED") {
		t.Errorf("DELETE detail %q", p.Detail)
	}
	e.want(e.do("PATCH", item, key, nil), 405).problem(t)

	// Custom ids: ?customid=, then conflict; If-None-Match: * then 412.
	r = e.want(e.do("PUT", "/pid/v2?customid=sample/42.a", key, validPayload()), 201)
	r.json(t, &id2)
	if id2.Handle != "21.12345/svc/K7Q/SAMPLE/42.A" || r.Header.Get("Location") != coll+"SAMPLE/42.A" {
		t.Errorf("custom id: %s %s", id2.Handle, r.Header.Get("Location"))
	}
	e.want(e.do("PUT", "/pid/v2?customid=SAMPLE/42.A", key, validPayload()), 409).problem(t)
	e.want(e.do("GET", coll+"sample/42.a", key, nil), 200)
	e.want(e.do("PUT", coll+"batch-7", key, validPayload(), "If-None-Match", "*"), 201)
	e.want(e.do("PUT", coll+"batch-7", key, validPayload(), "If-None-Match", "*"), 412).problem(t)
	e.want(e.do("PUT", "/pid/v2?customid=a//b", key, validPayload()), 422).problem(t)
	e.want(e.do("PUT", "/pid/v2?customid=a/history", key, validPayload()), 422).problem(t)
	e.want(e.do("PUT", "/pid/v2?customid=bulk", key, validPayload()), 422).problem(t)
	e.want(e.do("PUT", "/pid/v2?customid=ABCD-EFGH-Z", key, validPayload()), 422).problem(t)

	// Listing with a filter and cursor paging.
	r = e.want(e.do("GET", coll+"?limit=2", key, nil), 200)
	e.conform("IdentifierList", r.Body)
	var page struct {
		Items      []Identifier
		NextCursor string `json:"next_cursor"`
	}
	r.json(t, &page)
	if len(page.Items) != 2 || page.NextCursor == "" {
		t.Fatalf("page 1: %s", r.Body)
	}
	r = e.want(e.do("GET", coll+"?limit=2&cursor="+page.NextCursor, key, nil), 200)
	page.Items, page.NextCursor = nil, ""
	r.json(t, &page)
	if len(page.Items) != 1 || page.NextCursor != "" {
		t.Errorf("page 2: %s", r.Body)
	}
	r = e.want(e.do("GET", coll+"?status=obsoleted", key, nil), 200)
	page.Items, page.NextCursor = nil, ""
	r.json(t, &page)
	if len(page.Items) != 1 || page.Items[0].ID != id.ID {
		t.Errorf("status filter: %s", r.Body)
	}

	// Every write is in the audit log with before and after.
	r = e.want(e.do("GET", "/ops/v1/audit?after=0&limit=1000", testOpKey, nil), 200)
	e.conform("AuditList", r.Body)
	var al struct{ Entries []AuditEntry }
	r.json(t, &al)
	var actions []string
	for _, en := range al.Entries {
		actions = append(actions, en.Action)
	}
	want := "application.submit application.approve snaa.create key.issue handle.create handle.update handle.update handle.update handle.create handle.create"
	if strings.Join(actions, " ") != want {
		t.Errorf("audit actions:\n%s\nwant\n%s", strings.Join(actions, " "), want)
	}
	if up := al.Entries[5]; up.Before == nil || up.After == nil || !strings.HasPrefix(up.Actor, "snaa:"+a.SNAA.ID) {
		t.Errorf("update audit entry %+v", up)
	}
}

func valueAt(r handlev.Record, idx int32) []byte {
	for _, v := range r.Values {
		if v.Index == idx {
			return v.Data
		}
	}
	return nil
}

func TestIdempotencyKey(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "IDM"})
	coll := "/testpid/v2/handles/21.T12345/IDM/"
	r1 := e.want(e.do("PUT", coll, a.Key.Secret, validPayload(), "Idempotency-Key", "req-1"), 201)
	r2 := e.want(e.do("PUT", coll, a.Key.Secret, validPayload(), "Idempotency-Key", "req-1"), 201)
	var i1, i2 Identifier
	r1.json(t, &i1)
	r2.json(t, &i2)
	if i1.Handle != i2.Handle || r2.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("retry gave %s, first %s", i2.Handle, i1.Handle)
	}
	if !strings.HasPrefix(i1.Handle, "21.T12345/svc/IDM/") {
		t.Errorf("test base wrote %s", i1.Handle)
	}
	other := validPayload()
	other["url"] = "https://other.example.org/"
	e.want(e.do("PUT", coll, a.Key.Secret, other, "Idempotency-Key", "req-1"), 422).problem(t)
	e.want(e.do("PUT", coll, a.Key.Secret, validPayload(), "Idempotency-Key", "req-2"), 201)
	if n := e.recordCount(); n != 2 {
		t.Errorf("records = %d, want 2", n)
	}
}

func TestReadYourWrites(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "RYW", "custom_ids": true})
	coll := "/pid/v2/handles/21.12345/RYW/"
	// A resolution before the create caches a negative entry (short and full form).
	for _, k := range []string{"21.12345/SVC/RYW/ITEM1", "21.12345/RYW/ITEM1"} {
		if en, err := e.cache.Get([]byte(k)); err != nil || en.Found {
			t.Fatalf("before create: %+v %v", en, err)
		}
	}
	e.want(e.do("PUT", coll+"item1", a.Key.Secret, validPayload(), "If-None-Match", "*"), 201)
	for _, k := range []string{"21.12345/SVC/RYW/ITEM1", "21.12345/RYW/ITEM1"} {
		en, err := e.cache.Get([]byte(k))
		if err != nil || !en.Found || en.Record.Status() != handlev.StatusRegistered {
			t.Fatalf("after create %s: %+v %v", k, en, err)
		}
	}
	e.want(e.do("PUT", coll+"item1", a.Key.Secret, map[string]any{"url": "https://moved.example.org/", "metadata": map[string]any{"status": "DEPRECATED"}}), 200)
	for _, k := range []string{"21.12345/SVC/RYW/ITEM1", "21.12345/RYW/ITEM1"} {
		en, _ := e.cache.Get([]byte(k))
		if en.Record.Status() != handlev.StatusDeprecated || string(valueAt(en.Record, 1)) != "https://moved.example.org/" {
			t.Errorf("after update %s: %+v", k, en.Record)
		}
	}
}

func TestConcurrentCreatesSurviveRestart(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "CON"})
	coll := "/pid/v2/handles/21.12345/CON/"
	const n = 200
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := e.do("POST", coll, a.Key.Secret, validPayload())
			if r.Status != 201 {
				errs <- fmt.Sprintf("create %d: %d %s", i, r.Status, r.Body)
				return
			}
			var id Identifier
			json.Unmarshal(r.Body, &id)
			ids[i] = id.ID
		}(i)
	}
	wg.Wait()
	close(errs)
	for m := range errs {
		t.Fatal(m)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
		if looks, ok := handlev.ValidGenerated([]byte("CON"), []byte(strings.ReplaceAll(id, "-", ""))); !looks || !ok {
			t.Errorf("id %s: bad check character", id)
		}
		e.want(e.do("GET", coll+id, a.Key.Secret, nil), 200)
	}
	// Close and reopen the store: every acknowledged write is there.
	e.ts.Close()
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(store.Config{Path: e.path})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, id := range ids {
		k, _, err := e.namer.Key(e.namer.Full("21.12345", "CON", id))
		if err != nil {
			t.Fatal(err)
		}
		if rec, ok, err := db.Load(k); err != nil || !ok || rec.Status() != handlev.StatusRegistered {
			t.Errorf("after reopen %s: %v %v", id, ok, err)
		}
	}
	_ = filepath.Base(e.path)
}

// TestListStatusChecked: a ?status= the model's status field cannot hold is
// a 400 naming the allowed values, not an empty page; case does not matter.
func TestListStatusChecked(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "LST"})
	coll := "/pid/v2/handles/" + testPrefix + "/LST/"
	e.want(e.do("POST", coll, a.Key.Secret, validPayload()), 201)
	var l struct{ Items []Identifier }
	e.want(e.do("GET", coll+"?status=registered", a.Key.Secret, nil), 200).json(t, &l)
	if len(l.Items) != 1 {
		t.Errorf("?status=registered listed %d identifiers, want 1", len(l.Items))
	}
	p := e.want(e.do("GET", coll+"?status=bogus", a.Key.Secret, nil), 400).problem(t)
	if len(p.Errors) != 1 || p.Errors[0].Field != "status" || !strings.Contains(p.Detail, "SUBMITTED, REGISTERED, OBSOLETED, DEPRECATED") {
		t.Errorf("?status=bogus: %+v", p)
	}
}
