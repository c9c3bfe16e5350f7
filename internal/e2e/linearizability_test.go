package e2e

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/anishathalye/porcupine"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"pidnode/internal/etcdtest"
)

// The admin API of a cluster is checked for linearizability rather than
// hoped to have it: clients on two nodes create, update with If-Match and
// read a few identifiers while etcd members are killed with SIGKILL and
// started again (a leader for a few seconds; then a leader and a follower,
// which takes the quorum away for longer than a write waits for etcd) and
// the network between node b and etcd (toxiproxy) is slowed down or cut;
// the history is checked with porcupine against a versioned register per
// identifier. An operation that got no answer, or 503 (etcd may have
// decided it after all), may or may not have happened.

type linInput struct {
	op    string // create, update, read
	id    string
	ver   uint64 // update: the If-Match version
	url   string // create, update: the value written
	shard int    // the etcd shard of id's namespace
}

type linOutput struct {
	status  int
	ver     uint64
	url     string
	unknown bool
}

type linState struct {
	exists bool
	ver    uint64
	url    string
}

var linModel = porcupine.NondeterministicModel{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		for _, op := range h {
			id := op.Input.(linInput).id
			by[id] = append(by[id], op)
		}
		var out [][]porcupine.Operation
		for _, ops := range by {
			out = append(out, ops)
		}
		return out
	},
	Init: func() []any { return []any{linState{}} },
	Step: func(state, input, output any) []any {
		s, in, out := state.(linState), input.(linInput), output.(linOutput)
		var applied linState
		applicable := false
		switch in.op {
		case "create":
			applicable, applied = !s.exists, linState{true, 1, in.url}
		case "update":
			applicable, applied = s.exists && s.ver == in.ver, linState{true, in.ver + 1, in.url}
		}
		if out.unknown {
			if applicable {
				return []any{s, applied}
			}
			return []any{s}
		}
		switch in.op {
		case "create":
			if out.status == http.StatusCreated && applicable && out.ver == 1 {
				return []any{applied}
			}
			if (out.status == http.StatusConflict || out.status == http.StatusPreconditionFailed) && s.exists {
				return []any{s}
			}
		case "update":
			if out.status == http.StatusOK && applicable && out.ver == in.ver+1 {
				return []any{applied}
			}
			if out.status == http.StatusPreconditionFailed && s.exists && s.ver != in.ver ||
				out.status == http.StatusNotFound && !s.exists {
				return []any{s}
			}
		case "read":
			if out.status == http.StatusOK && s.exists && s.ver == out.ver && s.url == out.url ||
				out.status == http.StatusNotFound && !s.exists {
				return []any{s}
			}
		}
		return nil
	},
	Equal: func(a, b any) bool { return a.(linState) == b.(linState) },
	DescribeOperation: func(input, output any) string {
		in, out := input.(linInput), output.(linOutput)
		return fmt.Sprintf("%s %s v%d %s → %d v%d %s unknown=%v", in.op, in.id, in.ver, in.url, out.status, out.ver, out.url, out.unknown)
	},
}

// settled is history without the operations that had no answer and
// cannot have changed the register, which porcupine would otherwise have
// to place at every point from their call on (hundreds of updates refused
// at once while a shard has no quorum make a history it cannot check in
// time): reads; a create or an update from a version that an operation
// answered before its call had shown to be stale (the version only
// grows, so what was seen before the call holds at any point after it);
// and a create or an update from version v when an answer showed version
// v+1 holding another write's URL (only one write takes the register to
// v+1, and every written URL is unique).
func settled(history []porcupine.Operation) []porcupine.Operation {
	type seen struct {
		ret int64
		ver uint64 // the register's version was at least ver from ret on
	}
	type version struct {
		id  string
		ver uint64
	}
	byID := map[string][]seen{}
	urls := map[version]string{} // the URL each version was seen with
	for _, op := range history {
		in, out := op.Input.(linInput), op.Output.(linOutput)
		if out.unknown {
			continue
		}
		var ver uint64
		switch {
		case out.status == http.StatusOK || out.status == http.StatusCreated:
			ver = out.ver
			urls[version{in.id, out.ver}] = out.url
		case out.status == http.StatusConflict || out.status == http.StatusPreconditionFailed:
			ver = 1 // the identifier exists
		}
		if ver > 0 {
			byID[in.id] = append(byID[in.id], seen{op.Return, ver})
		}
	}
	var out []porcupine.Operation
	for _, op := range history {
		in := op.Input.(linInput)
		if op.Output.(linOutput).unknown {
			if in.op == "read" {
				continue
			}
			from := in.ver // the version the write would replace; 0 for a create
			if in.op == "create" {
				from = 0
			}
			var least uint64
			for _, s := range byID[in.id] {
				if s.ret < op.Call {
					least = max(least, s.ver)
				}
			}
			if from < least {
				continue
			}
			if url, ok := urls[version{in.id, from + 1}]; ok && url != in.url {
				continue
			}
		}
		out = append(out, op)
	}
	return out
}

