package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pidnode/internal/etcdtest"
)

// feedEvent is the part of a change feed event the test reads.
type feedEvent struct {
	Seq    uint64 `json:"seq"`
	Action string `json:"action"`
	Handle string `json:"handle"`
}

// namespaceSeqs is the truth a feed is compared with: the sequence numbers
// of the identifier writes in namespace DMO under the test prefix (the feed
// of testColl) in n's whole audit log.
func namespaceSeqs(t *testing.T, n *node) []uint64 {
	t.Helper()
	var out []uint64
	var after uint64
	for {
		r := mustDo(t, "GET", fmt.Sprintf("%s/ops/v1/audit?limit=1000&after=%d", n.adminURL(), after), nil, "Authorization", "Bearer "+n.operatorKey())
		if r.Status != http.StatusOK {
			t.Fatalf("audit: %d %s", r.Status, r.Body)
		}
		var v struct {
			Entries []struct {
				Seq    uint64 `json:"seq"`
				Action string `json:"action"`
				Target string `json:"target"`
			} `json:"entries"`
		}
		if err := json.Unmarshal(r.Body, &v); err != nil {
			t.Fatal(err)
		}
		for _, e := range v.Entries {
			after = e.Seq
			if strings.HasPrefix(e.Action, "handle.") && strings.HasPrefix(e.Target, "21.T12345/") && strings.Contains(e.Target, "/DMO/") {
				out = append(out, e.Seq)
			}
		}
		if len(v.Entries) < 1000 {
			return out
		}
	}
}

