package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pidnode/internal/etcdtest"
)

// hookReceiver is a webhook endpoint on loopback that records the events
// of every request it answered 2xx; while hold is set it keeps each request
// open until the sender goes.
type hookReceiver struct {
	srv   *httptest.Server
	hold  atomic.Bool
	held  atomic.Int64 // requests being held now
	mu    sync.Mutex
	acked []uint64
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if h.hold.Load() {
			h.held.Add(1)
			<-r.Context().Done() // the sender died
			h.held.Add(-1)
			return
		}
		var body struct {
			Events []struct {
				Seq uint64 `json:"seq"`
			} `json:"events"`
		}
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("delivery %q: %v", b, err)
		}
		h.mu.Lock()
		for _, e := range body.Events {
			h.acked = append(h.acked, e.Seq)
		}
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) got() []uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]uint64(nil), h.acked...)
}

// checkDelivered fails unless got holds every seq of want, each first
// appearing after the ones before it, and nothing else.
func checkDelivered(t *testing.T, got, want []uint64) {
	t.Helper()
	first := map[uint64]int{}
	for i, s := range got {
		if _, ok := first[s]; !ok {
			first[s] = i
		}
	}
	if len(first) != len(want) {
		t.Fatalf("delivered %v, want each of %v", got, want)
	}
	last := -1
	for _, s := range want {
		p, ok := first[s]
		if !ok || p < last {
			t.Fatalf("delivered %v, want each of %v in order", got, want)
		}
		last = p
	}
}

// registerHook registers url on the demo namespace under the test prefix
// and returns its id and cursor.
func registerHook(t *testing.T, n *node, key, url string) (id string, cursor uint64) {
	t.Helper()
	r := mustDo(t, "POST", n.adminURL()+testColl+"webhooks", []byte(fmt.Sprintf(`{"url":%q,"kinds":["handle.create","handle.update"]}`, url)), auth(key)...)
	if r.Status != http.StatusCreated {
		t.Fatalf("register: %d %s", r.Status, r.Body)
	}
	var w struct {
		ID     string `json:"id"`
		Cursor uint64 `json:"cursor"`
	}
	if err := json.Unmarshal(r.Body, &w); err != nil {
		t.Fatal(err)
	}
	return w.ID, w.Cursor
}

