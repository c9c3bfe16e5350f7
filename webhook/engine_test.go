package webhook_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pidnode/admin"
	"pidnode/handlev"
	"pidnode/model"
	"pidnode/registry"
	"pidnode/store"
	"pidnode/webhook"
)

const (
	prefix = "21.12345"
	opKey  = "operator-key-for-tests-0123456789"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// node is an admin API and a webhook engine over one database file.
type node struct {
	t      testing.TB
	path   string
	db     *store.DB
	srv    *admin.Server
	ts     *httptest.Server
	eng    *webhook.Engine
	cancel context.CancelFunc
	done   chan struct{}
	key    string // the SNAA's key
	ns     string
}

// startNode opens the database at path and starts the admin API and an
// engine configured by cfg (Registry and Event are filled in).
func startNode(t testing.TB, path string, cfg webhook.Config) *node {
	t.Helper()
	db, err := store.Open(store.Config{Path: path, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	namer, err := handlev.NewNamer(handlev.NamerConfig{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	mod, err := model.LoadModel(model.DefaultModel)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Config{DB: db, Namer: namer, URLIndex: mod.URL.Index})
	if err != nil {
		t.Fatal(err)
	}
	hooks, err := webhook.Routes(webhook.RoutesConfig{Registry: reg, Now: cfg.Now})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := admin.New(admin.Config{DB: db, Namer: namer, OperatorKey: opKey, Now: cfg.Now, Routes: hooks})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Registry, cfg.Event = reg, webhook.FeedEvent
	eng, err := webhook.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := &node{t: t, path: path, db: db, srv: srv, ts: httptest.NewServer(srv.Handler()), eng: eng, done: make(chan struct{})}
	var ctx context.Context
	ctx, n.cancel = context.WithCancel(context.Background())
	go func() {
		defer close(n.done)
		eng.Run(ctx)
	}()
	t.Cleanup(n.stop)
	return n
}

// stop stops the engine and closes the node; it may be called twice.
func (n *node) stop() {
	if n.db == nil {
		return
	}
	n.cancel()
	<-n.done
	n.ts.Close()
	n.srv.Close()
	n.db.Close()
	n.db = nil
}

func (n *node) do(method, path, key string, body any) (int, []byte) {
	n.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			n.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, n.ts.URL+path, rd)
	if err != nil {
		n.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		n.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func (n *node) must(status int, method, path, key string, body, out any) {
	n.t.Helper()
	st, b := n.do(method, path, key, body)
	if st != status {
		n.t.Fatalf("%s %s: %d %s, want %d", method, path, st, b, status)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			n.t.Fatal(err)
		}
	}
}

// onboard creates an SNAA and keeps its key and namespace.
func (n *node) onboard() {
	n.t.Helper()
	var app struct{ ID string }
	n.must(201, "POST", "/ops/v1/applications", opKey, map[string]any{
		"organisation":           "Test Lab",
		"technical_contact":      map[string]string{"name": "T", "email": "t@example.org"},
		"administrative_contact": map[string]string{"name": "A", "email": "a@example.org"},
		"policy_version":         "v1.0", "maintenance_statement": "kept",
	}, &app)
	var res admin.ApproveResult
	n.must(200, "POST", "/ops/v1/applications/"+app.ID+"/approve", opKey, map[string]any{}, &res)
	n.key, n.ns = res.Key.Secret, res.SNAA.Namespace
}

func (n *node) coll() string { return "/pid/v2/handles/" + prefix + "/" + n.ns + "/" }

// create writes an identifier and returns its handle.
func (n *node) create(i int) string {
	n.t.Helper()
	var out struct{ Handle string }
	n.must(201, "POST", n.coll(), n.key, map[string]any{
		"url": fmt.Sprintf("https://landing.example.org/item/%d", i),
		"metadata": map[string]any{"status": "REGISTERED", "schema_version": "v1.0.1", "metadata_license": "CC0-1.0",
			"curation_contact": "pids@example.org",
			"resource_info": map[string]any{"label": fmt.Sprintf("Item %d", i), "description": "d", "resource_category": "SAMPLE",
				"representation_variants": []any{map[string]any{"variant_url": fmt.Sprintf("https://landing.example.org/item/%d.ttl", i),
					"media_type": "text/turtle", "encoding_format": "UTF-8", "size": 100}}}},
	}, &out)
	return out.Handle
}

// register registers url for every kind from the namespace's current end
// and returns the endpoint (with its secret).
func (n *node) register(url string) webhook.View {
	n.t.Helper()
	var w webhook.View
	n.must(201, "POST", n.coll()+"webhooks", n.key, map[string]any{"url": url}, &w)
	return w
}

func (n *node) webhook(id string) webhook.View {
	n.t.Helper()
	var w webhook.View
	n.must(200, "GET", n.coll()+"webhooks/"+id, n.key, nil, &w)
	return w
}

func (n *node) deliveries(id string) []webhook.Delivery {
	n.t.Helper()
	var d webhook.Deliveries
	n.must(200, "GET", n.coll()+"webhooks/"+id+"/deliveries", n.key, nil, &d)
	return d.Deliveries
}

// feedSeqs is the namespace's feed after after: the truth deliveries are
// compared with.
func (n *node) feedSeqs(after uint64) []uint64 {
	n.t.Helper()
	var page webhook.EventPage
	n.must(200, "GET", n.coll()+"events?limit=1000&after="+strconv.FormatUint(after, 10), n.key, nil, &page)
	var out []uint64
	for _, e := range page.Events {
		out = append(out, e.Seq)
	}
	return out
}

// verify is a receiver's check of a delivery, written from README's
// "Webhooks" section alone: the Pidnode-Signature header is
// "t=<unix seconds>,v1=<hex>", where hex is the HMAC-SHA256 keyed with the
// whole secret string of the decimal t, a '.', and the raw body; a t more
// than 5 minutes from the receiver's clock is refused.
func verify(secret, header string, body []byte, now time.Time) error {
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return fmt.Errorf("malformed part %q", part)
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("timestamp %q", ts)
	}
	if d := now.Sub(time.Unix(t, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return fmt.Errorf("timestamp %d outside the 5 minute window", t)
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	want := m.Sum(nil)
	for _, s := range sigs {
		got, err := hex.DecodeString(s)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("no valid v1 signature")
}

// delivery is one request a receiver got.
type delivery struct {
	at     time.Time
	header http.Header
	body   []byte
	seqs   []uint64
	ids    []string
	status int // the answer
}

// receiver records every request and answers with status(i) for the i-th
// (0-based).
type receiver struct {
	mu     sync.Mutex
	got    []delivery
	conns  atomic.Int64
	status func(i int) int
	srv    *httptest.Server
}

func newReceiver(t testing.TB, status func(i int) int) *receiver {
	rc := &receiver{status: status}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body struct {
			Endpoint string `json:"endpoint"`
			Events   []struct {
				Seq    uint64 `json:"seq"`
				Handle string `json:"handle"`
				Action string `json:"action"`
			} `json:"events"`
		}
		d := delivery{at: time.Now(), header: r.Header.Clone(), body: b}
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("delivery body %q: %v", b, err)
		}
		for _, e := range body.Events {
			d.seqs = append(d.seqs, e.Seq)
			d.ids = append(d.ids, e.Handle)
		}
		rc.mu.Lock()
		d.status = rc.status(len(rc.got))
		rc.got = append(rc.got, d)
		rc.mu.Unlock()
		w.WriteHeader(d.status)
	}))
	rc.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			rc.conns.Add(1)
		}
	}
	rc.srv.Start()
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) deliveries() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.got...)
}