// TestClusterEventsFeed: on two pidnode processes sharing one etcd, the
// change feed numbers events alike on both, so a reader that pages through
// node a with ?after= and goes on through node b, and an SSE client that
// starts on b and reconnects to a with Last-Event-ID, while writers create
// through both nodes, each end with exactly the namespace's audit log: no
// gap, no duplicate.
func TestClusterEventsFeed(t *testing.T) {
	c := etcdtest.Start(t, 1, clusterEtcd)
	dir := t.TempDir()
	a := startNode(t, filepath.Join(dir, "a"), append(clusterFlags(c, "a"), "--demo")...)
	b := startNode(t, filepath.Join(dir, "b"), clusterFlags(c, "b")...)
	key := a.Key
	feed := testColl + "events"

	// The SSE client starts on b, from the beginning.
	openSSE := func(n *node, lastID string) (*http.Response, *bufio.Reader) {
		t.Helper()
		req, err := http.NewRequest("GET", n.adminURL()+feed+"?limit=5", nil)
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
		if res.StatusCode != http.StatusOK {
			t.Fatalf("stream on %s: %d", n.adminURL(), res.StatusCode)
		}
		return res, bufio.NewReader(res.Body)
	}
	// readSSE returns the next event's id and data.
	readSSE := func(rd *bufio.Reader) (string, feedEvent, error) {
		var id string
		var ev feedEvent
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				return "", ev, err
			}
			line = strings.TrimSuffix(line, "\n")
			switch {
			case line == "" && id != "":
				if id != strconv.FormatUint(ev.Seq, 10) {
					return "", ev, fmt.Errorf("event id %s, data seq %d", id, ev.Seq)
				}
				return id, ev, nil
			case strings.HasPrefix(line, "id: "):
				id = line[4:]
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(line[6:]), &ev); err != nil {
					return "", ev, fmt.Errorf("data %q: %w", line, err)
				}
			}
		}
	}
	nextSSE := func(rd *bufio.Reader) (string, feedEvent) {
		t.Helper()
		id, ev, err := readSSE(rd)
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		return id, ev
	}
	res, rd := openSSE(b, "")

	const writers, each = 4, 10
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := []*node{a, b}[w%2]
			for i := 0; i < each; i++ {
				r, err := do(defaultClient, "POST", n.adminURL()+testColl, payload(fmt.Sprintf("https://example.org/feed/%d/%d", w, i), "REGISTERED", resourceInfo("feed", "x")), auth(key)...)
				if err != nil || r.Status != http.StatusCreated {
					t.Errorf("create through node %d: %v %d %s", w%2, err, r.Status, r.Body)
					return
				}
			}
		}()
	}
	writing := make(chan struct{})
	go func() { wg.Wait(); close(writing) }()

	// The pager: pages of 4 through a, then the same cursor through b.
	var paged []uint64
	var after uint64
	page := func(n *node) int {
		r := mustDo(t, "GET", fmt.Sprintf("%s%s?after=%d&limit=4", n.adminURL(), feed, after), nil, auth(key)...)
		if r.Status != http.StatusOK {
			t.Fatalf("feed page: %d %s", r.Status, r.Body)
		}
		var p struct {
			Events    []feedEvent `json:"events"`
			NextAfter uint64      `json:"next_after"`
		}
		if err := json.Unmarshal(r.Body, &p); err != nil {
			t.Fatal(err)
		}
		for _, e := range p.Events {
			paged = append(paged, e.Seq)
		}
		after = p.NextAfter
		return len(p.Events)
	}
	for i := 0; i < 5; i++ {
		page(a)
	}

	// The SSE client takes some events from b, then reconnects to a.
	var streamed []uint64
	last := ""
	for len(streamed) < 12 {
		id, ev := nextSSE(rd)
		streamed = append(streamed, ev.Seq)
		last = id
	}
	res.Body.Close()
	res, rd = openSSE(a, last)
	defer res.Body.Close()

	<-writing
	// Both nodes have applied everything etcd holds once each answers the
	// same log (a write acknowledged by one node reaches the other within
	// the replication lag).
	var want []uint64
	waitUntil(t, func() bool {
		want = namespaceSeqs(t, a)
		return slices.Equal(want, namespaceSeqs(t, b))
	})
	if len(want) < writers*each {
		t.Fatalf("%d writes of DMO in the audit log, want at least %d", len(want), writers*each)
	}
	// The pager goes on through b until an empty page.
	for page(b) > 0 {
	}
	if !slices.Equal(paged, want) {
		t.Fatalf("paged through a then b: %d seqs %v\nwant %d %v", len(paged), paged, len(want), want)
	}
	for len(streamed) < len(want) {
		_, ev := nextSSE(rd)
		streamed = append(streamed, ev.Seq)
	}
	if !slices.Equal(streamed, want) {
		t.Fatalf("streamed from b then a: %d seqs %v\nwant %d %v", len(streamed), streamed, len(want), want)
	}
	// A write after the catch-up arrives on the open stream.
	id := a.create(t, key, payload("https://example.org/feed/last", "REGISTERED", resourceInfo("feed", "last")))
	type result struct {
		ev  feedEvent
		err error
	}
	done := make(chan result, 1)
	go func() { _, ev, err := readSSE(rd); done <- result{ev, err} }()
	select {
	case r := <-done:
		ev := r.ev
		if r.err != nil {
			t.Fatalf("live event: %v", r.err)
		}
		if ev.Handle != id.Handle || ev.Seq <= want[len(want)-1] {
			t.Errorf("live event %+v, want %s after %d", ev, id.Handle, want[len(want)-1])
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the live write did not reach the stream within 15 s")
	}
}

