package linkcheck

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"pidnode/handlev"
	"pidnode/internal/cfgerr"
	"pidnode/internal/outbound"
	"pidnode/registry"
	"pidnode/store"
)

// Writer commits the checker's writes: on a single node the registry
// itself, in a cluster the node that sends them through etcd (as
// write.Writer). fn must keep every effect inside tx and may be run again.
type Writer interface {
	Update(fn func(tx registry.Tx) error) error
}

// Defaults of Config's zero fields (docs/product.md §4.4).
const (
	DefaultInterval    = 7 * 24 * time.Hour
	DefaultFailures    = 3
	DefaultMinAge      = 48 * time.Hour
	DefaultHostDelay   = time.Second
	DefaultConcurrency = 8
	DefaultTimeout     = 20 * time.Second
	DefaultMaxBytes    = 64 << 10
)

// Internal bounds.
const (
	// hostQueue is how many checks one host may have waiting; the sweep
	// waits for room, so a host with more URLs than the interval allows at
	// its delay slows the lap rather than being asked faster.
	hostQueue = 64
	// writeBatch and writeEvery group results into one write transaction
	// (one etcd transaction in a cluster).
	writeBatch = 64
	writeEvery = time.Second
	// readBatch is how many records one read transaction of the sweep takes.
	readBatch = 64
	// defaultDueEvery is how often the early rechecks due are looked up.
	defaultDueEvery = 10 * time.Second
	// maxVariants bounds the variant URLs checked per record (as the
	// resolver reads at most 100).
	maxVariants = 100
	// maxURLBytes: longer URLs are not checked.
	maxURLBytes = 4096
	// cleanupBatch bounds the vanished records whose results one item drops,
	// so that a batch stays far below a cluster transaction's operations
	// (the rest go with the next lap).
	cleanupBatch = 32
)

// Config configures New.
type Config struct {
	// Registry is the database the checker reads records and results from.
	// Required.
	Registry *registry.Registry
	// Writer commits results; if nil, Registry.
	Writer Writer
	// Interval is how often each URL is checked; the sweep spreads the
	// records evenly over it. If zero, DefaultInterval.
	Interval time.Duration
	// Failures consecutive failures spanning at least MinAge make a URL
	// broken. If zero, DefaultFailures and DefaultMinAge.
	Failures int
	MinAge   time.Duration
	// HostDelay is the least time between the end of one request to a host
	// and the start of the next. If zero, DefaultHostDelay; negative: none.
	HostDelay time.Duration
	// Concurrency caps the checks in flight (over all hosts). If zero,
	// DefaultConcurrency.
	Concurrency int
	// Timeout bounds one request (the HEAD, or the GET), redirects and body
	// included. If zero, DefaultTimeout.
	Timeout time.Duration
	// MaxBytes bounds the body bytes a GET reads. If zero, DefaultMaxBytes.
	MaxBytes int64
	// MaxRedirects is how many redirects a check follows; if zero,
	// outbound.DefaultMaxRedirects.
	MaxRedirects int
	// Allow lists non-public networks checks may connect to
	// (--outbound-allow).
	Allow []netip.Prefix
	// UserAgent names the service and an operator contact.
	UserAgent string
	// Now is the clock of results and states. If nil, time.Now.
	Now func() time.Time
	// Logger; nil discards.
	Logger *slog.Logger
}

// UserAgent is the checker's User-Agent (Config.UserAgent): the service
// and its version, its public URL and the operator's contact, so that a
// site's operator knows who checks and whom to ask.
func UserAgent(version, publicURL, contact string) string {
	s := "pidnode/" + version + " (+" + publicURL
	if contact != "" {
		s += "; " + contact
	}
	return s + ")"
}

// Checker is the link checker. Run runs it; its metrics and CheckRecord
// are safe to use concurrently with Run.
type Checker struct {
	reg       *registry.Registry
	w         Writer
	client    *http.Client
	interval  time.Duration
	hostDelay time.Duration
	timeout   time.Duration
	maxBytes  int64
	sem       chan struct{}
	rules     rules
	now       func() time.Time
	log       *slog.Logger
	m         metrics
	// dueEvery is how often the early rechecks due are looked up.
	dueEvery time.Duration
}

