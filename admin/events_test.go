package admin

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pidnode/webhook"
)

// nsAuditSeqs is the truth the feed is compared with: the sequence numbers
// of the audit log's identifier writes in namespace ns, read through the
// operator's audit route (the whole log).
func (e *env) nsAuditSeqs(ns string) []uint64 {
	e.t.Helper()
	var out []uint64
	var after uint64
	for {
		var page struct{ Entries []AuditEntry }
		e.want(e.do("GET", fmt.Sprintf("/ops/v1/audit?after=%d&limit=1000", after), testOpKey, nil), 200).json(e.t, &page)
		for _, en := range page.Entries {
			after = en.Seq
			if (en.Action == ActHandleCreate || en.Action == ActHandleUpdate) && strings.Contains(en.Target, "/"+ns+"/") {
				out = append(out, en.Seq)
			}
		}
		if len(page.Entries) < 1000 {
			return out
		}
	}
}

// feedPage reads one JSON page of ns's feed.
func (e *env) feedPage(key, ns string, after uint64, limit int) webhook.EventPage {
	e.t.Helper()
	var p webhook.EventPage
	e.want(e.do("GET", fmt.Sprintf("/pid/v2/handles/21.12345/%s/events?after=%d&limit=%d", ns, after, limit), key, nil), 200).json(e.t, &p)
	return p
}

// sameSeqs fails unless got is exactly want: same numbers, same order, no
// duplicate, no gap.
func sameSeqs(t *testing.T, what string, got, want []uint64) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %d seqs %v\nwant %d seqs %v", what, len(got), got, len(want), want)
	}
}