// TestClusterStreamEndsOnRevocation: an event stream open on node a ends
// within a second of its key's revocation through node b reaching a through
// etcd's watch, far sooner than the 15 s heartbeat; the stream of the
// SNAA's other key on a stays open and receives the next write.
func TestClusterStreamEndsOnRevocation(t *testing.T) {
	c := etcdtest.Start(t, 1, clusterEtcd)
	dir := t.TempDir()
	a := startNode(t, filepath.Join(dir, "a"), append(clusterFlags(c, "a"), "--demo")...)
	b := startNode(t, filepath.Join(dir, "b"), clusterFlags(c, "b")...)
	var me struct {
		SNAA struct {
			ID string `json:"id"`
		} `json:"snaa"`
	}
	if r := mustDo(t, "GET", a.adminURL()+"/testpid/v2/me", nil, auth(a.Key)...); r.Status != http.StatusOK || json.Unmarshal(r.Body, &me) != nil {
		t.Fatalf("me: %d %s", r.Status, r.Body)
	}
	var issued struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	r := mustDo(t, "POST", a.adminURL()+"/ops/v1/snaas/"+me.SNAA.ID+"/keys", []byte(`{"name":"to revoke"}`), auth(a.operatorKey())...)
	if r.Status != http.StatusCreated || json.Unmarshal(r.Body, &issued) != nil {
		t.Fatalf("issuing a key on a: %d %s", r.Status, r.Body)
	}
	// The streams start after the namespace's last event so far.
	var after uint64
	for {
		r := mustDo(t, "GET", fmt.Sprintf("%s%sevents?after=%d&limit=1000", a.adminURL(), testColl, after), nil, auth(a.Key)...)
		var p struct {
			Events    []feedEvent `json:"events"`
			NextAfter uint64      `json:"next_after"`
		}
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &p) != nil {
			t.Fatalf("feed page: %d %s", r.Status, r.Body)
		}
		after = p.NextAfter
		if len(p.Events) < 1000 {
			break
		}
	}
	// open opens a stream on a and reads its first line, after which the
	// stream is being served.
	open := func(key string) (*http.Response, *bufio.Reader) {
		t.Helper()
		req, err := http.NewRequest("GET", fmt.Sprintf("%s%sevents?after=%d", a.adminURL(), testColl, after), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Accept", "text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusOK {
			t.Fatalf("stream: %d", res.StatusCode)
		}
		rd := bufio.NewReader(res.Body)
		if _, err := rd.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		return res, rd
	}
	// untilEnd reads the stream to its end (nil) or to its first event.
	untilEnd := func(rd *bufio.Reader) <-chan error {
		done := make(chan error, 1)
		go func() {
			for {
				line, err := rd.ReadString('\n')
				if err != nil {
					done <- nil
					return
				}
				if strings.HasPrefix(line, "data: ") {
					done <- fmt.Errorf("event %s", strings.TrimSpace(line))
					return
				}
			}
		}()
		return done
	}
	revokedRes, revokedRd := open(issued.Secret)
	defer revokedRes.Body.Close()
	keptRes, keptRd := open(a.Key)
	defer keptRes.Body.Close()
	ended := untilEnd(revokedRd)

	r = mustDo(t, "DELETE", b.adminURL()+"/ops/v1/snaas/"+me.SNAA.ID+"/keys/"+issued.ID, nil, auth(b.operatorKey())...)
	if r.Status != http.StatusNoContent {
		t.Fatalf("revoking through b: %d %s", r.Status, r.Body)
	}
	revoked := time.Now()
	// Within a second of being applied on a; the replication to a is
	// part of what is allowed for.
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("the revoked key's stream on a sent an %v", err)
		}
		if d := time.Since(revoked); d > 2*time.Second {
			t.Errorf("the revoked key's stream on a ended %v after the revocation through b, want within about 1 s", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the revoked key's stream on a is still open 5 s after the revocation through b")
	}
	if r := mustDo(t, "GET", a.adminURL()+"/testpid/v2/me", nil, auth(issued.Secret)...); r.Status != http.StatusUnauthorized {
		t.Errorf("the revoked key on a: %d, want 401", r.Status)
	}

	// The SNAA's other key's stream is still served.
	id := b.create(t, a.Key, payload("https://example.org/feed/after-revocation", "REGISTERED", resourceInfo("feed", "kept")))
	got := make(chan string, 1)
	go func() {
		for {
			line, err := keptRd.ReadString('\n')
			if err != nil {
				got <- "end: " + err.Error()
				return
			}
			if strings.HasPrefix(line, "data: ") {
				got <- line
				return
			}
		}
	}()
	select {
	case line := <-got:
		if !strings.Contains(line, id.Handle) {
			t.Errorf("the other key's stream: %q, want the event of %s", line, id.Handle)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the other key's stream got no event within 10 s")
	}
}
