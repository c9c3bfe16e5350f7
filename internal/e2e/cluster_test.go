package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"

	"pidnode/handlev/hsmsg"
	"pidnode/internal/etcdtest"
	"pidnode/resolver/hdl"
)

// etcd limits a cluster needs (cluster.RequiredTxnOps, RequiredRequestBytes).
var clusterEtcd = etcdtest.Options{MaxTxnOps: 4096, MaxRequestBytes: 8 << 20}

// etcdValue is a value as etcd holds it, decoded (cluster/codec.go: a zstd
// frame with the dictionary cluster/zstd.dict, ID 32769, or the value as it
// is).
func etcdValue(t *testing.T, v []byte) []byte {
	t.Helper()
	if !bytes.HasPrefix(v, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
		return v
	}
	dict, err := os.ReadFile("../../cluster/zstd.dict")
	if err != nil {
		t.Fatal(err)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderDictRaw(32769, dict), zstd.WithDecoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	out, err := dec.DecodeAll(v, nil)
	if err != nil {
		t.Fatalf("decoding a value etcd holds: %v", err)
	}
	return out
}

func clusterFlags(c *etcdtest.Cluster, name string) []string {
	// No admin rate limit: the tests send bursts and a full bulk with one key.
	return []string{"--etcd-endpoints", c.Endpoints(), "--node-name", name, "--admin-rate", "0", "--stats-interval", "1s"}
}

// TestClusterTwoNodes runs two pidnode processes on one etcd: writes through
// either node resolve on the other on every front; concurrent creates of
// one id and a stale If-Match through the other node are refused; a node
// killed with SIGKILL resumes from its applied revision; and in the end
// both databases export the same bytes.
func TestClusterTwoNodes(t *testing.T) {
	c := etcdtest.Start(t, 1, clusterEtcd)
	dir := t.TempDir()
	a := startNode(t, filepath.Join(dir, "a"), append(clusterFlags(c, "a"), "--demo")...)
	b := startNode(t, filepath.Join(dir, "b"), clusterFlags(c, "b")...)
	key := a.Key

	// The demo, written through a, is on b (it loaded a snapshot): each
	// demo handle answers the same on both (some demo statuses are not
	// public).
	for _, h := range a.Handles {
		ra, rb := mustDo(t, "GET", a.resolverURL()+"/api/handles/"+h, nil), mustDo(t, "GET", b.resolverURL()+"/api/handles/"+h, nil)
		if ra.Status != rb.Status || !bytes.Equal(ra.Body, rb.Body) {
			t.Fatalf("demo handle %s: a %d %s, b %d %s", h, ra.Status, ra.Body, rb.Status, rb.Body)
		}
	}

	// A create through a: read-your-writes on a at once, and on b after
	// the replication lag, on HTTP, DNS and the native protocol.
	start := time.Now()
	id := a.create(t, key, payload("https://example.org/cluster/1", "REGISTERED", resourceInfo("one", "first")))
	// The 201 came after etcd committed the write: read straight from etcd,
	// after the reply, the record is there (a node that answered first and
	// wrote later would fail this on the first create).
	{
		x, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		got, err := c.Client().Get(x, "/pidnode/records/", clientv3.WithPrefix())
		cancel()
		if err != nil {
			t.Fatalf("etcd get: %v", err)
		}
		found := false
		for _, kv := range got.Kvs {
			found = found || bytes.Contains(etcdValue(t, kv.Value), []byte("https://example.org/cluster/1"))
		}
		if !found {
			t.Fatalf("the create was acknowledged but etcd has no record with its URL (%d records)", len(got.Kvs))
		}
	}
	if r := mustDo(t, "GET", a.resolverURL()+"/api/handles/"+id.Handle, nil); r.Status != http.StatusOK {
		t.Fatalf("a right after its create: %d", r.Status)
	}
	waitUntil(t, func() bool {
		return mustDo(t, "GET", b.resolverURL()+"/api/handles/"+id.Handle, nil).Status == http.StatusOK
	})
	t.Logf("replication lag a→b (HTTP, polled every 5 ms): %v", time.Since(start))
	checkFronts(t, b, id.Handle, "https://example.org/cluster/1")

	// The same custom id through both nodes at once: exactly one 201.
	for round := 0; round < 3; round++ {
		url := fmt.Sprintf("/testpid/v2/handles/21.T12345/DMO/SAME-%d", round)
		var wg sync.WaitGroup
		status := make([]int, 2)
		for i, n := range []*node{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				status[i] = mustDo(t, "PUT", n.adminURL()+url, payload("https://example.org/same", "REGISTERED", resourceInfo("same", "x")),
					append(auth(key), "If-None-Match", "*")...).Status
			}()
		}
		wg.Wait()
		created := 0
		for _, s := range status {
			switch s {
			case http.StatusCreated:
				created++
			case http.StatusConflict, http.StatusPreconditionFailed:
			default:
				t.Fatalf("concurrent create %s: statuses %v", url, status)
			}
		}
		if created != 1 {
			t.Fatalf("concurrent create %s: statuses %v, want exactly one 201", url, status)
		}
	}

	// An update through b with the ETag of a's create, then the same stale
	// ETag through a: 412.
	item := "/testpid/v2/handles/21.T12345/DMO/" + id.ID
	r := mustDo(t, "PUT", b.adminURL()+item, payload("https://example.org/cluster/2", "REGISTERED", resourceInfo("one", "second")),
		append(auth(key), "If-Match", etag(id.Version))...)
	if r.Status != http.StatusOK {
		t.Fatalf("update through b: %d %s", r.Status, r.Body)
	}
	r = mustDo(t, "PUT", a.adminURL()+item, payload("https://example.org/cluster/3", "REGISTERED", resourceInfo("one", "third")),
		append(auth(key), "If-Match", etag(id.Version))...)
	if r.Status != http.StatusPreconditionFailed {
		t.Fatalf("stale If-Match through a: %d %s, want 412", r.Status, r.Body)
	}
	// b's update is on a (it refused the stale one after applying it).
	checkFronts(t, a, id.Handle, "https://example.org/cluster/2")

	// SIGKILL b in the middle of a burst written through a, write more,
	// restart b: it resumes from its applied revision.
	var made []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 15; i++ {
				got := a.create(t, key, payload(fmt.Sprintf("https://example.org/burst/%d/%d", w, i), "REGISTERED", resourceInfo("burst", "x")))
				mu.Lock()
				made = append(made, got.Handle)
				mu.Unlock()
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	b.kill()
	wg.Wait()
	b = startNode(t, filepath.Join(dir, "b"), clusterFlags(c, "b")...)
	if strings.Contains(b.stderr.String(), "loaded snapshot") {
		t.Errorf("b loaded a snapshot on restart instead of resuming from its applied revision:\n%s", b.stderr.String())
	}
	if !strings.Contains(b.stdout.String(), "cluster     node b") {
		t.Errorf("b's welcome text does not show the cluster:\n%s", b.stdout.String())
	}
	for _, h := range made {
		waitUntil(t, func() bool { return mustDo(t, "GET", b.resolverURL()+"/api/handles/"+h, nil).Status == http.StatusOK })
	}

	// /readyz shows resolution and writes apart.
	if r := mustDo(t, "GET", b.adminURL()+"/readyz", nil); r.Status != http.StatusOK || !bytes.Contains(r.Body, []byte("writes: ready")) {
		t.Errorf("b /readyz: %d %q", r.Status, r.Body)
	}

	// Statistics are cluster-wide: resolutions on a and on b are summed by
	// the stats route of either node.
	counted := a.create(t, key, payload("https://example.org/counted", "REGISTERED", resourceInfo("counted", "x")))
	waitUntil(t, func() bool {
		return mustDo(t, "GET", b.resolverURL()+"/"+counted.Handle, nil).Status == http.StatusFound
	})
	for i := 0; i < 2; i++ {
		mustDo(t, "GET", a.resolverURL()+"/"+counted.Handle, nil)
		mustDo(t, "GET", b.resolverURL()+"/"+counted.Handle, nil)
	}
	for _, n := range []*node{a, b} {
		waitUntil(t, func() bool {
			r := mustDo(t, "GET", n.adminURL()+"/testpid/v2/handles/21.T12345/DMO/"+counted.ID+"/stats", nil, auth(key)...)
			var st struct{ Total uint64 }
			return r.Status == http.StatusOK && json.Unmarshal(r.Body, &st) == nil && st.Total == 5
		})
	}

	// A full bulk (1,000 creates, each record with its audit entry) is one
	// etcd transaction within the limits the start-up check demands.
	items := make([]json.RawMessage, 1000)
	for i := range items {
		items[i] = payload(fmt.Sprintf("https://example.org/bulk/%d", i), "REGISTERED", resourceInfo("bulk", "x"))
	}
	bulkBody, _ := json.Marshal(items)
	r = mustDo(t, "POST", b.adminURL()+testColl+"bulk", bulkBody, auth(key)...)
	var bulk struct {
		Items []struct {
			Status int
			Handle string
		}
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &bulk) != nil || len(bulk.Items) != 1000 {
		t.Fatalf("bulk of 1,000 through b: %d %.300s", r.Status, r.Body)
	}
	for _, it := range []int{0, 999} {
		if bulk.Items[it].Status != http.StatusCreated {
			t.Fatalf("bulk item %d: %+v", it, bulk.Items[it])
		}
		h := bulk.Items[it].Handle
		waitUntil(t, func() bool { return mustDo(t, "GET", a.resolverURL()+"/api/handles/"+h, nil).Status == http.StatusOK })
	}

	// A key issued and revoked through a is refused by b from the next
	// request on, with no wait in between.
	var me struct {
		SNAA struct {
			ID string `json:"id"`
		} `json:"snaa"`
	}
	if err := json.Unmarshal(mustDo(t, "GET", b.adminURL()+"/testpid/v2/me", nil, auth(key)...).Body, &me); err != nil || me.SNAA.ID == "" {
		t.Fatalf("whoami: %v", err)
	}
	op := []string{"Authorization", "Bearer " + a.operatorKey(), "Content-Type", "application/json"}
	for round := 0; round < 3; round++ {
		r := mustDo(t, "POST", a.adminURL()+"/ops/v1/snaas/"+me.SNAA.ID+"/keys", []byte(`{"name":"short-lived"}`), op...)
		var ik struct{ ID, Secret string }
		if r.Status != http.StatusCreated || json.Unmarshal(r.Body, &ik) != nil {
			t.Fatalf("issue key: %d %s", r.Status, r.Body)
		}
		if r := mustDo(t, "GET", b.adminURL()+"/testpid/v2/me", nil, auth(ik.Secret)...); r.Status != http.StatusOK {
			t.Fatalf("new key on b: %d %s", r.Status, r.Body)
		}
		if r := mustDo(t, "DELETE", a.adminURL()+"/ops/v1/snaas/"+me.SNAA.ID+"/keys/"+ik.ID, nil, op...); r.Status/100 != 2 {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
		if r := mustDo(t, "POST", b.adminURL()+testColl, payload("https://example.org/revoked", "REGISTERED", resourceInfo("r", "x")), auth(ik.Secret)...); r.Status != http.StatusUnauthorized {
			t.Fatalf("write with a key revoked through a, on b right after: %d %s", r.Status, r.Body)
		}
	}

	// b away while etcd compacts the history it would resume from: it
	// catches up by a snapshot and serves every write.
	b.stop(20 * time.Second)
	var away []string
	for i := 0; i < 10; i++ {
		away = append(away, a.create(t, key, payload(fmt.Sprintf("https://example.org/away/%d", i), "REGISTERED", resourceInfo("away", "x"))).Handle)
	}
	c.Compact()
	b = startNode(t, filepath.Join(dir, "b"), clusterFlags(c, "b")...)
	for _, h := range away {
		waitUntil(t, func() bool { return mustDo(t, "GET", b.resolverURL()+"/api/handles/"+h, nil).Status == http.StatusOK })
	}
	if !strings.Contains(b.stderr.String(), "swapped in a snapshot") {
		t.Errorf("b did not resync after the compaction:\n%s", b.stderr.String())
	}

	// Same data, same bytes: compare the nodes' exports once both have
	// applied everything (an audit log of the same length).
	waitUntil(t, func() bool { n := auditLen(t, a); return n > 60 && n == auditLen(t, b) })
	a.stop(20 * time.Second)
	b.stop(20 * time.Second)
	ea, eb := export(t, a.data), export(t, b.data)
	if !bytes.Equal(ea, eb) || len(ea) == 0 {
		t.Errorf("exports differ: a %d bytes, b %d bytes", len(ea), len(eb))
	}
	if n := bytes.Count(ea, []byte("\n")); n < 5+1+3+60 {
		t.Errorf("export has %d records", n)
	}
}

// auditLen is the number of audit entries a node shows.
func auditLen(t *testing.T, n *node) int {
	t.Helper()
	r := mustDo(t, "GET", n.adminURL()+"/ops/v1/audit?limit=1000&after=1000", nil, "Authorization", "Bearer "+n.operatorKey())
	if r.Status != http.StatusOK {
		t.Fatalf("audit: %d %s", r.Status, r.Body)
	}
	var v struct {
		Entries []json.RawMessage `json:"entries"`
	}
	if err := json.Unmarshal(r.Body, &v); err != nil {
		var list []json.RawMessage
		if err2 := json.Unmarshal(r.Body, &list); err2 != nil {
			t.Fatalf("audit body: %v %s", err, r.Body)
		}
		return len(list)
	}
	return len(v.Entries)
}

func export(t *testing.T, data string) []byte {
	t.Helper()
	out, err := exec.Command(binPath, "export", "--data", data).Output()
	if err != nil {
		t.Fatalf("pidnode export: %v", err)
	}
	return out
}

// checkFronts resolves handle on n's HTTP, DNS and native fronts and wants
// url on each.
func checkFronts(t *testing.T, n *node, handle, url string) {
	t.Helper()
	if err := frontsAnswer(t, n, handle, url); err != nil {
		t.Error(err)
	}
}

// frontsAnswer resolves handle on every front of n and returns an error
// unless each answers url: the HTTP redirect, /api/handles (Handle JSON),
// DNS (a URI record, over TCP: a URL of a few hundred bytes needs more than
// a plain UDP reply, and rate limiting of UDP answers would refuse a
// caller that checks many records) and the native protocol over TCP and
// over UDP.
// It is safe to call from several goroutines.
func frontsAnswer(t *testing.T, n *node, handle, url string) error {
	r, err := do(defaultClient, "GET", n.resolverURL()+"/"+handle, nil)
	if err != nil || r.Status != http.StatusFound || r.Header.Get("Location") != url {
		return fmt.Errorf("HTTP %s on %s: %v %d Location %q, want %s", handle, n.data, err, r.Status, r.Header.Get("Location"), url)
	}
	r, err = do(defaultClient, "GET", n.resolverURL()+"/api/handles/"+handle, nil)
	if err != nil || r.Status != http.StatusOK {
		return fmt.Errorf("/api/handles/%s on %s: %v %d %s", handle, n.data, err, r.Status, r.Body)
	}
	if got, _ := handleJSONState(t, r.Body); got != url {
		return fmt.Errorf("/api/handles/%s on %s: URL %q, want %s", handle, n.data, got, url)
	}
	// 21.T12345/svc/DMO/ID is ID.DMO.testpid.localhost in the default zone.
	parts := strings.Split(handle, "/")
	q := new(dns.Msg)
	q.SetQuestion(parts[len(parts)-1]+"."+parts[len(parts)-2]+".testpid.localhost.", dns.TypeURI)
	m, _, err := (&dns.Client{Net: "tcp", Timeout: 5 * time.Second}).Exchange(q, n.addr["dns"])
	if err != nil {
		return fmt.Errorf("DNS %s on %s: %v", handle, n.data, err)
	}
	found := false
	for _, rr := range m.Answer {
		if u, ok := rr.(*dns.URI); ok && u.Target == url {
			found = true
		}
	}
	if !found || m.Truncated {
		return fmt.Errorf("DNS URI %s on %s: %v (truncated %v), want %s", handle, n.data, m.Answer, m.Truncated, url)
	}
	for _, udp := range []bool{false, true} {
		resp, err := (&hdl.Client{Addr: n.addr["hdl"], UDP: udp, Timeout: 5 * time.Second}).Resolve(context.Background(), handle, nil, []string{"URL"}, 0)
		if err != nil {
			return fmt.Errorf("native %s on %s (UDP %v): %v", handle, n.data, udp, err)
		}
		found = false
		for _, v := range resp.Values {
			if string(v.Data) == url {
				found = true
			}
		}
		if resp.Message.Header.ResponseCode != hsmsg.RCSuccess || !found {
			return fmt.Errorf("native %s on %s (UDP %v): RC %d values %v, want %s", handle, n.data, udp, resp.Message.Header.ResponseCode, resp.Values, url)
		}
	}
	return nil
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("not within 15 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestClusterQuorumLoss kills two of three etcd members (SIGKILL) under a node:
// resolution goes on, writes answer 503 with Retry-After in bounded time,
// /readyz stays ready and says writes are unavailable; with the members
// back, writes work again without restarting pidnode.
func TestClusterQuorumLoss(t *testing.T) {
	opts := clusterEtcd
	opts.Processes = true // members are killed
	c := etcdtest.Start(t, 3, opts)
	dir := t.TempDir()
	a := startNode(t, filepath.Join(dir, "a"), append(clusterFlags(c, "a"), "--demo")...)
	b := startNode(t, filepath.Join(dir, "b"), clusterFlags(c, "b")...)
	id := a.create(t, a.Key, payload("https://example.org/quorum/1", "REGISTERED", resourceInfo("q", "before")))
	waitUntil(t, func() bool {
		return mustDo(t, "GET", b.resolverURL()+"/api/handles/"+id.Handle, nil).Status == http.StatusOK
	})

	m := c.Members()
	m[1].Kill()
	m[2].Kill()
	// Both nodes at once: each write waits for etcd up to its bound.
	var wg sync.WaitGroup
	for _, n := range []*node{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			r, err := do(defaultClient, "POST", n.adminURL()+testColl, payload("https://example.org/quorum/2", "REGISTERED", resourceInfo("q", "during")), auth(a.Key)...)
			took := time.Since(start)
			if err != nil {
				t.Errorf("write without quorum: %v", err)
				return
			}
			if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" ||
				!strings.HasPrefix(r.Header.Get("Content-Type"), "application/problem+json") {
				t.Errorf("write without quorum: %d %v %s", r.Status, r.Header, r.Body)
			}
			if took > 10*time.Second {
				t.Errorf("write without quorum took %v", took)
			}
			t.Logf("503 after %v", took)
		}()
	}
	for _, n := range []*node{a, b} {
		checkFronts(t, n, id.Handle, "https://example.org/quorum/1")
	}
	wg.Wait()
	waitUntil(t, func() bool {
		r := mustDo(t, "GET", b.adminURL()+"/readyz", nil)
		return r.Status == http.StatusOK && bytes.Contains(r.Body, []byte("writes: unavailable"))
	})
	// b restarted while etcd has no quorum starts on its copy and resolves.
	b.kill()
	b = startNode(t, filepath.Join(dir, "b"), clusterFlags(c, "b")...)
	checkFronts(t, b, id.Handle, "https://example.org/quorum/1")
	if !strings.Contains(b.stderr.String(), "serving the local copy") {
		t.Errorf("b's log does not say it serves its copy:\n%s", b.stderr.String())
	}

	m[1].Restart()
	m[2].Restart()
	// Writes resume through both nodes, and each sees the other's.
	var got identifier
	waitUntil(t, func() bool {
		r := mustDo(t, "POST", b.adminURL()+testColl, payload("https://example.org/quorum/3", "REGISTERED", resourceInfo("q", "after")), auth(a.Key)...)
		if r.Status != http.StatusCreated {
			return false
		}
		return json.Unmarshal(r.Body, &got) == nil
	})
	waitUntil(t, func() bool {
		return mustDo(t, "GET", a.resolverURL()+"/api/handles/"+got.Handle, nil).Status == http.StatusOK
	})
	waitUntil(t, func() bool {
		return bytes.Contains(mustDo(t, "GET", a.adminURL()+"/readyz", nil).Body, []byte("writes: ready"))
	})
}

// TestClusterSeed moves a single node into a cluster: `pidnode cluster
// seed` loads its database into an empty prefix (and refuses a second
// time), a node started on an empty data directory then holds the same
// records, the demo key works on it, and its statistics routes count the
// resolutions the single node counted.
func TestClusterSeed(t *testing.T) {
	c := etcdtest.Start(t, 1, clusterEtcd)
	dir := t.TempDir()
	single := startNode(t, filepath.Join(dir, "single"), "--demo")
	key := single.Key
	counted := single.Handles[0]
	for range 3 {
		if r := mustDo(t, "GET", single.resolverURL()+"/"+counted, nil); r.Status != http.StatusFound {
			t.Fatalf("resolving %s on the single node: %d", counted, r.Status)
		}
	}
	single.stop(20 * time.Second) // flushes the counts
	want := export(t, single.data)

	seed := func() ([]byte, error) {
		return exec.Command(binPath, "cluster", "seed", "--data", single.data, "--etcd-endpoints", c.Endpoints()).CombinedOutput()
	}
	if out, err := seed(); err != nil || !bytes.Contains(out, []byte("seeded ")) {
		t.Fatalf("cluster seed: %v\n%s", err, out)
	}
	if out, err := seed(); err == nil || !bytes.Contains(out, []byte("already holds data")) || bytes.Count(out, []byte("\n")) != 1 {
		t.Fatalf("second cluster seed: %v\n%s", err, out)
	}
	n := startNode(t, filepath.Join(dir, "n"), clusterFlags(c, "n")...)
	statsURL := n.adminURL() + "/pid/v2/handles/21.12345/DMO/" + counted[strings.LastIndexByte(counted, '/')+1:] + "/stats"
	total := func() uint64 {
		r := mustDo(t, "GET", statsURL, nil, auth(key)...)
		var st struct{ Total uint64 }
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &st) != nil {
			t.Fatalf("GET %s: %d %s", statsURL, r.Status, r.Body)
		}
		return st.Total
	}
	if got := total(); got != 3 {
		t.Errorf("the cluster node's statistics of %s: total %d, want the single node's 3", counted, got)
	}
	mustDo(t, "GET", n.resolverURL()+"/"+counted, nil)
	waitUntil(t, func() bool { return total() == 4 })
	id := n.create(t, key, payload("https://example.org/seeded", "REGISTERED", resourceInfo("s", "x")))
	n.stop(20 * time.Second)
	got := export(t, n.data)
	if len(got) <= len(want) {
		t.Fatalf("export after seed: %d bytes, single node's %d", len(got), len(want))
	}
	// Every record of the single node is on the cluster node, byte for byte.
	lines := map[string]bool{}
	for _, l := range bytes.Split(got, []byte("\n")) {
		lines[string(l)] = true
	}
	for _, l := range bytes.Split(want, []byte("\n")) {
		if !lines[string(l)] {
			t.Fatalf("the cluster node lacks %s", l)
		}
	}
	if !bytes.Contains(got, []byte(id.Handle)) {
		t.Error("the cluster node's export lacks the record created on it")
	}
}
