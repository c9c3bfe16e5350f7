package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"pidnode/internal/etcdtest"
)

// startShards starts one one-member etcd per name, with opts.
func startShards(t *testing.T, opts etcdtest.Options, names ...string) []*etcdtest.Cluster {
	t.Helper()
	out := make([]*etcdtest.Cluster, len(names))
	var wg sync.WaitGroup
	for i := range names {
		wg.Add(1)
		go func() { defer wg.Done(); out[i] = etcdtest.Start(t, 1, opts) }()
	}
	wg.Wait()
	return out
}

// shardFlags are clusterFlags for a cluster of the shards cs, named names
// (the registry's first).
func shardFlags(cs []*etcdtest.Cluster, names []string, node string) []string {
	var f []string
	for i, c := range cs {
		f = append(f, "--etcd-shard", names[i]+"="+c.Endpoints())
	}
	return append(f, "--node-name", node, "--admin-rate", "0", "--stats-interval", "1s")
}

// onboardOn submits and approves an application for namespace ns through
// n with body's further approval fields (e.g. `"shard":"s1"`), and returns
// the SNAA's key and shard.
func onboardOn(t *testing.T, n *node, ns, more string) (key, shard string) {
	t.Helper()
	op := auth(n.operatorKey())
	app, _ := json.Marshal(map[string]any{
		"organisation": "Shard Lab", "technical_contact": map[string]string{"name": "T", "email": "t@example.org"},
		"administrative_contact": map[string]string{"name": "A", "email": "a@example.org"}, "policy_version": "v1",
		"maintenance_statement": "kept"})
	r := mustDo(t, "POST", n.adminURL()+"/ops/v1/applications", app, op...)
	var a struct{ ID string }
	if r.Status != http.StatusCreated || json.Unmarshal(r.Body, &a) != nil {
		t.Fatalf("submit application: %d %s", r.Status, r.Body)
	}
	body := `{"namespace":"` + ns + `"`
	if more != "" {
		body += "," + more
	}
	r = mustDo(t, "POST", n.adminURL()+"/ops/v1/applications/"+a.ID+"/approve", []byte(body+"}"), op...)
	var res struct {
		SNAA struct {
			Shard string `json:"shard"`
		} `json:"snaa"`
		Key struct {
			Secret string `json:"secret"`
		} `json:"key"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &res) != nil || res.Key.Secret == "" {
		t.Fatalf("approve %s: %d %s", body, r.Status, r.Body)
	}
	return res.Key.Secret, res.SNAA.Shard
}

// shardMetric is the value of a family's sample labelled shard on n.
func shardMetric(t *testing.T, n *node, name, shard string) float64 {
	t.Helper()
	r := mustDo(t, "GET", n.adminURL()+"/metrics", nil)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\{shard="` + regexp.QuoteMeta(shard) + `"\} (\S+)$`).FindSubmatch(r.Body)
	if m == nil {
		t.Fatalf("no %s{shard=%q} in /metrics", name, shard)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// randomURL is a URL with n hex digits of randomness in it (which
// compression cannot shrink much).
func randomURL(n int) string {
	b := make([]byte, n/2)
	rand.Read(b)
	return "https://example.org/fill/" + hex.EncodeToString(b)
}

// TestClusterShardsFill spreads three namespaces over three one-member
// etcd shards with small quotas and fills them one after the other through
// two nodes: each shard takes creates until it is full, then answers its
// namespace's writes with 507 storage-full while the shards not yet full
// go on taking theirs (the registry shard's being full included), so the
// cluster holds about three shards' worth; every record created resolves
// on both nodes on every front (frontsAnswer), /readyz and the metrics
// name the full shards, and an approval with an unknown shard is refused.
func TestClusterShardsFill(t *testing.T) {
	names := []string{"s0", "s1", "s2"}
	opts := clusterEtcd
	opts.QuotaBackendBytes = 1 << 20
	cs := startShards(t, opts, names...)
	dir := t.TempDir()
	a := startNode(t, filepath.Join(dir, "a"), shardFlags(cs, names, "a")...)
	b := startNode(t, filepath.Join(dir, "b"), shardFlags(cs, names, "b")...)

	nss := []string{"FILLA", "FILLB", "FILLC"}
	keys := make([]string, len(names))
	for i, ns := range nss {
		k, shard := onboardOn(t, a, ns, `"shard":"`+names[i]+`"`)
		if shard != names[i] {
			t.Fatalf("namespace %s approved on shard %q, want %s", ns, shard, names[i])
		}
		keys[i] = k
	}
	if _, shard := onboardOn(t, b, "PICKED", ""); !strings.HasPrefix(shard, "s") {
		t.Errorf("an approval without a shard: SNAA on shard %q, want one of %v", shard, names)
	}
	op := auth(a.operatorKey())
	r := mustDo(t, "POST", a.adminURL()+"/ops/v1/applications", []byte(`{"organisation":"X","technical_contact":{"name":"T","email":"t@example.org"},"administrative_contact":{"name":"A","email":"a@example.org"},"policy_version":"v1","maintenance_statement":"kept"}`), op...)
	var app struct{ ID string }
	json.Unmarshal(r.Body, &app)
	if r := mustDo(t, "POST", a.adminURL()+"/ops/v1/applications/"+app.ID+"/approve", []byte(`{"shard":"nowhere"}`), op...); r.Status != http.StatusUnprocessableEntity && r.Status != http.StatusBadRequest ||
		!bytes.Contains(r.Body, []byte("shard")) {
		t.Errorf("approval on an unknown shard: %d %s", r.Status, r.Body)
	}

	coll := func(i int) string { return "/testpid/v2/handles/21.T12345/" + nss[i] + "/" }
	// One record per shard made before it fills, which must resolve on
	// every front once all are full.
	short := make([]identifier, len(names))
	for i := range names {
		r := mustDo(t, "POST", []*node{a, b}[i%2].adminURL()+coll(i), payload("https://example.org/shard/"+names[i], "REGISTERED", resourceInfo("fill", "x")), auth(keys[i])...)
		if r.Status != http.StatusCreated || json.Unmarshal(r.Body, &short[i]) != nil {
			t.Fatalf("create on shard %s: %d %s", names[i], r.Status, r.Body)
		}
	}
	type made struct{ handle, url string }
	var (
		mu      sync.Mutex
		records [][]made = make([][]made, len(names))
	)
	for i := range names {
		var (
			wg    sync.WaitGroup
			full  []reply
			other []reply
		)
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n := []*node{a, b}[w%2]
				for {
					// Long URLs fill a shard in fewer creates (a DNS URI
					// record holds about 1 KB).
					url := randomURL(900)
					r := mustDo(t, "POST", n.adminURL()+coll(i), payload(url, "REGISTERED", resourceInfo("fill", "x")), auth(keys[i])...)
					mu.Lock()
					switch r.Status {
					case http.StatusCreated:
						var id identifier
						json.Unmarshal(r.Body, &id)
						records[i] = append(records[i], made{id.Handle, url})
					case http.StatusInsufficientStorage:
						full = append(full, r)
					default:
						other = append(other, r)
					}
					stop := r.Status != http.StatusCreated || len(records[i]) > 20000
					mu.Unlock()
					if stop {
						return
					}
				}
			}()
		}
		wg.Wait()
		if len(other) > 0 {
			t.Fatalf("filling shard %s: %d other replies, first %d %s", names[i], len(other), other[0].Status, other[0].Body)
		}
		if len(full) == 0 {
			t.Fatalf("shard %s not full after %d creates", names[i], len(records[i]))
		}
		if r := full[0]; !bytes.Contains(r.Body, []byte(`"type":"/problems/storage-full"`)) || !bytes.Contains(r.Body, []byte("shard "+names[i])) {
			t.Fatalf("write to full shard %s: %d %s", names[i], r.Status, r.Body)
		}
		t.Logf("shard %s full after %d creates", names[i], len(records[i]))
		// The shards not yet full take writes through either node; the
		// full one refuses them through both.
		for j := i + 1; j < len(names); j++ {
			for _, n := range []*node{a, b} {
				r := mustDo(t, "POST", n.adminURL()+coll(j), payload(randomURL(10), "REGISTERED", resourceInfo("fill", "x")), auth(keys[j])...)
				if r.Status != http.StatusCreated {
					t.Fatalf("shard %s with shard %s full: %d %s", names[j], names[i], r.Status, r.Body)
				}
			}
		}
		for _, n := range []*node{a, b} {
			if r := mustDo(t, "POST", n.adminURL()+coll(i), payload(randomURL(10), "REGISTERED", resourceInfo("fill", "x")), auth(keys[i])...); r.Status != http.StatusInsufficientStorage ||
				!strings.HasPrefix(r.Header.Get("Content-Type"), "application/problem+json") || !bytes.Contains(r.Body, []byte(`"type":"/problems/storage-full"`)) {
				t.Fatalf("full shard %s through %s: %d %s", names[i], n.data, r.Status, r.Body)
			}
		}
	}
	lo, total := len(records[0]), 0
	for _, rs := range records {
		lo = min(lo, len(rs))
		total += len(rs)
	}
	t.Logf("%d creates over three shards (the smallest shard took %d)", total, lo)
	if total < 5*lo/2 {
		t.Errorf("three shards took %d creates, the smallest %d: want about three times one shard's", total, lo)
	}

	// Every acknowledged create resolves on both nodes, on every front.
	start := time.Now()
	for i, rs := range records {
		for _, n := range []*node{a, b} {
			last := rs[len(rs)-1]
			waitUntil(t, func() bool { return mustDo(t, "GET", n.resolverURL()+"/"+last.handle, nil).Status == http.StatusFound })
			checkFronts(t, n, short[i].Handle, "https://example.org/shard/"+names[i])
		}
		var (
			wg    sync.WaitGroup
			next  = make(chan made)
			fails = make([]error, 8)
		)
		for w := range fails {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for m := range next {
					for _, n := range []*node{a, b} {
						if err := frontsAnswer(t, n, m.handle, m.url); err != nil && fails[w] == nil {
							fails[w] = err
						}
					}
				}
			}()
		}
		for _, m := range rs {
			next <- m
		}
		close(next)
		wg.Wait()
		if err := errors.Join(fails...); err != nil {
			t.Fatalf("shard %s: %v", names[i], err)
		}
	}
	t.Logf("%d records resolved on both nodes on every front in %v", total, time.Since(start))
	for _, n := range []*node{a, b} {
		s := readyzBody(t, n)
		for _, name := range names {
			if !strings.Contains(s, "shard "+name+": ") {
				t.Errorf("/readyz of %s with every shard full: %q", n.data, s)
			}
		}
	}
	for _, name := range names {
		if v := shardMetric(t, a, "pidnode_cluster_storage_full", name); v != 1 {
			t.Errorf("storage_full{shard=%q}: %v", name, v)
		}
	}
}