// feedAfter is the demo namespace's feed after seq: the truth.
func feedAfter(t *testing.T, n *node, key string, after uint64) []uint64 {
	t.Helper()
	r := mustDo(t, "GET", n.adminURL()+testColl+"events?limit=1000&after="+strconv.FormatUint(after, 10), nil, auth(key)...)
	var page struct {
		Events []struct {
			Seq uint64 `json:"seq"`
		} `json:"events"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &page) != nil {
		t.Fatalf("feed: %d %s", r.Status, r.Body)
	}
	var out []uint64
	for _, e := range page.Events {
		out = append(out, e.Seq)
	}
	return out
}

func createOn(t *testing.T, n *node, key, label string) {
	t.Helper()
	if r := mustDo(t, "POST", n.adminURL()+testColl, payload("https://example.org/hook/"+label, "REGISTERED", resourceInfo(label, "x")), auth(key)...); r.Status != http.StatusCreated {
		t.Fatalf("create %s: %d %s", label, r.Status, r.Body)
	}
}

// TestWebhookSIGKILLDuringDelivery: a pidnode process killed with SIGKILL
// while its receiver holds a delivery open loses nothing: after a restart
// every event is delivered, in order.
func TestWebhookSIGKILLDuringDelivery(t *testing.T) {
	data := filepath.Join(t.TempDir(), "n")
	flags := []string{"--outbound-allow", "127.0.0.0/8"}
	n := startNode(t, data, append(flags, "--demo")...)
	key := n.Key
	rc := newHookReceiver(t)
	rc.hold.Store(true)
	_, cursor := registerHook(t, n, key, rc.srv.URL+"/hook")
	for i := 0; i < 5; i++ {
		createOn(t, n, key, "before-"+strconv.Itoa(i))
	}
	waitUntil(t, func() bool { return rc.held.Load() > 0 })
	n.kill()
	waitUntil(t, func() bool { return rc.held.Load() == 0 })
	if len(rc.got()) != 0 {
		t.Fatalf("acknowledged before the kill: %v", rc.got())
	}

	rc.hold.Store(false)
	n = startNode(t, data, flags...)
	for i := 0; i < 3; i++ {
		createOn(t, n, key, "after-"+strconv.Itoa(i))
	}
	want := feedAfter(t, n, key, cursor)
	if len(want) != 8 {
		t.Fatalf("feed after the endpoint's cursor: %v", want)
	}
	waitUntil(t, func() bool { g := rc.got(); return len(g) > 0 && g[len(g)-1] == want[len(want)-1] })
	checkDelivered(t, rc.got(), want)
}

var successRE = regexp.MustCompile(`(?m)^pidnode_webhook_deliveries_total\{result="success"\} (\d+)$`)

// webhookSuccesses reads a node's count of successful deliveries.
func webhookSuccesses(t *testing.T, n *node) int {
	t.Helper()
	r := mustDo(t, "GET", n.adminURL()+"/metrics", nil)
	m := successRE.FindSubmatch(r.Body)
	if m == nil {
		t.Fatalf("no webhook deliveries in /metrics:\n%s", r.Body)
	}
	v, _ := strconv.Atoi(string(m[1]))
	return v
}

// TestClusterWebhooks: two pidnode processes on one etcd: an endpoint
// registered through one node is seen with its cursor through the other,
// one node delivers every event written through either, and when that node
// is killed the other takes over and delivers the rest, in order.
func TestClusterWebhooks(t *testing.T) {
	c := etcdtest.Start(t, 1, clusterEtcd)
	dir := t.TempDir()
	allow := []string{"--outbound-allow", "127.0.0.0/8"}
	a := startNode(t, filepath.Join(dir, "a"), append(append(clusterFlags(c, "a"), allow...), "--demo")...)
	b := startNode(t, filepath.Join(dir, "b"), append(clusterFlags(c, "b"), allow...)...)
	key := a.Key
	rc := newHookReceiver(t)
	id, cursor := registerHook(t, a, key, rc.srv.URL)
	for i := 0; i < 6; i++ {
		createOn(t, []*node{a, b}[i%2], key, "c"+strconv.Itoa(i))
	}
	want := feedAfter(t, b, key, cursor)
	waitUntil(t, func() bool { g := rc.got(); return len(g) > 0 && g[len(g)-1] == want[len(want)-1] })
	checkDelivered(t, rc.got(), want)
	// The cursor is cluster data: b shows it once a's write is applied.
	waitUntil(t, func() bool {
		r := mustDo(t, "GET", b.adminURL()+testColl+"webhooks/"+id, nil, auth(key)...)
		var w struct{ Cursor uint64 }
		return r.Status == http.StatusOK && json.Unmarshal(r.Body, &w) == nil && w.Cursor == want[len(want)-1]
	})
	sa, sb := webhookSuccesses(t, a), webhookSuccesses(t, b)
	if (sa == 0) == (sb == 0) {
		t.Fatalf("successful deliveries: node a %d, node b %d; want one node delivering", sa, sb)
	}
	leader, other := a, b
	if sb > 0 {
		leader, other = b, a
	}
	leader.kill()
	for i := 0; i < 3; i++ {
		createOn(t, other, key, "d"+strconv.Itoa(i))
	}
	want = feedAfter(t, other, key, cursor)
	deadline := time.Now().Add(40 * time.Second) // the lead's lease (10 s) must expire first
	for g := rc.got(); len(g) == 0 || g[len(g)-1] != want[len(want)-1]; g = rc.got() {
		if time.Now().After(deadline) {
			t.Fatalf("after the leader's kill: delivered %v, want %v", g, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	checkDelivered(t, rc.got(), want)
}
