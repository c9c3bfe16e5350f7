package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

// state is what one acknowledged (or attempted) write left in a record.
type state struct {
	version    uint64
	url, label string
	meta       string // the whole metadata object as canonical JSON
}

// canonical is m as JSON with sorted keys (encoding/json sorts map keys).
func canonical(m map[string]any) string {
	b, _ := json.Marshal(m)
	return string(b)
}

// entry tracks one identifier the crash test wrote: the last state the node
// acknowledged and, if a write was cut off by the kill, the state it tried to
// write (which may or may not have reached the disk).
type entry struct {
	id      string
	handle  string
	acked   state
	pending *state
}

// ledger is every identifier written so far. Each identifier belongs to one
// writer goroutine per round, so its writes are sequential.
type ledger struct {
	mu      sync.Mutex
	entries []*entry
}

func (l *ledger) add(e *entry) {
	l.mu.Lock()
	l.entries = append(l.entries, e)
	l.mu.Unlock()
}

func (l *ledger) snapshot() []*entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*entry(nil), l.entries...)
}

func crashRounds(t *testing.T) int {
	if s := os.Getenv("PIDNODE_CRASH_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("PIDNODE_CRASH_ROUNDS=%q: want a positive integer", s)
		}
		return n
	}
	return 3
}

// TestCrashSafety drives concurrent creates and updates through the admin API
// of the real binary, SIGKILLs it at a random moment, restarts it and checks
// that every acknowledged write is there with exactly the acknowledged content
// (admin API and /api/handles), and that the bbolt file passes tx.Check after
// every kill (docs/product.md §8: every acknowledged write is fsynced before
// the reply). Every round has at least as many acknowledged writes as writers
// before its kill.
func TestCrashSafety(t *testing.T) {
	rounds := crashRounds(t)
	const writers = 8
	data := filepath.Join(t.TempDir(), "data")
	// The writers drive one key as fast as the node commits: what is under
	// test is what survives a kill, not the per-key rate limit.
	n := startNode(t, data, "--demo", "--admin-rate", "0")
	key := n.Key
	led := &ledger{}
	var totalAcked, totalCreates, totalUpdates, totalCut, totalUnackedSeen int64
	start := time.Now()
	for round := 1; round <= rounds; round++ {
		if round > 1 {
			n = startNode(t, data, "--admin-rate", "0")
			totalUnackedSeen += verifyLedger(t, n, key, led)
		}
		var acked, creates, updates, cut atomic.Int64
		var wg sync.WaitGroup
		owned := led.snapshot()
		for w := range writers {
			var mine []*entry
			for i, e := range owned {
				if i%writers == w {
					mine = append(mine, e)
				}
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				crashWriter(t, n, key, led, mine, round, w, &acked, &creates, &updates, &cut)
			}()
		}
		// Kill at a random moment while the writers are busy, once this
		// round has had writes acknowledged (counted, not timed: a round
		// killed before any acknowledgement would check nothing new).
		for deadline := time.Now().Add(30 * time.Second); acked.Load() < writers; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) || t.Failed() {
				n.kill()
				wg.Wait()
				t.Fatalf("round %d: only %d writes acknowledged after 30 s", round, acked.Load())
			}
		}
		time.Sleep(rand.N(1200 * time.Millisecond))
		n.kill()
		wg.Wait()
		checkBolt(t, filepath.Join(data, "pidnode.db"))
		if acked.Load() < writers {
			t.Errorf("round %d: %d acknowledged writes before the SIGKILL, want at least %d", round, acked.Load(), writers)
		}
		t.Logf("round %d: SIGKILL after %d acknowledged writes (%d creates, %d updates), %d writes cut off in flight",
			round, acked.Load(), creates.Load(), updates.Load(), cut.Load())
		totalAcked += acked.Load()
		totalCreates += creates.Load()
		totalUpdates += updates.Load()
		totalCut += cut.Load()
		if t.Failed() {
			break
		}
	}
	n = startNode(t, data, "--admin-rate", "0") // it reads back every write with one key
	totalUnackedSeen += verifyLedger(t, n, key, led)
	if code := n.stop(20 * time.Second); code != 0 {
		t.Errorf("final SIGTERM: exit %d", code)
	}
	checkBolt(t, filepath.Join(data, "pidnode.db"))
	if totalAcked == 0 {
		t.Error("no write was acknowledged in any round")
	}
	summary := fmt.Sprintf("crash safety: %d rounds, %d acknowledged writes (%d creates, %d updates) over %d identifiers, "+
		"0 lost; %d writes cut off by SIGKILL (%d of them found applied); bbolt Check clean after every kill; %v",
		rounds, totalAcked, totalCreates, totalUpdates, len(led.snapshot()), totalCut, totalUnackedSeen, time.Since(start).Round(time.Millisecond))
	if t.Failed() {
		summary = "FAILED " + summary
	}
	t.Log(summary)
	fmt.Println("SUMMARY " + summary)
}