// TestClusterShardsTwoNodes is TestClusterTwoNodes and TestClusterQuorumLoss
// over two etcd shards, a namespace on each: writes through either node
// resolve on both and go to their namespace's etcd only; concurrent creates
// of one id give one winner; node b and the data shard's etcd SIGKILLed in
// the middle of a burst of creates into both namespaces through a lose no
// acknowledged create (the registry shard's all are), and b resumes from
// its applied revisions; while the data shard's etcd is away, its
// namespace's writes answer 503 while the registry shard's namespace takes
// writes through both nodes, both resolve, and b restarted meanwhile
// starts, and the writes resume when it is back; a node away while one shard compacts catches up, for each shard;
// the exports are the same bytes.
func TestClusterShardsTwoNodes(t *testing.T) {
	names := []string{"s0", "s1"}
	opts := clusterEtcd
	opts.Processes = true // members are killed
	cs := startShards(t, opts, names...)
	dir := t.TempDir()
	a := startNode(t, filepath.Join(dir, "a"), shardFlags(cs, names, "a")...)
	b := startNode(t, filepath.Join(dir, "b"), shardFlags(cs, names, "b")...)
	nss := []string{"SHA", "SHB"}
	keys := make([]string, 2)
	for i, ns := range nss {
		keys[i], _ = onboardOn(t, []*node{a, b}[i], ns, `"shard":"`+names[i]+`","custom_ids":true`)
	}
	coll := func(i int) string { return "/testpid/v2/handles/21.T12345/" + nss[i] + "/" }
	create := func(n *node, i int, url string) identifier {
		t.Helper()
		r := mustDo(t, "POST", n.adminURL()+coll(i), payload(url, "REGISTERED", resourceInfo("two", "x")), auth(keys[i])...)
		var id identifier
		if r.Status != http.StatusCreated || json.Unmarshal(r.Body, &id) != nil {
			t.Fatalf("create in %s through %s: %d %s", nss[i], n.data, r.Status, r.Body)
		}
		return id
	}

	// Through each node into each namespace: on both nodes, and in its
	// shard's etcd only.
	var gone, goneURL string // a record of the data shard's namespace
	for i := range nss {
		for j, n := range []*node{a, b} {
			url := "https://example.org/two/" + nss[i] + "/" + strconv.Itoa(j)
			id := create(n, i, url)
			gone, goneURL = id.Handle, url
			other := []*node{b, a}[j]
			waitUntil(t, func() bool {
				return mustDo(t, "GET", other.resolverURL()+"/"+id.Handle, nil).Status == http.StatusFound
			})
			checkFronts(t, other, id.Handle, url)
			for k, c := range cs {
				x, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				got, err := c.Client().Get(x, "/pidnode/records/", clientv3.WithPrefix())
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				found := false
				for _, kv := range got.Kvs {
					found = found || bytes.Contains(etcdValue(t, kv.Value), []byte(url))
				}
				if found != (k == i) {
					t.Fatalf("record of %s (shard %s) in shard %s's etcd: %v", nss[i], names[i], names[k], found)
				}
			}
		}
	}

	// The same custom id through both nodes at once: exactly one 201.
	for round := 0; round < 3; round++ {
		url := coll(1) + "SAME-" + strconv.Itoa(round)
		var wg sync.WaitGroup
		status := make([]int, 2)
		for i, n := range []*node{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				status[i] = mustDo(t, "PUT", n.adminURL()+url, payload("https://example.org/same", "REGISTERED", resourceInfo("same", "x")),
					append(auth(keys[1]), "If-None-Match", "*")...).Status
			}()
		}
		wg.Wait()
		if created := bytes.Count(fmt.Appendf(nil, "%v", status), []byte("201")); created != 1 {
			t.Fatalf("concurrent create %s: statuses %v, want exactly one 201", url, status)
		}
	}

	// SIGKILL b and the data shard's etcd in the middle of a burst of
	// creates through a into both namespaces: every create of the registry
	// shard's namespace is acknowledged, those of the data shard's until
	// its etcd goes (then one 503, undecided); b, restarted, resumes from its
	// applied revisions, and every acknowledged create resolves on both.
	var (
		made     = map[string]string{} // handle → URL
		refused  int
		mu       sync.Mutex
		burst    sync.WaitGroup
		inFlight = make(chan struct{}, 4)
	)
	for w := 0; w < 4; w++ {
		burst.Add(1)
		go func() {
			defer burst.Done()
			var once sync.Once
			started := func() { once.Do(func() { inFlight <- struct{}{} }) }
			defer started()
			for i := 0; i < 15; i++ {
				url := fmt.Sprintf("https://example.org/burst/%d/%d", w, i)
				r := mustDo(t, "POST", a.adminURL()+coll(w%2), payload(url, "REGISTERED", resourceInfo("burst", "x")), auth(keys[w%2])...)
				if i == 2 {
					started()
				}
				var id identifier
				mu.Lock()
				switch {
				case r.Status == http.StatusCreated && json.Unmarshal(r.Body, &id) == nil:
					made[id.Handle] = url
				case r.Status == http.StatusServiceUnavailable && w%2 == 1:
					refused++
				default:
					t.Errorf("burst create in %s through a: %d %s", nss[w%2], r.Status, r.Body)
				}
				mu.Unlock()
				if r.Status != http.StatusCreated {
					return // the rest would wait for etcd as long
				}
			}
		}()
	}
	for range 4 {
		<-inFlight
	}
	b.kill()
	cs[1].Members()[0].Kill()
	// A create of the registry shard's namespace right away, while a still
	// counts the data shard as connected (its last answer is recent): it
	// syncs only the shards it reads, so it does not wait out the data
	// shard's sync timeout.
	start := time.Now()
	create(a, 0, "https://example.org/two/quorumless")
	if took := time.Since(start); took >= time.Second {
		t.Errorf("create in the registry shard's namespace while the data shard has no quorum took %v, want < 1s", took)
	}
	// b starts again while the data shard's etcd is still away (and the
	// burst's last creates into it wait for it), from its applied
	// revisions.
	b = startNode(t, filepath.Join(dir, "b"), shardFlags(cs, names, "b")...)
	if strings.Contains(b.stderr.String(), "loaded snapshot") {
		t.Errorf("b loaded a snapshot on restart instead of resuming from its applied revisions:\n%s", b.stderr.String())
	}

	// The data shard's etcd gone: its namespace's writes answer 503, the
	// registry shard's namespace's go on through both nodes, resolution of
	// both goes on.
	var wg sync.WaitGroup
	for _, n := range []*node{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			r := mustDo(t, "POST", n.adminURL()+coll(1), payload("https://example.org/two/gone", "REGISTERED", resourceInfo("two", "x")), auth(keys[1])...)
			if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" || time.Since(start) > 10*time.Second {
				t.Errorf("write to a shard without quorum through %s: %d after %v %s", n.data, r.Status, time.Since(start), r.Body)
			}
		}()
	}
	burst.Wait()
	for _, n := range []*node{a, b} {
		url := "https://example.org/two/meanwhile/" + filepath.Base(n.data)
		id := create(n, 0, url)
		checkFronts(t, n, id.Handle, url)
		checkFronts(t, n, gone, goneURL)
	}
	wg.Wait()
	t.Logf("burst: %d creates acknowledged, %d refused while shard s1's etcd was away", len(made), refused)
	if len(made) < 30+6 {
		t.Fatalf("burst: %d creates acknowledged, want the registry shard's 30 and the data shard's first 6 at least", len(made))
	}
	waitUntil(t, func() bool {
		s := readyzBody(t, a)
		return strings.Contains(s, "writes: unavailable: shard s1: ") && !strings.Contains(s, "shard s0")
	})
	cs[1].Members()[0].Restart()
	waitUntil(t, func() bool {
		r := mustDo(t, "POST", b.adminURL()+coll(1), payload("https://example.org/two/back", "REGISTERED", resourceInfo("two", "x")), auth(keys[1])...)
		return r.Status == http.StatusCreated
	})
	// Every create acknowledged in the burst, on both nodes.
	for h, url := range made {
		for _, n := range []*node{a, b} {
			waitUntil(t, func() bool {
				r := mustDo(t, "GET", n.resolverURL()+"/"+h, nil)
				return r.Status == http.StatusFound && r.Header.Get("Location") == url
			})
		}
	}

	// b away while one shard compacts the history it would resume from,
	// the data shard, then the registry shard: it catches up by a snapshot
	// that shard asks for and serves every write of both.
	for _, k := range []int{1, 0} {
		b.stop(20 * time.Second)
		var away []string
		for i := 0; i < 10; i++ {
			away = append(away, create(a, i%2, fmt.Sprintf("https://example.org/two/away/%d/%d", k, i)).Handle)
		}
		cs[k].Compact()
		b = startNode(t, filepath.Join(dir, "b"), shardFlags(cs, names, "b")...)
		for _, h := range away {
			waitUntil(t, func() bool { return mustDo(t, "GET", b.resolverURL()+"/"+h, nil).Status == http.StatusFound })
		}
		// The registry shard's lines name no shard.
		resynced := false
		for _, l := range strings.Split(b.stderr.String(), "\n") {
			if strings.Contains(l, `msg="cluster: swapped in a snapshot"`) {
				resynced = resynced || k == 0 && !strings.Contains(l, " shard=") || k > 0 && strings.Contains(l, " shard="+names[k]+" ")
			}
		}
		if !resynced {
			t.Errorf("b did not resync after shard %s's compaction:\n%s", names[k], b.stderr.String())
		}
	}

	waitUntil(t, func() bool { n := auditLen(t, a); return n > 20 && n == auditLen(t, b) })
	a.stop(20 * time.Second)
	b.stop(20 * time.Second)
	ea, eb := export(t, a.data), export(t, b.data)
	if !bytes.Equal(ea, eb) || len(ea) == 0 {
		t.Errorf("exports differ: a %d bytes, b %d bytes", len(ea), len(eb))
	}
}