// TestEventsFeed: the feed shows the namespace's creates, updates and bulk
// items in sequence order with URL and status before and after, and nothing
// of another namespace or of the operator; JSON and JSON Lines page alike.
func TestEventsFeed(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "EVA", "custom_ids": true})
	b := e.snaa(map[string]any{"namespace": "EVB"})
	coll := "/pid/v2/handles/21.12345/EVA/"
	e.want(e.do("PUT", coll, a.Key.Secret, validPayload()), 201)
	e.want(e.do("POST", "/pid/v2/handles/21.12345/EVB/", b.Key.Secret, validPayload()), 201)
	var id Identifier
	e.want(e.do("PUT", "/pid/v2?customid=x-1", a.Key.Secret, validPayload()), 201).json(t, &id)
	e.want(e.do("POST", "/ops/v1/snaas/"+a.SNAA.ID+"/keys", testOpKey, map[string]any{"name": "second"}), 201)
	e.want(e.do("PUT", coll+"x-1", a.Key.Secret, map[string]any{"url": "https://moved.example.org/42", "metadata": map[string]any{"status": "DEPRECATED"}}), 200)
	bulk := string(mustJSON(t, map[string]any{"id": "x-1", "url": "https://again.example.org/42"})) + "\n" + string(mustJSON(t, validPayload())) + "\n"
	e.want(e.do("POST", coll+"bulk", a.Key.Secret, bulk, "Content-Type", "application/jsonl"), 200)
	e.want(e.do("POST", "/pid/v2/handles/21.12345/EVB/", b.Key.Secret, validPayload()), 201)

	p := e.feedPage(a.Key.Secret, "EVA", 0, 100)
	var got []uint64
	for _, ev := range p.Events {
		got = append(got, ev.Seq)
		if !strings.HasPrefix(ev.Handle, "21.12345/") || !strings.Contains(ev.Handle, "/EVA/") {
			t.Errorf("event of another namespace: %+v", ev)
		}
		if ev.KeyID != a.Key.ID || ev.KeyName == "" {
			t.Errorf("event %d: key %q %q, want id %s and a name", ev.Seq, ev.KeyID, ev.KeyName, a.Key.ID)
		}
	}
	sameSeqs(t, "EVA's feed", got, e.nsAuditSeqs("EVA"))
	if len(p.Events) != 5 || p.NextAfter != got[len(got)-1] {
		t.Fatalf("feed: %d events, next_after %d: %+v", len(p.Events), p.NextAfter, p)
	}
	want := []struct {
		action        string
		before, after *webhook.EventState
	}{
		{ActHandleCreate, nil, &webhook.EventState{URL: "https://landing.example.org/item/42", Status: "REGISTERED"}},
		{ActHandleCreate, nil, &webhook.EventState{URL: "https://landing.example.org/item/42", Status: "REGISTERED"}},
		{ActHandleUpdate, &webhook.EventState{URL: "https://landing.example.org/item/42", Status: "REGISTERED"}, &webhook.EventState{URL: "https://moved.example.org/42", Status: "DEPRECATED"}},
		{ActHandleUpdate, &webhook.EventState{URL: "https://moved.example.org/42", Status: "DEPRECATED"}, &webhook.EventState{URL: "https://again.example.org/42", Status: "DEPRECATED"}},
		{ActHandleCreate, nil, &webhook.EventState{URL: "https://landing.example.org/item/42", Status: "REGISTERED"}},
	}
	for i, w := range want {
		ev := p.Events[i]
		if ev.Action != w.action || fmt.Sprint(ev.Before) != fmt.Sprint(w.before) || fmt.Sprint(ev.After) != fmt.Sprint(w.after) ||
			(ev.Before == nil) != (w.before == nil) || ev.Time.IsZero() {
			t.Errorf("event %d: %s before %+v after %+v; want %s before %+v after %+v", i, ev.Action, ev.Before, ev.After, w.action, w.before, w.after)
		}
	}
	if p.Events[1].Handle != id.Handle || p.Events[2].Handle != id.Handle {
		t.Errorf("handles %q %q, want %q", p.Events[1].Handle, p.Events[2].Handle, id.Handle)
	}

	// Pages of 2 join up to the same feed; an empty page keeps the cursor.
	var paged []uint64
	for after := uint64(0); ; {
		pg := e.feedPage(a.Key.Secret, "EVA", after, 2)
		for _, ev := range pg.Events {
			paged = append(paged, ev.Seq)
		}
		if len(pg.Events) == 0 {
			if pg.NextAfter != after {
				t.Errorf("empty page: next_after %d, want %d", pg.NextAfter, after)
			}
			break
		}
		after = pg.NextAfter
	}
	sameSeqs(t, "paged by 2", paged, got)

	// JSON Lines: the same events, one per line, under the type asked for.
	for _, ct := range []string{"application/jsonl", "application/x-ndjson"} {
		r := e.want(e.do("GET", coll+"events?after="+strconv.FormatUint(got[0], 10), a.Key.Secret, nil, "Accept", ct+", application/json;q=0.5"), 200)
		if r.Header.Get("Content-Type") != ct {
			t.Errorf("Accept %s: Content-Type %q", ct, r.Header.Get("Content-Type"))
		}
		lines := strings.Split(strings.TrimSuffix(string(r.Body), "\n"), "\n")
		var ls []uint64
		for _, l := range lines {
			var ev webhook.Event
			if err := json.Unmarshal([]byte(l), &ev); err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			ls = append(ls, ev.Seq)
		}
		sameSeqs(t, ct, ls, got[1:])
	}
	// Last-Event-ID takes precedence over after (a reconnecting EventSource
	// sends its first URL again).
	var lp webhook.EventPage
	e.want(e.do("GET", coll+"events?after=0", a.Key.Secret, nil, "Last-Event-ID", strconv.FormatUint(got[2], 10)), 200).json(t, &lp)
	if len(lp.Events) != 2 || lp.Events[0].Seq != got[3] {
		t.Errorf("Last-Event-ID %d with after=0: %+v", got[2], lp)
	}
	// JSON Lines with nothing to say is an empty body.
	r := e.want(e.do("GET", coll+"events?after="+strconv.FormatUint(got[len(got)-1], 10), a.Key.Secret, nil, "Accept", "application/x-ndjson"), 200)
	if len(r.Body) != 0 {
		t.Errorf("empty JSON Lines page: %q", r.Body)
	}

	// The other SNAA sees its own two creates only, and not EVA's feed.
	pb := e.feedPage(b.Key.Secret, "EVB", 0, 100)
	var gb []uint64
	for _, ev := range pb.Events {
		gb = append(gb, ev.Seq)
	}
	sameSeqs(t, "EVB's feed", gb, e.nsAuditSeqs("EVB"))
	if len(gb) != 2 {
		t.Errorf("EVB's feed: %d events", len(gb))
	}
	e.want(e.do("GET", coll+"events", b.Key.Secret, nil), 403).problem(t)
	e.want(e.do("GET", coll+"events", testOpKey, nil), 403).problem(t)
	e.want(e.do("GET", coll+"events", "", nil), 401).problem(t)

	// "events" is a route, so no custom id may take it.
	e.want(e.do("PUT", "/pid/v2?customid=events", a.Key.Secret, validPayload()), 422)
	e.want(e.do("PUT", "/pid/v2?customid=EVENTS", a.Key.Secret, validPayload()), 422)
}