func TestClusterLinearizable(t *testing.T) {
	if testing.Short() {
		t.Skip("kills etcd members for several seconds")
	}
	checkLinearizable(t, 1)
}

// TestClusterShardsLinearizable is TestClusterLinearizable over two etcd
// shards of three members each, a namespace on each: shard s0 loses its
// leader, shard s1 its quorum (and s0's namespace takes writes meanwhile),
// and b's network to both is slowed down or cut.
func TestClusterShardsLinearizable(t *testing.T) {
	if testing.Short() {
		t.Skip("kills etcd members for several seconds")
	}
	checkLinearizable(t, 2)
}

// checkLinearizable runs the linearizability check on a cluster of shards
// etcd clusters (one: --etcd-endpoints and the demo namespace; more:
// --etcd-shard and a namespace on each). While the last shard has lost its
// quorum no write of its namespace may be acknowledged, and in a cluster
// of two shards the other shard's must go on being.
func checkLinearizable(t *testing.T, shards int) {
	cs := make([]*etcdtest.Cluster, shards)
	names := make([]string, shards)
	opts := clusterEtcd
	opts.Processes = true // members are killed
	var wg sync.WaitGroup
	for i := range cs {
		names[i] = "s" + strconv.Itoa(i)
		wg.Add(1)
		go func() { defer wg.Done(); cs[i] = etcdtest.Start(t, 3, opts) }()
	}
	wg.Wait()
	dir := t.TempDir()
	aFlags := append(clusterFlags(cs[0], "a"), "--demo")
	if shards > 1 {
		aFlags = shardFlags(cs, names, "a")
	}
	a := startNode(t, filepath.Join(dir, "a"), aFlags...)
	// b reaches every etcd member through a proxy of its own.
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	var proxies []*toxiproxy.Proxy
	bFlags := []string{"--node-name", "b", "--admin-rate", "0"}
	for i, c := range cs {
		var viaProxy []string
		for j, m := range c.Members() {
			p := toxiproxy.NewProxy(srv, fmt.Sprintf("etcd%d-%d", i, j), "127.0.0.1:0", strings.TrimPrefix(m.Endpoint(), "http://"))
			if err := p.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Stop)
			proxies = append(proxies, p)
			viaProxy = append(viaProxy, "http://"+p.Listen)
		}
		if shards == 1 {
			bFlags = append(bFlags, "--etcd-endpoints", strings.Join(viaProxy, ","))
		} else {
			bFlags = append(bFlags, "--etcd-shard", names[i]+"="+strings.Join(viaProxy, ","))
		}
	}
	b := startNode(t, filepath.Join(dir, "b"), bFlags...)
	nodes := []*node{a, b}
	// Identifiers as namespace collection and id, with the namespace's key.
	type linID struct {
		coll, id, key string
		shard         int
	}
	var ids []linID
	if shards == 1 {
		for _, id := range []string{"LIN-0", "LIN-1", "LIN-2"} {
			ids = append(ids, linID{testColl, id, a.Key, 0})
		}
	} else {
		for i, name := range names {
			ns := "LIN" + strconv.Itoa(i)
			key, _ := onboardOn(t, a, ns, `"shard":"`+name+`","custom_ids":true`)
			for _, id := range []string{"LIN-0", "LIN-1"} {
				ids = append(ids, linID{"/testpid/v2/handles/21.T12345/" + ns + "/", id, key, i})
			}
		}
	}
	hc := httpClient(8 * time.Second)
	start := time.Now()
	now := func() int64 { return int64(time.Since(start)) }
	stop := make(chan struct{})
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}

	var (
		mu      sync.Mutex
		history []porcupine.Operation
		counts  = map[string]int{}
	)
	for client := 0; client < 6; client++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := nodes[client%2]
			rng := rand.New(rand.NewPCG(uint64(client), 7))
			lastVer := map[string]uint64{}
			for i := 0; !stopped(); i++ {
				x := ids[rng.IntN(len(ids))]
				id, key := x.coll+x.id, x.key
				in := linInput{id: id, shard: x.shard}
				url := n.adminURL() + id
				var r reply
				var err error
				call := now()
				switch k := rng.IntN(10); {
				case k < 2:
					in.op, in.url = "create", fmt.Sprintf("https://example.org/c%d/%d", client, i)
					r, err = do(hc, "PUT", url, payload(in.url, "REGISTERED", resourceInfo("lin", "x")), append(auth(key), "If-None-Match", "*")...)
				case k < 6:
					in.op, in.url, in.ver = "update", fmt.Sprintf("https://example.org/u%d/%d", client, i), max(lastVer[id], 1)
					r, err = do(hc, "PUT", url, payload(in.url, "REGISTERED", resourceInfo("lin", "x")), append(auth(key), "If-Match", etag(in.ver))...)
				default:
					in.op = "read"
					r, err = do(hc, "GET", url, nil, auth(key)...)
				}
				ret := now()
				out := linOutput{}
				switch {
				case err != nil || r.Status == http.StatusServiceUnavailable:
					out.unknown, ret = true, math.MaxInt64
				default:
					out.status = r.Status
					if r.Status == http.StatusOK || r.Status == http.StatusCreated {
						var v identifier
						if json.Unmarshal(r.Body, &v) != nil {
							t.Errorf("%s %s: body %s", in.op, id, r.Body)
							return
						}
						out.ver, out.url = v.Version, v.URL
						lastVer[id] = v.Version
						if e := r.Header.Get("ETag"); e != etag(v.Version) {
							t.Errorf("%s %s: ETag %s, version %d", in.op, id, e, v.Version)
						}
					}
					switch r.Status {
					case http.StatusOK, http.StatusCreated, http.StatusNotFound, http.StatusConflict, http.StatusPreconditionFailed:
					default:
						t.Errorf("%s %s: %d %s", in.op, id, r.Status, r.Body)
						return
					}
					if r.Status == http.StatusPreconditionFailed && in.op == "update" {
						lastVer[id]++ // guess again next time
					}
				}
				mu.Lock()
				history = append(history, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
				counts[in.op+" "+strconv.Itoa(out.status)]++
				mu.Unlock()
			}
		}()
	}
	// Chaos, each member SIGKILLed and started again on its data: the
	// first shard's leader for 2.5 s (a new one is elected); then the last
	// shard's leader and a follower for 5.5 s, longer than a write waits
	// for etcd (5 s) and a read for its sync (2 s); then b's network to etcd
	// slowed down by 150 ms each way, and cut.
	leader := func(c *etcdtest.Cluster) int {
		cli := c.Client()
		for i, m := range c.Members() {
			x, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			st, err := cli.Status(x, m.Endpoint())
			cancel()
			if err == nil && st.Leader == st.Header.MemberId {
				return i
			}
		}
		return 0
	}
	time.Sleep(time.Second)
	m := cs[0].Members()
	x := m[leader(cs[0])]
	x.Kill()
	time.Sleep(2500 * time.Millisecond)
	x.Restart()
	time.Sleep(300 * time.Millisecond)

	lost := len(cs) - 1
	m = cs[lost].Members()
	l := leader(cs[lost])
	x, y := m[l], m[(l+1)%3]
	x.Kill()
	y.Kill()
	lostFrom := now()
	if shards > 1 {
		// The other shard's namespace takes creates through both nodes.
		var pw sync.WaitGroup
		for _, n := range nodes {
			pw.Add(1)
			go func() {
				defer pw.Done()
				began := time.Now()
				r, err := do(hc, "POST", n.adminURL()+ids[0].coll, payload("https://example.org/meanwhile", "REGISTERED", resourceInfo("lin", "x")), auth(ids[0].key)...)
				if err != nil || r.Status != http.StatusCreated {
					t.Errorf("create in shard %s's namespace through %s while shard %s has no quorum: %v %d %s", names[0], n.data, names[lost], err, r.Status, r.Body)
				}
				t.Logf("create in shard %s's namespace through %s while shard %s has no quorum: %d after %v", names[0], filepath.Base(n.data), names[lost], r.Status, time.Since(began))
			}()
		}
		pw.Wait()
	}
	time.Sleep(5500*time.Millisecond - time.Duration(now()-lostFrom))
	lostUntil := now()
	y.Restart()
	x.Restart()
	time.Sleep(300 * time.Millisecond)

	for _, p := range proxies {
		for _, stream := range []string{"upstream", "downstream"} {
			if _, err := p.Toxics.AddToxicJson(strings.NewReader(`{"name":"slow-` + stream + `","type":"latency","stream":"` + stream + `","attributes":{"latency":150}}`)); err != nil {
				t.Fatal(err)
			}
		}
	}
	time.Sleep(700 * time.Millisecond)
	for _, p := range proxies {
		p.Toxics.ResetToxics(t.Context())
		p.Stop()
	}
	time.Sleep(700 * time.Millisecond)
	for _, p := range proxies {
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	t.Logf("%d operations: %v", len(history), counts)
	if counts["create 201"] == 0 || counts["update 200"] == 0 || counts["read 200"] == 0 {
		t.Fatalf("the run did not exercise every operation: %v", counts)
	}
	// Writes made and answered while shard lost had no quorum: none of its
	// namespace's acknowledged.
	others := 0
	for _, op := range history {
		in, out := op.Input.(linInput), op.Output.(linOutput)
		if in.op == "read" || out.status != http.StatusOK && out.status != http.StatusCreated || op.Call < lostFrom || op.Return > lostUntil {
			continue
		}
		if in.shard == lost {
			t.Errorf("%s %s acknowledged while shard %s had no quorum", in.op, in.id, names[lost])
		} else {
			others++
		}
	}
	if shards > 1 {
		t.Logf("%d writes to shard %s acknowledged while shard %s had no quorum", others, names[0], names[lost])
	}
	checked := settled(history)
	began := time.Now()
	res, info := porcupine.CheckOperationsVerbose(linModel.ToModel(), checked, 60*time.Second)
	t.Logf("checked %d of the %d operations in %v (the others had no answer and no possible effect)", len(checked), len(history), time.Since(began).Round(time.Millisecond))
	if res != porcupine.Ok {
		path := filepath.Join(t.TempDir(), "lin.html")
		porcupine.VisualizePath(linModel.ToModel(), info, path)
		logUnsettled(t, checked)
		t.Fatalf("history is %s (visualisation: %s)", res, path)
	}
}