// TestClusterShardsMoveNamespace moves a namespace from the registry shard
// to another with `pidnode cluster move-namespace` while both nodes take a
// stream of creates and updates in it: every acknowledged write is in the
// new shard's etcd and on both nodes afterwards, none of the namespace's
// records is left in the old shard's etcd, resolution never fails, another
// namespace of the old shard written meanwhile loses nothing, and the
// writes after the move go to the new shard.
func TestClusterShardsMoveNamespace(t *testing.T) {
	names := []string{"s0", "s1"}
	cs := startShards(t, clusterEtcd, names...)
	dir := t.TempDir()
	a := startNode(t, filepath.Join(dir, "a"), shardFlags(cs, names, "a")...)
	b := startNode(t, filepath.Join(dir, "b"), shardFlags(cs, names, "b")...)
	key, _ := onboardOn(t, a, "MOV", `"shard":"s0"`)
	coll := "/testpid/v2/handles/21.T12345/MOV/"
	// Another namespace on the same shard, written meanwhile (its writes
	// share transactions with the moving one's).
	stayKey, _ := onboardOn(t, b, "STAY", `"shard":"s0"`)
	stayColl := "/testpid/v2/handles/21.T12345/STAY/"

	var (
		mu      sync.Mutex
		acked   = map[string]string{} // handle → its last acknowledged URL
		refused = map[int]int{}
		bodies  = map[int]string{}
		stop    = make(chan struct{})
		wg      sync.WaitGroup
	)
	stayed := map[string]string{}
	for w := 0; w < 6; w++ {
		n := []*node{a, b}[w%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				url := fmt.Sprintf("https://example.org/move/%d/%d", w, i)
				if w >= 4 {
					r := mustDo(t, "POST", n.adminURL()+stayColl, payload(url, "REGISTERED", resourceInfo("stay", "x")), auth(stayKey)...)
					var id identifier
					mu.Lock()
					if r.Status != http.StatusCreated || json.Unmarshal(r.Body, &id) != nil {
						refused[r.Status]++
						bodies[r.Status] = string(r.Body)
					} else {
						stayed[id.Handle] = url
					}
					mu.Unlock()
					continue
				}
				r := mustDo(t, "POST", n.adminURL()+coll, payload(url, "REGISTERED", resourceInfo("move", "x")), auth(key)...)
				var id identifier
				if r.Status != http.StatusCreated || json.Unmarshal(r.Body, &id) != nil {
					mu.Lock()
					refused[r.Status]++
					bodies[r.Status] = string(r.Body)
					mu.Unlock()
					continue
				}
				mu.Lock()
				acked[id.Handle] = url
				mu.Unlock()
				// And an update of it, with its ETag.
				r = mustDo(t, "PUT", n.adminURL()+coll+id.ID, payload(url+"/v2", "REGISTERED", resourceInfo("move", "y")),
					append(auth(key), "If-Match", etag(id.Version))...)
				mu.Lock()
				if r.Status == http.StatusOK {
					acked[id.Handle] = url + "/v2"
				} else {
					refused[r.Status]++
					bodies[r.Status] = string(r.Body)
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(700 * time.Millisecond)
	args := []string{"cluster", "move-namespace", "--namespace", "MOV", "--to", "s1"}
	for i, c := range cs {
		args = append(args, "--etcd-shard", names[i]+"="+c.Endpoints())
	}
	start := time.Now()
	out, err := exec.Command(binPath, args...).CombinedOutput()
	if err != nil {
		close(stop)
		wg.Wait()
		t.Fatalf("move-namespace: %v\n%s", err, out)
	}
	t.Logf("%s(%v)", out, time.Since(start))
	time.Sleep(700 * time.Millisecond)
	close(stop)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d identifiers acknowledged; refused: %v", len(acked), refused)
	for status := range refused {
		if status != http.StatusServiceUnavailable {
			t.Errorf("writes during the move answered %v: %s", refused, bodies[status])
		}
	}
	if !bytes.Contains(out, []byte("from shard s0 to shard s1")) {
		t.Errorf("move-namespace said: %s", out)
	}
	// The operator's audit log says so, on both nodes.
	for _, n := range []*node{a, b} {
		waitUntil(t, func() bool {
			r := mustDo(t, "GET", n.adminURL()+"/ops/v1/audit?limit=1000", nil, "Authorization", "Bearer "+n.operatorKey())
			return bytes.Contains(r.Body, []byte(`"action":"snaa.update"`)) && bytes.Contains(r.Body, []byte(`"shard":"s1"`))
		})
	}

	// etcd: every acknowledged write in s1 as acknowledged, nothing of MOV
	// left in s0.
	inEtcd := func(c *etcdtest.Cluster) map[string][]byte {
		x, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		got, err := c.Client().Get(x, "/pidnode/records/", clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		m := map[string][]byte{}
		for _, kv := range got.Kvs {
			if bytes.Contains(kv.Key, []byte("/MOV/")) {
				m[string(kv.Key)] = etcdValue(t, kv.Value)
			}
		}
		return m
	}
	if left := inEtcd(cs[0]); len(left) > 0 {
		t.Errorf("%d records of MOV left in shard s0's etcd", len(left))
	}
	moved := inEtcd(cs[1])
	for h, url := range acked {
		found := false
		for k, v := range moved {
			// The storage key holds the id without its dashes.
			if strings.HasSuffix(k, "/"+strings.ReplaceAll(h[strings.LastIndexByte(h, '/')+1:], "-", "")) {
				found = bytes.Contains(v, []byte(url)) && (strings.HasSuffix(url, "/v2") || !bytes.Contains(v, []byte(url+"/v2")))
			}
		}
		if !found {
			t.Fatalf("%s (%s) acknowledged but not in shard s1's etcd as acknowledged", h, url)
		}
	}
	// Both nodes: every acknowledged write, of both namespaces.
	t.Logf("%d identifiers of the other namespace", len(stayed))
	for h, url := range stayed {
		acked[h] = url
	}
	for _, n := range []*node{a, b} {
		for h, url := range acked {
			var r reply
			waitUntil(t, func() bool {
				r = mustDo(t, "GET", n.resolverURL()+"/"+h, nil)
				return r.Header.Get("Location") == url
			})
		}
	}
	// Later writes through both nodes go to s1.
	for _, n := range []*node{a, b} {
		r := mustDo(t, "POST", n.adminURL()+coll, payload("https://example.org/move/after", "REGISTERED", resourceInfo("move", "z")), auth(key)...)
		if r.Status != http.StatusCreated {
			t.Fatalf("create after the move: %d %s", r.Status, r.Body)
		}
	}
	if got, want := len(inEtcd(cs[1])), len(moved)+2; got != want {
		t.Errorf("shard s1 holds %d records of MOV after two more creates, want %d", got, want)
	}
}