// TestEventsBadParameters: a bad cursor or limit is a 400 problem naming
// the parameter.
func TestEventsBadParameters(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "EVP"})
	path := "/pid/v2/handles/21.12345/EVP/events"
	for _, c := range []struct{ query, field string }{
		{"after=-1", "after"}, {"after=abc", "after"}, {"after=1.5", "after"}, {"after=", "after"}, {"after=+1", "after"},
		{"after=%201", "after"}, {"after=18446744073709551616", "after"}, {"after=1&after=2", "after"},
		{"limit=0", "limit"}, {"limit=1001", "limit"}, {"limit=x", "limit"}, {"limit=", "limit"}, {"limit=-5", "limit"},
		{"limit=1&limit=2", "limit"}, {"limit=+5", "limit"}, {"limit=99999999999999999999999", "limit"},
	} {
		r := e.want(e.do("GET", path+"?"+c.query, a.Key.Secret, nil), 400)
		p := r.problem(t)
		if len(p.Errors) != 1 || p.Errors[0].Field != c.field || !strings.Contains(p.Detail, c.field) {
			t.Errorf("?%s: %+v, want the problem to name %s", c.query, p, c.field)
		}
	}
	for _, lei := range []string{"x", "-1", "1 2", ""} {
		r := e.want(e.do("GET", path, a.Key.Secret, nil, "Last-Event-ID", lei, "Accept", "text/event-stream"), 400)
		if p := r.problem(t); len(p.Errors) != 1 || p.Errors[0].Field != "Last-Event-ID" {
			t.Errorf("Last-Event-ID %q: %+v", lei, p)
		}
	}
	// The largest cursor is valid and past every event.
	p := e.feedPage(a.Key.Secret, "EVP", 18446744073709551615, 1000)
	if len(p.Events) != 0 || p.NextAfter != 18446744073709551615 {
		t.Errorf("after=max: %+v", p)
	}
}

// TestEventsConcurrentPaging: while writers create identifiers, a reader
// pages through the feed with after=; once the writers are done and the
// reader has caught up, it has every event of the namespace exactly once, in
// order.
func TestEventsConcurrentPaging(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "EVC"})
	other := e.snaa(map[string]any{"namespace": "EVD"})
	const writers, each = 4, 15
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				key, ns := a.Key.Secret, "EVC"
				if i%3 == 2 {
					key, ns = other.Key.Secret, "EVD"
				}
				if r := e.do("POST", "/pid/v2/handles/21.12345/"+ns+"/", key, validPayload()); r.Status != 201 {
					t.Errorf("create: %d %s", r.Status, r.Body)
					return
				}
			}
		}(w)
	}
	go func() { wg.Wait(); close(done) }()
	var got []uint64
	var after uint64
	finished := false
	for {
		pg := e.feedPage(a.Key.Secret, "EVC", after, 3)
		for _, ev := range pg.Events {
			got = append(got, ev.Seq)
		}
		after = pg.NextAfter
		if len(pg.Events) > 0 {
			continue
		}
		if finished {
			break
		}
		select {
		case <-done:
			finished = true // one more round after the last write
		default:
		}
	}
	want := e.nsAuditSeqs("EVC")
	if len(want) != writers*(each-each/3) {
		t.Fatalf("%d writes in the audit log", len(want))
	}
	sameSeqs(t, "paged while writing", got, want)
}

// TestEventsAcrossRestart: a cursor taken before the node stops resumes
// after it starts again, with no gap and no duplicate.
func TestEventsAcrossRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pidnode.db")
	open := func() *env { return newEnvAt(t, path) }
	e := open()
	a := e.snaa(map[string]any{"namespace": "EVR"})
	for i := 0; i < 5; i++ {
		e.want(e.do("POST", "/pid/v2/handles/21.12345/EVR/", a.Key.Secret, validPayload()), 201)
	}
	var got []uint64
	pg := e.feedPage(a.Key.Secret, "EVR", 0, 3)
	for _, ev := range pg.Events {
		got = append(got, ev.Seq)
	}
	cursor := pg.NextAfter
	e.close()

	e = open()
	for i := 0; i < 4; i++ {
		e.want(e.do("POST", "/pid/v2/handles/21.12345/EVR/", a.Key.Secret, validPayload()), 201)
	}
	for {
		pg := e.feedPage(a.Key.Secret, "EVR", cursor, 3)
		if len(pg.Events) == 0 {
			break
		}
		for _, ev := range pg.Events {
			got = append(got, ev.Seq)
		}
		cursor = pg.NextAfter
	}
	want := e.nsAuditSeqs("EVR")
	if len(want) != 9 {
		t.Fatalf("%d writes in the audit log", len(want))
	}
	sameSeqs(t, "across a restart", got, want)
	e.close()
}