// acked returns the seqs of the deliveries answered 2xx, in order.
func (rc *receiver) acked() []uint64 {
	var out []uint64
	for _, d := range rc.deliveries() {
		if d.status >= 200 && d.status < 300 {
			out = append(out, d.seqs...)
		}
	}
	return out
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// inOrderCovering checks that got, the seqs received in order, holds every
// one of want, and that each first appears after the ones before it: the
// at-least-once, in-order contract.
func inOrderCovering(t *testing.T, got, want []uint64) {
	t.Helper()
	pos := map[uint64]int{}
	for i, s := range got {
		if _, ok := pos[s]; !ok {
			pos[s] = i
		}
	}
	last := -1
	for _, s := range want {
		p, ok := pos[s]
		if !ok {
			t.Fatalf("seq %d never delivered; got %v, want %v", s, got, want)
		}
		if p < last {
			t.Fatalf("seq %d first delivered before an earlier one; got %v", s, got)
		}
		last = p
	}
	for _, s := range got {
		if _, ok := pos[s]; ok && !contains(want, s) {
			t.Fatalf("seq %d delivered but not in the feed %v", s, want)
		}
	}
}

func contains(s []uint64, v uint64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestSignedDeliveriesVerify: a receiver written from README verifies every
// delivery; a changed body, another secret or an old timestamp fail.
func TestSignedDeliveriesVerify(t *testing.T) {
	n := startNode(t, filepath.Join(t.TempDir(), "p.db"), webhook.Config{Allow: loopback, Rescan: 50 * time.Millisecond})
	n.onboard()
	n.create(0) // before the endpoint: not delivered
	rc := newReceiver(t, func(int) int { return 204 })
	hook := n.register(rc.srv.URL + "/in")
	for i := 1; i <= 5; i++ {
		n.create(i)
	}
	want := n.feedSeqs(hook.Cursor)
	if len(want) != 5 {
		t.Fatalf("feed after the endpoint's cursor: %v", want)
	}
	waitFor(t, "5 events", func() bool { return len(rc.acked()) >= 5 })
	inOrderCovering(t, rc.acked(), want)
	for _, d := range rc.deliveries() {
		sig := d.header.Get("Pidnode-Signature")
		if err := verify(hook.Secret, sig, d.body, time.Now()); err != nil {
			t.Fatalf("delivery %s: %v", d.body, err)
		}
		if d.header.Get("Content-Type") != "application/json" || !strings.HasPrefix(d.header.Get("Pidnode-Delivery"), hook.ID+".") {
			t.Fatalf("headers %v", d.header)
		}
		if d.header.Get("Authorization") != "" || d.header.Get("Cookie") != "" {
			t.Fatalf("credentials sent: %v", d.header)
		}
		tampered := bytes.Replace(d.body, []byte(`"seq":`), []byte(`"seq": `), 1)
		if verify(hook.Secret, sig, tampered, time.Now()) == nil {
			t.Fatal("a changed body verifies")
		}
		if verify(hook.Secret+"x", sig, d.body, time.Now()) == nil {
			t.Fatal("another secret verifies")
		}
		if verify(hook.Secret, sig, d.body, time.Now().Add(6*time.Minute)) == nil {
			t.Fatal("a 6 minute old delivery verifies")
		}
	}
	waitFor(t, "the cursor", func() bool { return n.webhook(hook.ID).Cursor == want[len(want)-1] })
	if got := n.webhook(hook.ID); got.Failures != 0 || got.LastSuccess == nil {
		t.Fatalf("endpoint after delivery: %+v", got)
	}
	// The bodies are the feed's event objects.
	var body struct {
		Endpoint string            `json:"endpoint"`
		Events   []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(rc.deliveries()[0].body, &body); err != nil || body.Endpoint != hook.ID {
		t.Fatalf("body %s: %v", rc.deliveries()[0].body, err)
	}
	var page struct {
		Events []json.RawMessage `json:"events"`
	}
	n.must(200, "GET", n.coll()+"events?after="+strconv.FormatUint(hook.Cursor, 10)+"&limit=1", n.key, nil, &page)
	if string(page.Events[0]) != string(body.Events[0]) {
		t.Fatalf("delivered event %s, feed event %s", body.Events[0], page.Events[0])
	}
}

// TestRetriesKeepOrder: a receiver that fails its first attempts and then
// recovers gets every event, in seq order, with no gap; the waits between
// the failed attempts grow.
func TestRetriesKeepOrder(t *testing.T) {
	const fails = 4
	base := 100 * time.Millisecond
	n := startNode(t, filepath.Join(t.TempDir(), "p.db"), webhook.Config{Allow: loopback, Backoff: base, Rescan: 50 * time.Millisecond, MaxBatch: 3})
	n.onboard()
	rc := newReceiver(t, func(i int) int {
		if i < fails {
			return 500
		}
		return 200
	})
	hook := n.register(rc.srv.URL)
	n.create(1)
	waitFor(t, "first failure", func() bool { return len(rc.deliveries()) >= 1 })
	for i := 2; i <= 10; i++ { // written while the endpoint fails
		n.create(i)
	}
	want := n.feedSeqs(hook.Cursor)
	waitFor(t, "every event acknowledged", func() bool {
		a := rc.acked()
		return len(a) > 0 && a[len(a)-1] == want[len(want)-1]
	})
	got := rc.deliveries()
	var all []uint64
	for _, d := range got {
		all = append(all, d.seqs...)
	}
	inOrderCovering(t, all, want)
	inOrderCovering(t, rc.acked(), want)
	// While failing, the head event is retried: each failed attempt starts
	// with the first event.
	for i := 0; i < fails; i++ {
		if got[i].seqs[0] != want[0] {
			t.Fatalf("failed attempt %d starts at %d, want the head %d", i, got[i].seqs[0], want[0])
		}
	}
	// Exponential backoff: the k-th retry waits at least base·2^(k-1).
	for k := 1; k <= fails; k++ {
		if gap, min := got[k].at.Sub(got[k-1].at), base<<(k-1); gap < min {
			t.Fatalf("retry %d came %v after the failure, want at least %v", k, gap, min)
		}
	}
	waitFor(t, "the cursor", func() bool { return n.webhook(hook.ID).Cursor == want[len(want)-1] })
	log := n.deliveries(hook.ID)
	if len(log) != len(got) || log[0].Attempt != uint64(len(got)) || !log[0].OK || log[len(log)-1].Status != 500 {
		t.Fatalf("delivery log %+v for %d requests", log, len(got))
	}
	if w := n.webhook(hook.ID); w.Failures != 0 || w.State != "active" || w.Cursor != want[len(want)-1] {
		t.Fatalf("endpoint %+v", w)
	}
}

// TestDeliveriesSurviveRestart: events written while the node is down, and
// one whose delivery failed before it stopped, are delivered after it
// starts again over the same database file.
func TestDeliveriesSurviveRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	cfg := webhook.Config{Allow: loopback, Backoff: 50 * time.Millisecond, Rescan: 50 * time.Millisecond}
	var up atomic.Bool
	rc := newReceiver(t, func(int) int {
		if up.Load() {
			return 200
		}
		return 503
	})
	n := startNode(t, path, cfg)
	n.onboard()
	hook := n.register(rc.srv.URL)
	n.create(1)
	waitFor(t, "a failed attempt", func() bool { return len(rc.deliveries()) >= 1 })
	n.stop()
	key, ns := n.key, n.ns

	// Written while no engine runs.
	n = startNode(t, path, webhook.Config{Allow: loopback, Rescan: time.Hour}) // an engine that never wakes on its own
	n.key, n.ns = key, ns
	n.cancel()
	<-n.done
	for i := 2; i <= 4; i++ {
		n.create(i)
	}
	n.stop()

	up.Store(true)
	n = startNode(t, path, cfg)
	n.key, n.ns = key, ns
	want := n.feedSeqs(hook.Cursor)
	if len(want) != 4 {
		t.Fatalf("feed %v", want)
	}
	waitFor(t, "every event", func() bool { return len(rc.acked()) >= 4 })
	inOrderCovering(t, rc.acked(), want)
}

// TestDisabledAfterADay: an endpoint that has failed for 24 hours (an
// injected clock) is disabled and says why; enabling it resumes from its
// cursor.
func TestDisabledAfterADay(t *testing.T) {
	var mu sync.Mutex
	clock := time.Now()
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	var up atomic.Bool
	rc := newReceiver(t, func(int) int {
		if up.Load() {
			return 200
		}
		return 500
	})
	n := startNode(t, filepath.Join(t.TempDir(), "p.db"), webhook.Config{Allow: loopback, Now: now, Backoff: time.Hour, MaxBackoff: time.Hour, Rescan: 20 * time.Millisecond})
	n.onboard()
	hook := n.register(rc.srv.URL)
	n.create(1)
	waitFor(t, "a failure", func() bool { return n.webhook(hook.ID).Failures == 1 })
	// Each hour the next attempt is due; after 24 hours of failures the
	// endpoint is disabled.
	for h := 0; h < 30 && n.webhook(hook.ID).State == "active"; h++ {
		f := n.webhook(hook.ID).Failures
		advance(time.Hour)
		waitFor(t, "the hourly attempt", func() bool { w := n.webhook(hook.ID); return w.Failures > f || w.State != "active" })
	}
	w := n.webhook(hook.ID)
	if w.State != "disabled" || w.DisabledAt == nil || !strings.Contains(w.DisabledReason, "HTTP 500") || w.FailingSince == nil ||
		w.DisabledAt.Sub(*w.FailingSince) < 24*time.Hour || w.DisabledAt.Sub(*w.FailingSince) > 26*time.Hour {
		t.Fatalf("endpoint after a day of failures: %+v", w)
	}
	tries := len(rc.deliveries())
	advance(2 * time.Hour)
	time.Sleep(200 * time.Millisecond)
	if len(rc.deliveries()) != tries {
		t.Fatal("a disabled endpoint was tried again")
	}
	up.Store(true)
	var en webhook.View
	n.must(200, "POST", n.coll()+"webhooks/"+hook.ID+"/enable", n.key, nil, &en)
	if en.State != "active" || en.Failures != 0 || en.Cursor != hook.Cursor {
		t.Fatalf("enabled: %+v", en)
	}
	waitFor(t, "the delivery after enabling", func() bool { return len(rc.acked()) == 1 })
	inOrderCovering(t, rc.acked(), n.feedSeqs(hook.Cursor))
}

// TestOutboundDenied: without --outbound-allow, an endpoint on loopback is
// never connected to; the attempt is logged with the class "denied".
func TestOutboundDenied(t *testing.T) {
	n := startNode(t, filepath.Join(t.TempDir(), "p.db"), webhook.Config{Rescan: 50 * time.Millisecond})
	n.onboard()
	rc := newReceiver(t, func(int) int { return 200 })
	hook := n.register(rc.srv.URL)
	n.create(1)
	waitFor(t, "a logged attempt", func() bool { return len(n.deliveries(hook.ID)) > 0 })
	d := n.deliveries(hook.ID)[0]
	if d.OK || d.Error != "denied" || d.Status != 0 {
		t.Fatalf("attempt %+v: want error class denied", d)
	}
	if w := n.webhook(hook.ID); !strings.HasPrefix(w.LastError, "denied") || w.NextAttempt == nil {
		t.Fatalf("endpoint %+v", w)
	}
	if c := rc.conns.Load(); c != 0 {
		t.Fatalf("the receiver saw %d connections", c)
	}
	var page bytes.Buffer
	page.Write(n.eng.AppendMetrics(nil))
	if !strings.Contains(page.String(), `pidnode_webhook_deliveries_total{result="denied"} 1`) ||
		!strings.Contains(page.String(), `pidnode_webhook_endpoints{state="failing"} 1`) {
		t.Fatalf("metrics:\n%s", page.String())
	}
}