// crashWriter creates new identifiers and updates its own until the node dies.
// A write whose reply did not arrive is recorded as pending, never as acked.
func crashWriter(t *testing.T, n *node, key string, led *ledger, mine []*entry, round, w int,
	acked, creates, updates, cut *atomic.Int64) {
	c := httpClient(10 * time.Second)
	for i := 0; ; i++ {
		label := fmt.Sprintf("round %d writer %d write %d", round, w, i)
		url := fmt.Sprintf("https://example.org/crash/r%d/w%d/%d", round, w, i)
		if len(mine) == 0 || rand.N(3) == 0 {
			r, err := do(c, "POST", n.adminURL()+testColl, payload(url, "REGISTERED", resourceInfo(label, "crash test")), auth(key)...)
			if err != nil {
				cut.Add(1)
				return // the node is gone; an unacknowledged create leaves an unknown id behind, which is fine
			}
			if r.Status != http.StatusCreated {
				t.Errorf("create: %d %s", r.Status, r.Body)
				return
			}
			var id identifier
			if err := json.Unmarshal(r.Body, &id); err != nil {
				t.Errorf("create reply: %v: %s", err, r.Body)
				return
			}
			if id.URL != url || labelOf(id.Metadata) != label || id.Version == 0 {
				t.Errorf("create reply does not echo the write: %s", r.Body)
			}
			e := &entry{id: id.ID, handle: id.Handle, acked: state{id.Version, url, label, canonical(id.Metadata)}}
			led.add(e)
			mine = append(mine, e)
			creates.Add(1)
			acked.Add(1)
			continue
		}
		e := mine[rand.N(len(mine))]
		// What the update should leave: the acknowledged metadata with
		// resource_info replaced (docs/product.md §4: present fields replace).
		var meta map[string]any
		json.Unmarshal([]byte(e.acked.meta), &meta)
		var ri map[string]any
		rb, _ := json.Marshal(resourceInfo(label, "crash test"))
		json.Unmarshal(rb, &ri)
		meta["resource_info"] = ri
		next := state{e.acked.version + 1, url, label, canonical(meta)}
		body, _ := json.Marshal(map[string]any{"url": url, "metadata": map[string]any{"resource_info": ri}})
		e.pending = &next
		r, err := do(c, "PUT", n.adminURL()+testColl+e.id, body, append(auth(key), "If-Match", etag(e.acked.version))...)
		if err != nil {
			cut.Add(1)
			return
		}
		if r.Status != http.StatusOK {
			t.Errorf("update %s: %d %s", e.handle, r.Status, r.Body)
			return
		}
		var id identifier
		if err := json.Unmarshal(r.Body, &id); err != nil {
			t.Errorf("update reply: %v: %s", err, r.Body)
			return
		}
		if got := (state{id.Version, id.URL, labelOf(id.Metadata), canonical(id.Metadata)}); got != next {
			t.Errorf("update reply does not echo the write:\n got %+v\nwant %+v", got, next)
		}
		e.acked, e.pending = next, nil
		updates.Add(1)
		acked.Add(1)
	}
}

func labelOf(meta map[string]any) string {
	ri, _ := meta["resource_info"].(map[string]any)
	s, _ := ri["label"].(string)
	return s
}

// verifyLedger checks every identifier after a restart: the stored state is the
// acknowledged one, or the one write that was in flight at the kill. It
// returns how many in-flight writes turned out to be applied.
func verifyLedger(t *testing.T, n *node, key string, led *ledger) (appliedUnacked int64) {
	t.Helper()
	c := httpClient(10 * time.Second)
	for _, e := range led.snapshot() {
		r, err := do(c, "GET", n.adminURL()+testColl+e.id, nil, "Authorization", "Bearer "+key)
		if err != nil {
			t.Fatalf("GET %s: %v", e.handle, err)
		}
		if r.Status != http.StatusOK {
			t.Errorf("acknowledged identifier %s lost: GET = %d %s", e.handle, r.Status, r.Body)
			continue
		}
		var id identifier
		if err := json.Unmarshal(r.Body, &id); err != nil {
			t.Fatal(err)
		}
		got := state{id.Version, id.URL, labelOf(id.Metadata), canonical(id.Metadata)}
		switch {
		case got == e.acked:
		case e.pending != nil && got == *e.pending:
			appliedUnacked++
			e.acked = got
		default:
			t.Errorf("%s: found %+v, acknowledged %+v (in flight at the kill: %+v)", e.handle, got, e.acked, e.pending)
			continue
		}
		e.pending = nil
		// The public read path must agree with the admin API.
		r, err = do(c, "GET", n.resolverURL()+"/api/handles/"+e.handle, nil)
		if err != nil {
			t.Fatalf("GET /api/handles/%s: %v", e.handle, err)
		}
		url, label := handleJSONState(t, r.Body)
		if r.Status != http.StatusOK || url != got.url || label != got.label {
			t.Errorf("/api/handles/%s = %d url %q label %q, want url %q label %q", e.handle, r.Status, url, label, got.url, got.label)
		}
	}
	return appliedUnacked
}

// handleJSONState extracts the URL value and the RESOURCE label of a Handle
// JSON record.
func handleJSONState(t *testing.T, b []byte) (url, label string) {
	t.Helper()
	var rec struct {
		Values []struct {
			Index int    `json:"index"`
			Type  string `json:"type"`
			Data  struct {
				Format string `json:"format"`
				Value  any    `json:"value"`
			} `json:"data"`
		} `json:"values"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Errorf("Handle JSON: %v: %s", err, b)
		return "", ""
	}
	for _, v := range rec.Values {
		s, _ := v.Data.Value.(string)
		switch v.Type {
		case "URL":
			url = s
		case "RESOURCE":
			var ri struct{ Label string }
			json.Unmarshal([]byte(s), &ri)
			label = ri.Label
		}
	}
	return url, label
}

// checkBolt opens the database file read-only and runs bbolt's consistency
// check over every page.
func checkBolt(t *testing.T, path string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("bbolt open %s: %v", path, err)
	}
	defer db.Close()
	err = db.View(func(tx *bbolt.Tx) error {
		n := 0
		for err := range tx.Check() {
			n++
			if n <= 10 {
				t.Errorf("bbolt Check: %v", err)
			}
		}
		if n > 0 {
			return fmt.Errorf("%d consistency errors", n)
		}
		return nil
	})
	if err != nil {
		t.Errorf("bbolt check %s: %v", path, err)
	}
}