// sseEvent is one message of an event stream.
type sseEvent struct {
	id, event string
	data      webhook.Event
}

// sseClient reads an event stream.
type sseClient struct {
	res *http.Response
	rd  *bufio.Reader
	// beats counts heartbeat comment lines.
	beats int
}

func openStream(t *testing.T, base, path, key, lastID string) (*sseClient, *http.Response) {
	t.Helper()
	req, err := http.NewRequest("GET", base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		return nil, res
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	return &sseClient{res: res, rd: bufio.NewReader(res.Body)}, res
}

// next returns the next event; an error at the stream's end.
func (c *sseClient) next() (sseEvent, error) {
	var ev sseEvent
	have := false
	for {
		line, err := c.rd.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if have {
				return ev, nil
			}
		case strings.HasPrefix(line, ":"):
			c.beats++
		case strings.HasPrefix(line, "id: "):
			ev.id, have = line[4:], true
		case strings.HasPrefix(line, "event: "):
			ev.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(line[6:]), &ev.data); err != nil {
				return ev, fmt.Errorf("data %q: %w", line, err)
			}
		case strings.HasPrefix(line, "retry: "):
		default:
			return ev, fmt.Errorf("unexpected line %q", line)
		}
	}
}

func (c *sseClient) close() { c.res.Body.Close() }

// streamEnv is an admin server behind the real Listener (its timeouts, its
// drain), on loopback.
type streamEnv struct {
	*env
	l    *Listener
	base string
}

func newStreamEnv(t *testing.T, lc ListenerConfig, hooks ...func(*webhook.RoutesConfig)) *streamEnv {
	e := newEnvWith(t, filepath.Join(t.TempDir(), "pidnode.db"), hooks)
	lc.Handler = e.srv.Handler()
	l, err := NewListener(lc)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go l.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := l.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown with streams open: %v", err)
		}
	})
	return &streamEnv{env: e, l: l, base: "http://" + ln.Addr().String()}
}

// TestEventsStream: an SSE client receives the events of concurrent writers
// as they commit, outlives the listener's read and write timeouts (kept
// open by heartbeats), disconnects, reconnects with Last-Event-ID; the union
// of what it received is the namespace's audit log exactly.
func TestEventsStream(t *testing.T) {
	e := newStreamEnv(t, ListenerConfig{ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond},
		func(c *webhook.RoutesConfig) { c.EventHeartbeat = 50 * time.Millisecond })
	a := e.snaa(map[string]any{"namespace": "EVS"})
	other := e.snaa(map[string]any{"namespace": "EVT"})
	path := "/pid/v2/handles/21.12345/EVS/events?limit=2" // small reads: catching up takes several
	for i := 0; i < 5; i++ {
		e.want(e.do("POST", "/pid/v2/handles/21.12345/EVS/", a.Key.Secret, validPayload()), 201)
	}
	const writers, each = 3, 10
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			<-start
			for i := 0; i < each; i++ {
				key, ns := a.Key.Secret, "EVS"
				if i%2 == 1 {
					key, ns = other.Key.Secret, "EVT"
				}
				if r := e.do("POST", "/pid/v2/handles/21.12345/"+ns+"/", key, validPayload()); r.Status != 201 {
					t.Errorf("create: %d %s", r.Status, r.Body)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}(w)
	}
	var got []uint64
	c, res := openStream(t, e.base, path, a.Key.Secret, "")
	if c == nil {
		t.Fatalf("stream: %d", res.StatusCode)
	}
	close(start)
	last := ""
	// Disconnect after 7 events, in the middle of the writes.
	for len(got) < 7 {
		ev, err := c.next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.id != strconv.FormatUint(ev.data.Seq, 10) || ev.event != ev.data.Action || !strings.Contains(ev.data.Handle, "/EVS/") {
			t.Fatalf("event %+v", ev)
		}
		got = append(got, ev.data.Seq)
		last = ev.id
	}
	c.close()
	// Reconnect with Last-Event-ID (and the original ?after-less URL, as an
	// EventSource does).
	c, res = openStream(t, e.base, path, a.Key.Secret, last)
	if c == nil {
		t.Fatalf("reconnect: %d", res.StatusCode)
	}
	defer c.close()
	wg.Wait()
	want := e.nsAuditSeqs("EVS")
	if len(want) != 5+writers*each/2 {
		t.Fatalf("%d writes in the audit log", len(want))
	}
	for len(got) < len(want) {
		ev, err := c.next()
		if err != nil {
			t.Fatalf("after %d events: %v", len(got), err)
		}
		got = append(got, ev.data.Seq)
	}
	sameSeqs(t, "stream with a reconnection", got, want)

	// Idle past the listener's timeouts: the stream is kept open by its
	// heartbeats, and the next write still arrives.
	time.Sleep(time.Second)
	var id Identifier
	e.want(e.do("POST", "/pid/v2/handles/21.12345/EVS/", a.Key.Secret, validPayload()), 201).json(t, &id)
	ev, err := c.next()
	if err != nil {
		t.Fatalf("after an idle second: %v", err)
	}
	if ev.data.Handle != id.Handle || ev.data.Seq <= got[len(got)-1] {
		t.Errorf("after an idle second: %+v, want %s", ev, id.Handle)
	}
	if c.beats < 5 {
		t.Errorf("%d heartbeats in a second at one per 50ms", c.beats)
	}
}