// New returns a checker of cfg.
func New(cfg Config) (*Checker, error) {
	if cfg.Registry == nil {
		return nil, cfgerr.Required("linkcheck", "Registry", ErrConfig)
	}
	c := &Checker{reg: cfg.Registry, w: cfg.Writer, interval: cfg.Interval, hostDelay: cfg.HostDelay,
		timeout: cfg.Timeout, maxBytes: cfg.MaxBytes, now: cfg.Now, log: cfg.Logger,
		rules: rules{failures: cfg.Failures, minAge: cfg.MinAge}, dueEvery: defaultDueEvery}
	if c.w == nil {
		c.w = cfg.Registry
	}
	if c.interval <= 0 {
		c.interval = DefaultInterval
	}
	if c.rules.failures <= 0 {
		c.rules.failures = DefaultFailures
	}
	if c.rules.minAge <= 0 {
		c.rules.minAge = DefaultMinAge
	}
	switch {
	case c.hostDelay == 0:
		c.hostDelay = DefaultHostDelay
	case c.hostDelay < 0:
		c.hostDelay = 0
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.maxBytes <= 0 {
		c.maxBytes = DefaultMaxBytes
	}
	conc := cfg.Concurrency
	if conc <= 0 {
		conc = DefaultConcurrency
	}
	c.sem = make(chan struct{}, conc)
	if c.now == nil {
		c.now = time.Now
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.client = outbound.NewClient(outbound.Config{Allow: cfg.Allow, Timeout: c.timeout,
		MaxRedirects: cfg.MaxRedirects, UserAgent: cfg.UserAgent})
	return c, nil
}

// target is one URL of a record to check.
type target struct {
	url, kind, host string
}

// item is the checks of one record (or one early recheck), written
// together when the last one is done.
type item struct {
	key, handle string
	urls        []target
	outcomes    []outcome
	pending     atomic.Int32
	// full: the record's every URL; the results of URLs it no longer has
	// are dropped, and those of records between cleanFrom and key (the
	// previous item of the sweep) that are gone. lapEnd: no record, clean
	// from cleanFrom to the end.
	full, lapEnd bool
	cleanFrom    string
	// sweep items carry the cursor position; written is set once their
	// results are.
	sweep   bool
	written bool
	// lapRecords, on a lap's end item: the records the lap passed.
	lapRecords int
}

// urlsOf returns the URLs the checker visits of a record: the public
// redirect target and the public representation variants (read by
// handlev.ReadResource, as the resolver reads them), http(s) only,
// without duplicates; none for a record that is not public (SUBMITTED) or
// a tombstone (OBSOLETED, DEPRECATED), whose target no client is sent to.
func urlsOf(rec *handlev.Record) []target {
	p := handlev.NewPublic(rec)
	if p.Hidden() || p.Gone() {
		return nil
	}
	var out []target
	add := func(u, kind string) {
		t, ok := checkable(u, kind)
		if !ok {
			return
		}
		for _, x := range out {
			if x.url == t.url {
				return
			}
		}
		out = append(out, t)
	}
	if v := p.TargetValue(); v != nil {
		add(string(v.Data), "target")
	}
	n := 0
	for i := range p.Values {
		v := &p.Values[i]
		if !strings.EqualFold(v.Type, "RESOURCE") {
			continue
		}
		res, _, ok := handlev.ReadResource(v.Data, nil)
		if !ok {
			continue
		}
		for _, rv := range res.Variants {
			if n++; n > maxVariants {
				break
			}
			add(string(rv.URL), "variant")
		}
	}
	return out
}

// checkable returns the target of an absolute http(s) URL with a host,
// false for anything else.
func checkable(u, kind string) (target, bool) {
	if u == "" || len(u) > maxURLBytes || strings.IndexByte(u, 0) >= 0 {
		return target{}, false
	}
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Hostname() == "" {
		return target{}, false
	}
	return target{url: u, kind: kind, host: strings.ToLower(pu.Hostname())}, true
}

// CheckRecord checks every URL of the record stored under key now, one
// after the other, and writes the results: the sweep's work for one record,
// without its pacing. For operators' tools and tests.
func (c *Checker) CheckRecord(ctx context.Context, key string) ([]registry.LinkResult, error) {
	it, ok, err := c.readItem(key)
	if err != nil || !ok {
		return nil, err
	}
	for i, t := range it.urls {
		if i > 0 && !sleepCtx(ctx, c.hostDelay) {
			return nil, ctx.Err()
		}
		it.outcomes[i] = c.check(ctx, t.url, func(ctx context.Context) bool { return sleepCtx(ctx, c.hostDelay) })
	}
	if err := c.write([]*item{it}, nil); err != nil {
		return nil, err
	}
	var out []registry.LinkResult
	err = c.reg.View(func(tx registry.Tx) (err error) {
		out, err = Results(tx.Tx, key)
		return err
	})
	return out, err
}

// readItem reads the record key as a full item (ok false if there is no
// such record).
func (c *Checker) readItem(key string) (*item, bool, error) {
	var it *item
	err := c.reg.View(func(tx registry.Tx) error {
		st, ok, err := tx.Record(key)
		if err != nil || !ok {
			return err
		}
		it = c.newItem(key, &st.Record)
		return nil
	})
	return it, it != nil, err
}

func (c *Checker) newItem(key string, rec *handlev.Record) *item {
	var urls []target
	if c.reg.NamespaceOf(key) != "" {
		urls = urlsOf(rec)
	}
	return &item{key: key, handle: rec.Handle, urls: urls, outcomes: make([]outcome, len(urls)), full: true}
}

// check fetches one URL and counts the result.
func (c *Checker) check(ctx context.Context, u string, wait func(context.Context) bool) outcome {
	c.m.inflight.Add(1)
	o := c.fetch(ctx, u, wait)
	c.m.inflight.Add(-1)
	c.m.count(o.class)
	return o
}

// write commits the results of items, and the sweep's cursor when cursor is
// not nil, in one transaction.
func (c *Checker) write(items []*item, cursor *string) error {
	return c.w.Update(func(tx registry.Tx) error {
		for _, it := range items {
			if err := c.apply(tx, it); err != nil {
				return err
			}
		}
		if cursor != nil {
			return setSweepCursor(tx.Tx, *cursor)
		}
		return nil
	})
}

// apply writes one item's results in tx.
func (c *Checker) apply(tx registry.Tx, it *item) error {
	if it.full {
		to := it.key
		if it.lapEnd {
			to = ""
		}
		for _, gone := range keysBetween(tx.Tx, it.cleanFrom, to, cleanupBatch) {
			if err := c.drop(tx, gone, nil); err != nil {
				return err
			}
		}
		if it.lapEnd {
			if it.lapRecords > 0 {
				return setLapRecords(tx.Tx, it.lapRecords)
			}
			return nil
		}
		keep := make(map[string]bool, len(it.urls))
		for _, t := range it.urls {
			keep[t.url] = true
		}
		if err := c.drop(tx, it.key, keep); err != nil {
			return err
		}
	}
	for i, t := range it.urls {
		old, had, err := result(tx.Tx, it.key, t.url)
		if err != nil {
			return err
		}
		if !it.full && !had {
			continue // an early recheck of a result dropped since
		}
		var prev *registry.LinkResult
		if had {
			prev = &old
		}
		r, action := c.rules.next(prev, it.handle, t.url, t.kind, &it.outcomes[i])
		if err := PutResult(tx.Tx, c.reg.Namer(), it.key, prev, &r); err != nil {
			return err
		}
		if action != "" {
			if err := c.audit(tx, it.key, action, prev, &r); err != nil {
				return err
			}
		}
	}
	return nil
}

// drop removes the results of the record key whose URL keep lacks (all
// when keep is nil).
func (c *Checker) drop(tx registry.Tx, key string, keep map[string]bool) error {
	rs, err := Results(tx.Tx, key)
	if err != nil {
		return err
	}
	for i := range rs {
		if keep[rs[i].URL] {
			continue
		}
		if err := deleteResult(tx.Tx, c.reg.Namer(), key, &rs[i]); err != nil {
			return err
		}
	}
	return nil
}

// auditState is what an audit entry of a state change shows before and
// after it: the URL and the check (the feed's EventState).
type auditState struct {
	URL       string             `json:"url"`
	Linkcheck registry.LinkCheck `json:"linkcheck"`
}

func stateOf(r *registry.LinkResult) *auditState {
	if r == nil {
		return nil
	}
	return &auditState{URL: r.URL, Linkcheck: r.Check()}
}

func (c *Checker) audit(tx registry.Tx, key, action string, before, after *registry.LinkResult) error {
	e := registry.AuditEntry{Actor: registry.ActorLinkcheck, Action: action, Target: after.Handle, After: stateOf(after)}
	if before != nil {
		e.Before = stateOf(before)
	}
	tail, err := registry.AuditTail(&e)
	if err != nil {
		return err
	}
	return tx.AppendHandleAudit(key, tail)
}

// ---- the sweep ----

// run is the state of one Run.
type run struct {
	c       *Checker
	ctx     context.Context
	results chan *item
	mu      sync.Mutex
	hosts   map[string]*host
	// inflight: early rechecks queued or running (key 0x00 url).
	inflight map[string]bool
	// order: the sweep's items in dispatch order, for the cursor.
	order []*item
	// nextDue is when the sweep looks up the due rechecks next.
	nextDue time.Time
}

// host is one host's queue: one worker at a time drains it.
type host struct {
	q       []*job
	running bool
	last    time.Time // end of the last request
	slots   chan struct{}
}

type job struct {
	it *item
	i  int
}

// Run checks until ctx ends: the sweep over the records, the early
// rechecks, and the writes of their results. It resumes the sweep where
// the stored cursor says, so a restart or another node taking over does
// not start the lap again.
func (c *Checker) Run(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &run{c: c, ctx: ctx, results: make(chan *item, 256), hosts: map[string]*host{}, inflight: map[string]bool{}}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.writeLoop()
	}()
	r.sweep()
	cancel()
	wg.Wait()
	c.m.queued.Store(0)
	c.m.hosts.Store(0)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// sampleRecords is how many records estimateRecords reads.
const sampleRecords = 1000

// estimateRecords is the number of records for pacing a first lap, before
// one has counted them: exact for up to sampleRecords, else the file's size
// over the sample's mean bytes per record. Counting exactly would read every
// page of the file (bbolt's Bucket.Stats walks the whole tree: minutes at 10M
// records, in one read transaction). The estimate counts the file's other
// buckets as records, so a first lap may run faster than the interval, never
// slower; the lap's end records the true count for the next.
func estimateRecords(tx registry.Tx) int {
	c := tx.Bolt().Bucket(store.BucketRecords).Cursor()
	n, bytes := 0, 0
	for k, v := c.First(); k != nil; k, v = c.Next() {
		n++
		bytes += len(k) + len(v) + 16 // bbolt's leaf element header
		if n == sampleRecords {
			return max(n, int(tx.Bolt().Size()/int64(bytes/n)))
		}
	}
	return n
}

// sweep walks the records bucket in key order, one record every
// interval/records, laps without end. records is the count of the last
// complete lap (estimated when none is recorded, estimateRecords), so that
// starting a lap does not read the whole bucket.
func (r *run) sweep() {
	c := r.c
	var cursor string
	var n int
	if err := c.reg.View(func(tx registry.Tx) error {
		cursor, n = sweepCursor(tx.Tx), lapRecords(tx.Tx)
		if n == 0 {
			n = estimateRecords(tx)
		}
		return nil
	}); err != nil {
		c.log.Error("link check: reading the cursor", "err", err)
	}
	r.nextDue = time.Now()
	for r.ctx.Err() == nil {
		if n == 0 {
			// No records yet: look again after a while.
			if !r.pause(time.Now().Add(min(c.interval, time.Minute))) {
				return
			}
			_ = c.reg.View(func(tx registry.Tx) error {
				n = estimateRecords(tx)
				return nil
			})
			continue
		}
		spacing := c.interval / time.Duration(n)
		c.m.lapRecords.Store(int64(n))
		start := time.Now()
		prev := cursor
		resumed := cursor != "" // a lap resumed from a cursor passes only part of the records
		i := 0
		for r.ctx.Err() == nil {
			batch, err := r.readAfter(cursor)
			if err != nil {
				c.log.Error("link check: reading records", "err", err)
				if !r.pause(time.Now().Add(time.Minute)) {
					return
				}
				continue
			}
			if len(batch) == 0 {
				break
			}
			for _, it := range batch {
				i++
				if !r.pause(start.Add(time.Duration(i) * spacing)) {
					return
				}
				cursor = it.key
				c.m.swept.Add(1)
				if len(it.urls) == 0 {
					continue
				}
				it.cleanFrom, it.sweep = prev, true
				prev = it.key
				r.dispatch(it)
			}
		}
		if r.ctx.Err() != nil {
			return
		}
		end := &item{full: true, lapEnd: true, cleanFrom: prev, sweep: true}
		if !resumed && i > 0 {
			n, end.lapRecords = i, i
		}
		r.dispatch(end)
		cursor = ""
		c.m.laps.Add(1)
	}
}

// pause waits until t, looking up the early rechecks due meanwhile; false
// if the run ends first.
func (r *run) pause(t time.Time) bool {
	for {
		now := time.Now()
		if !now.Before(r.nextDue) {
			r.dispatchDue()
			r.gcHosts()
			r.nextDue = now.Add(r.c.dueEvery)
		}
		if !now.Before(t) {
			return r.ctx.Err() == nil
		}
		if !sleepCtx(r.ctx, min(t.Sub(now), r.nextDue.Sub(now))) {
			return false
		}
	}
}

// readAfter reads the next records after the key after, as items.
func (r *run) readAfter(after string) ([]*item, error) {
	var out []*item
	err := r.c.reg.View(func(tx registry.Tx) error {
		cur := tx.Bolt().Bucket(store.BucketRecords).Cursor()
		k, v := cur.Seek([]byte(after))
		if k != nil && after != "" && bytes.Equal(k, []byte(after)) {
			k, v = cur.Next()
		}
		for ; k != nil && len(out) < readBatch; k, v = cur.Next() {
			key := string(k)
			if r.c.reg.NamespaceOf(key) == "" {
				out = append(out, &item{key: key})
				continue
			}
			st, err := store.DecodeStored(v)
			if err != nil {
				r.c.log.Warn("link check: undecodable record skipped", "key", key, "err", err)
				out = append(out, &item{key: key})
				continue
			}
			out = append(out, r.c.newItem(key, &st.Record))
		}
		return nil
	})
	return out, err
}

// dispatchDue queues the early rechecks that are due.
func (r *run) dispatchDue() {
	c := r.c
	var items []*item
	err := c.reg.View(func(tx registry.Tx) error {
		for _, d := range dueLinks(tx.Tx, c.now(), 256) {
			r.mu.Lock()
			busy := r.inflight[d.Key+"\x00"+d.URL]
			r.mu.Unlock()
			if busy {
				continue
			}
			old, ok, err := result(tx.Tx, d.Key, d.URL)
			if err != nil || !ok {
				continue
			}
			t, ok := checkable(old.URL, old.Kind)
			if !ok {
				continue
			}
			items = append(items, &item{key: d.Key, handle: old.Handle, urls: []target{t}, outcomes: make([]outcome, 1)})
		}
		return nil
	})
	if err != nil {
		c.log.Error("link check: reading due rechecks", "err", err)
		return
	}
	for _, it := range items {
		r.mu.Lock()
		r.inflight[it.key+"\x00"+it.urls[0].url] = true
		r.mu.Unlock()
		c.m.rechecks.Add(1)
		r.dispatch(it)
	}
}

// dispatch queues an item's checks on their hosts' queues, waiting for
// room in a full one.
func (r *run) dispatch(it *item) {
	if it.sweep {
		r.mu.Lock()
		r.order = append(r.order, it)
		r.mu.Unlock()
	}
	if len(it.urls) == 0 {
		select {
		case r.results <- it:
		case <-r.ctx.Done():
		}
		return
	}
	it.pending.Store(int32(len(it.urls)))
	for i := range it.urls {
		r.enqueue(&job{it: it, i: i})
	}
}

func (r *run) enqueue(j *job) {
	name := j.it.urls[j.i].host
	r.mu.Lock()
	h := r.hosts[name]
	if h == nil {
		h = &host{slots: make(chan struct{}, hostQueue)}
		r.hosts[name] = h
	}
	r.mu.Unlock()
	select {
	case h.slots <- struct{}{}:
	case <-r.ctx.Done():
		return
	}
	r.c.m.queued.Add(1)
	r.mu.Lock()
	h.q = append(h.q, j)
	start := !h.running
	h.running = true
	r.mu.Unlock()
	if start {
		go r.hostLoop(name, h)
	}
}

// hostLoop drains one host's queue, one request at a time, each after the
// host's delay since the last one ended.
func (r *run) hostLoop(name string, h *host) {
	c := r.c
	wait := func(ctx context.Context) bool { return sleepCtx(ctx, c.hostDelay) }
	for {
		r.mu.Lock()
		if len(h.q) == 0 || r.ctx.Err() != nil {
			h.running = false
			r.mu.Unlock()
			return
		}
		j := h.q[0]
		h.q = h.q[1:]
		pause := time.Until(h.last.Add(c.hostDelay))
		r.mu.Unlock()
		<-h.slots
		c.m.queued.Add(-1)
		if !sleepCtx(r.ctx, pause) {
			return
		}
		select {
		case c.sem <- struct{}{}:
		case <-r.ctx.Done():
			return
		}
		o := c.check(r.ctx, j.it.urls[j.i].url, wait)
		<-c.sem
		r.mu.Lock()
		h.last = time.Now()
		r.mu.Unlock()
		if r.ctx.Err() != nil {
			return
		}
		j.it.outcomes[j.i] = o
		if j.it.pending.Add(-1) == 0 {
			select {
			case r.results <- j.it:
			case <-r.ctx.Done():
				return
			}
		}
	}
}

// gcHosts forgets the hosts with nothing queued or running whose delay has
// passed. Only the sweep's goroutine enqueues and calls it, so no queue is
// forgotten while a check is being added to it.
func (r *run) gcHosts() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, h := range r.hosts {
		if !h.running && len(h.q) == 0 && len(h.slots) == 0 && time.Since(h.last) > r.c.hostDelay {
			delete(r.hosts, name)
		}
	}
	r.c.m.hosts.Store(int64(len(r.hosts)))
}

// writeLoop commits results in batches, with the sweep's cursor: the key
// of the last sweep item whose results, and those of every item before
// it, are written.
func (r *run) writeLoop() {
	c := r.c
	tick := time.NewTicker(writeEvery)
	defer tick.Stop()
	var batch []*item
	flush := func() bool {
		var cursor *string
		r.mu.Lock()
		for _, it := range batch {
			it.written = true
		}
		n := 0
		for n < len(r.order) && r.order[n].written {
			n++
		}
		if n > 0 {
			last := r.order[n-1]
			k := last.key // "" for the end of a lap: the next starts again
			cursor = &k
		}
		r.mu.Unlock()
		backoff := time.Second
		for {
			err := c.write(batch, cursor)
			if err == nil {
				break
			}
			c.m.writeErrors.Add(1)
			c.log.Warn("link check: writing results; trying again", "results", len(batch), "err", err)
			if !sleepCtx(r.ctx, backoff) {
				return false
			}
			backoff = min(2*backoff, 30*time.Second)
		}
		r.mu.Lock()
		r.order = r.order[n:]
		for _, it := range batch {
			c.m.written.Add(uint64(len(it.urls)))
			if !it.full && len(it.urls) == 1 {
				delete(r.inflight, it.key+"\x00"+it.urls[0].url)
			}
		}
		r.mu.Unlock()
		batch = batch[:0]
		return true
	}
	for {
		select {
		case it := <-r.results:
			batch = append(batch, it)
			if len(batch) >= writeBatch && !flush() {
				return
			}
		case <-tick.C:
			if len(batch) > 0 && !flush() {
				return
			}
		case <-r.ctx.Done():
			return
		}
	}
}

// String describes the checker's settings, for the start-up log.
func (c *Checker) String() string {
	return fmt.Sprintf("interval %s, %d failures over %s, host delay %s, %d concurrent, timeout %s",
		c.interval, c.rules.failures, c.rules.minAge, c.hostDelay, cap(c.sem), c.timeout)
}