// logUnsettled checks each identifier's operations on their own and logs
// those of an identifier whose history is not linearizable, or could not be
// checked in time: the visualisation goes with the test's temporary
// directory, the log stays with the run.
func logUnsettled(t *testing.T, history []porcupine.Operation) {
	for _, ops := range linModel.Partition(history) {
		res := porcupine.CheckOperationsTimeout(linModel.ToModel(), ops, 10*time.Second)
		id := ops[0].Input.(linInput).id
		t.Logf("%s: %d operations, %s", id, len(ops), res)
		if res == porcupine.Ok {
			continue
		}
		slices.SortFunc(ops, func(x, y porcupine.Operation) int { return cmp.Compare(x.Call, y.Call) })
		for i, op := range ops {
			if i == 600 {
				t.Logf("%s: %d more", id, len(ops)-i)
				break
			}
			ret := "-"
			if op.Return != math.MaxInt64 {
				ret = time.Duration(op.Return).Round(time.Microsecond).String()
			}
			t.Logf("  client %d %v–%s: %s", op.ClientId, time.Duration(op.Call).Round(time.Microsecond), ret, linModel.DescribeOperation(op.Input, op.Output))
		}
	}
}

// A keyed admin read of a namespace whose shard this node cannot sync with
// answers 503, never the local copy: node b's connection to the data
// shard's etcd is cut (it still counts the shard as connected for a few
// seconds, then no longer), a writes the record through its own, and b's
// reads of it, before and after it stops counting the shard as connected,
// are 503 until b is reconnected and has caught up, then the new value.
func TestClusterShardReadsNeverStale(t *testing.T) {
	names := []string{"s0", "s1"}
	cs := startShards(t, clusterEtcd, names...)
	dir := t.TempDir()
	a := startNode(t, filepath.Join(dir, "a"), shardFlags(cs, names, "a")...)
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "etcd-s1", "127.0.0.1:0", strings.TrimPrefix(cs[1].Endpoints(), "http://"))
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	b := startNode(t, filepath.Join(dir, "b"), "--etcd-shard", "s0="+cs[0].Endpoints(), "--etcd-shard", "s1=http://"+p.Listen,
		"--node-name", "b", "--admin-rate", "0")
	key, _ := onboardOn(t, a, "STALE", `"shard":"s1","custom_ids":true`)
	url := a.adminURL() + "/testpid/v2/handles/21.T12345/STALE/R-1"
	if r := mustDo(t, "PUT", url, payload("https://example.org/first", "REGISTERED", resourceInfo("stale", "x")), append(auth(key), "If-None-Match", "*")...); r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	bURL := b.adminURL() + "/testpid/v2/handles/21.T12345/STALE/R-1"
	read := func() (int, string) {
		r := mustDo(t, "GET", bURL, nil, auth(key)...)
		var v identifier
		json.Unmarshal(r.Body, &v)
		return r.Status, v.URL
	}
	waitUntil(t, func() bool { s, u := read(); return s == http.StatusOK && u == "https://example.org/first" })

	p.Stop()
	if r := mustDo(t, "PUT", url, payload("https://example.org/second", "REGISTERED", resourceInfo("stale", "x")), append(auth(key), "If-Match", etag(1))...); r.Status != http.StatusOK {
		t.Fatalf("update through a: %d %s", r.Status, r.Body)
	}
	// Past the 3 s after which b no longer counts the shard as connected.
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); {
		if s, u := read(); s != http.StatusServiceUnavailable {
			t.Fatalf("read through b cut off from the data shard after a's update: %d %q, want 503", s, u)
		}
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool { s, u := read(); return s == http.StatusOK && u == "https://example.org/second" })
}