// TestEventsStreamLimits: a key's streams beyond its share get 429, the
// node's beyond its limit 503; a revoked key's stream ends; draining the
// listener ends the open streams and refuses new ones.
func TestEventsStreamLimits(t *testing.T) {
	e := newStreamEnv(t, ListenerConfig{}, func(c *webhook.RoutesConfig) {
		c.EventStreamsPerKey, c.EventStreams, c.EventHeartbeat = 1, 2, 20*time.Millisecond
	})
	a := e.snaa(map[string]any{"namespace": "EVL"})
	b := e.snaa(map[string]any{"namespace": "EVM"})
	c := e.snaa(map[string]any{"namespace": "EVN"})
	pa, pb, pc := "/pid/v2/handles/21.12345/EVL/events", "/pid/v2/handles/21.12345/EVM/events", "/pid/v2/handles/21.12345/EVN/events"
	sa, _ := openStream(t, e.base, pa, a.Key.Secret, "")
	if sa == nil {
		t.Fatal("first stream refused")
	}
	problemOfRes := func(res *http.Response, status int) {
		t.Helper()
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		r := &resp{Status: res.StatusCode, Header: res.Header, Body: body}
		e.want(r, status)
		r.problem(t)
		if res.Header.Get("Retry-After") == "" {
			t.Errorf("%d without Retry-After", status)
		}
	}
	if s, res := openStream(t, e.base, pa, a.Key.Secret, ""); s == nil {
		problemOfRes(res, 429)
	} else {
		t.Fatal("second stream of one key accepted")
	}
	// Paging is not limited by the open stream.
	e.feedPage(a.Key.Secret, "EVL", 0, 10)
	sb, _ := openStream(t, e.base, pb, b.Key.Secret, "")
	if sb == nil {
		t.Fatal("second key's stream refused")
	}
	if s, res := openStream(t, e.base, pc, c.Key.Secret, ""); s == nil {
		problemOfRes(res, 503)
	} else {
		t.Fatal("third stream accepted over a limit of two")
	}

	// Revoking b's key ends its stream at the next heartbeat, freeing a slot.
	e.want(e.do("DELETE", "/ops/v1/snaas/"+b.SNAA.ID+"/keys/"+b.Key.ID, testOpKey, nil), 204)
	if _, err := sb.next(); err == nil {
		t.Fatal("a revoked key's stream sent an event")
	}
	sb.close()
	var sc *sseClient
	for i := 0; i < 100 && sc == nil; i++ {
		var res *http.Response
		if sc, res = openStream(t, e.base, pc, c.Key.Secret, ""); sc == nil {
			res.Body.Close()
			time.Sleep(10 * time.Millisecond) // the ended stream's slot is released as its handler returns
		}
	}
	if sc == nil {
		t.Fatal("no slot after a stream ended")
	}

	// Draining ends the open streams; new ones get 503.
	e.l.Drain()
	for _, s := range []*sseClient{sa, sc} {
		if _, err := s.next(); err == nil {
			t.Error("a stream sent an event after the drain")
		}
		s.close()
	}
	if s, res := openStream(t, e.base, pa, a.Key.Secret, ""); s == nil {
		problemOfRes(res, 503)
	} else {
		t.Fatal("stream accepted while draining")
	}
}
