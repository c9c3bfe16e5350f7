package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"pidnode/internal/cfgerr"
	"pidnode/internal/outbound"
	"pidnode/registry"
)

// Writer commits the engine's writes (cursor moves, failures, delivery
// logs): on a single node the registry, in cluster mode the cluster node,
// whose writes go through etcd (write.Writer's Update). fn must keep every
// effect inside tx and may run more than once.
type Writer interface {
	Update(fn func(tx registry.Tx) error) error
}

// Defaults of Config's zero fields (docs/product.md §4.5).
const (
	DefaultTimeout       = 10 * time.Second
	DefaultBackoff       = 10 * time.Second
	DefaultMaxBackoff    = time.Hour
	DefaultDisableAfter  = 24 * time.Hour
	DefaultRescan        = 5 * time.Second
	DefaultMaxConcurrent = 16
	DefaultMaxBatch      = 100
	DefaultMaxBatchBytes = 256 << 10
)

// maxResponseBytes is how much of a reply's body is read; maxLogResponse
// how much of it the delivery log keeps.
const (
	maxResponseBytes = 4 << 10
	maxLogResponse   = 1 << 10
)

// Config configures New.
type Config struct {
	// Registry reads the endpoints and the feed and wakes the engine on
	// their commits. Required.
	Registry *registry.Registry
	// Writer commits the engine's writes. If nil, Registry.
	Writer Writer
	// Allow lists the networks deliveries may connect to although they are
	// not public (--outbound-allow). Ignored if Client is set.
	Allow []netip.Prefix
	// Client sends the deliveries. If nil, an internal/outbound client that
	// follows no redirects, with Allow and Timeout.
	Client *http.Client
	// Timeout bounds one delivery attempt. If zero, DefaultTimeout.
	Timeout time.Duration
	// Backoff is the wait after an endpoint's first failure, doubled after
	// each further one up to MaxBackoff. If zero, DefaultBackoff and
	// DefaultMaxBackoff.
	Backoff, MaxBackoff time.Duration
	// DisableAfter is how long an endpoint may fail without a success
	// before it is disabled. If zero, DefaultDisableAfter.
	DisableAfter time.Duration
	// Rescan is how often the endpoints are read again besides on a change
	// signal, and the longest a waiting endpoint sleeps before it looks at
	// its state and the clock again. If zero, DefaultRescan.
	Rescan time.Duration
	// MaxConcurrent bounds the deliveries in flight at once (one per
	// endpoint at most). If zero, DefaultMaxConcurrent.
	MaxConcurrent int
	// MaxBatch and MaxBatchBytes bound the events of one POST (at least one
	// event is always sent). If zero, DefaultMaxBatch and
	// DefaultMaxBatchBytes.
	MaxBatch, MaxBatchBytes int
	// Event returns what a delivery shows of an audit entry: the change
	// feed's event object (cmd wires admin.FeedEvent). If nil, the entry.
	Event func(e *registry.AuditEntry) any
	// UserAgent of the deliveries. If empty, "pidnode-webhook".
	UserAgent string
	// Now is the clock of signatures, backoff and the disabling. If nil,
	// time.Now.
	Now func() time.Time
	// Logger receives a line per failed attempt and per disabled endpoint.
	// Nil discards.
	Logger *slog.Logger
}

// Engine delivers the events of every active endpoint. Run it on one node
// of a cluster at a time (docs/product.md §10); two at once during a lead's
// hand-over only send some events twice. Safe for concurrent use.
type Engine struct {
	cfg    Config
	reg    *registry.Registry
	w      Writer
	client *http.Client
	now    func() time.Time
	log    *slog.Logger
	sem    chan struct{}

	mu      sync.Mutex
	workers map[string]*worker

	results map[string]*atomic.Uint64 // deliveries by result (metrics.go)
}

// worker is the delivery loop of one endpoint.
type worker struct {
	cancel context.CancelFunc
	done   chan struct{}
	// pending is the events of the batch in flight or failing; oldest the
	// unix nanoseconds of the first one's time (0: none).
	pending, oldest atomic.Int64
}

// New validates cfg and fills its defaults.
func New(cfg Config) (*Engine, error) {
	if cfg.Registry == nil {
		return nil, cfgerr.Required("webhook", "Registry", ErrConfig)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.Timeout, DefaultTimeout)
	def(&cfg.Backoff, DefaultBackoff)
	def(&cfg.MaxBackoff, DefaultMaxBackoff)
	def(&cfg.DisableAfter, DefaultDisableAfter)
	def(&cfg.Rescan, DefaultRescan)
	if cfg.MaxBackoff < cfg.Backoff {
		cfg.MaxBackoff = cfg.Backoff
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = DefaultMaxConcurrent
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = DefaultMaxBatch
	}
	if cfg.MaxBatchBytes <= 0 {
		cfg.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "pidnode-webhook"
	}
	e := &Engine{cfg: cfg, reg: cfg.Registry, w: cfg.Writer, client: cfg.Client, now: cfg.Now, log: cfg.Logger,
		sem: make(chan struct{}, cfg.MaxConcurrent), workers: map[string]*worker{}, results: map[string]*atomic.Uint64{}}
	if e.w == nil {
		e.w = cfg.Registry
	}
	if e.client == nil {
		e.client = outbound.NewClient(outbound.Config{Allow: cfg.Allow, Timeout: cfg.Timeout, MaxRedirects: -1,
			MaxHeaderBytes: 16 << 10, UserAgent: cfg.UserAgent})
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	for _, r := range results {
		e.results[r] = new(atomic.Uint64)
	}
	return e, nil
}

// Run delivers until ctx ends, then returns once no delivery is in
// flight. A delivery cut short by ctx is not recorded: it is sent again by
// whoever runs next.
func (e *Engine) Run(ctx context.Context) {
	defer func() {
		e.mu.Lock()
		ws := e.workers
		e.workers = map[string]*worker{}
		e.mu.Unlock()
		for _, w := range ws {
			w.cancel()
			<-w.done
		}
	}()
	tick := time.NewTicker(e.cfg.Rescan)
	defer tick.Stop()
	for ctx.Err() == nil {
		wake := e.reg.WaitWebhooks()
		if err := e.scan(ctx); err != nil {
			e.log.Error("webhook: reading the endpoints failed", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-wake:
			// A burst of changes (every delivery writes its endpoint)
			// costs one scan per interval.
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		case <-tick.C:
		}
	}
}

// scan starts a worker for each active endpoint without one and stops the
// workers of endpoints deleted or disabled.
func (e *Engine) scan(ctx context.Context) error {
	var all []Endpoint
	if err := e.reg.View(func(tx registry.Tx) (err error) {
		all, err = endpoints(tx.Tx, "")
		return err
	}); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	active := map[string]bool{}
	for i := range all {
		wh := &all[i]
		if wh.State != Active {
			continue
		}
		k := wh.Namespace + wh.ID
		active[k] = true
		if w := e.workers[k]; w != nil {
			select {
			case <-w.done: // ended on its own (e.g. disabled and enabled again)
			default:
				continue
			}
		}
		wctx, cancel := context.WithCancel(ctx)
		w := &worker{cancel: cancel, done: make(chan struct{})}
		e.workers[k] = w
		go func(nsp, id string) {
			defer close(w.done)
			e.work(wctx, w, nsp, id)
		}(wh.Namespace, wh.ID)
	}
	for k, w := range e.workers {
		if !active[k] {
			w.cancel()
			select {
			case <-w.done:
				delete(e.workers, k)
			default: // reaped by a later scan
			}
		}
	}
	return nil
}

// batch is one POST's events.
type batch struct {
	body        []byte
	first, last uint64 // the first and last event's seq
	events      int
	// through is the last entry examined: the cursor after a success, or
	// how far there is nothing to send when events is 0.
	through uint64
	oldest  time.Time // the first event's time
}

// work is the delivery loop of endpoint id of namespace nsp, until ctx ends
// or the endpoint is deleted or disabled.
func (e *Engine) work(ctx context.Context, w *worker, nsp, id string) {
	defer w.pending.Store(0)
	defer w.oldest.Store(0)
	// skip is how far the feed holds no event of the endpoint's kinds past
	// its cursor (kept in memory: a restart only reads those entries again).
	var skip uint64
	for ctx.Err() == nil {
		wake := e.reg.WaitNamespaceAudit(nsp) // before the read: see its doc
		var (
			wh      Endpoint
			ok      bool
			paused  bool
			entries []registry.AuditEntry
		)
		err := e.reg.View(func(tx registry.Tx) (err error) {
			if wh, ok, err = endpoint(tx.Tx, nsp, id); err != nil || !ok || wh.State != Active {
				return err
			}
			if sn, found, err := tx.SNAA(wh.SNAAID); err == nil && found && sn.Suspended {
				paused = true
				return nil
			}
			entries, err = tx.NamespaceAudit(nsp, max(wh.Cursor, skip), e.cfg.MaxBatch)
			return err
		})
		if err != nil {
			e.log.Error("webhook: reading an endpoint's feed failed", "endpoint", id, "err", err)
			e.sleep(ctx, nil, e.cfg.Rescan)
			continue
		}
		if !ok || wh.State != Active {
			return
		}
		if paused {
			e.sleep(ctx, nil, e.cfg.Rescan)
			continue
		}
		if wh.NextAttempt != nil {
			if d := wh.NextAttempt.Sub(e.now()); d > 0 {
				e.sleep(ctx, nil, min(d, e.cfg.Rescan))
				continue
			}
		}
		b, err := e.batchOf(&wh, entries)
		if err != nil {
			e.log.Error("webhook: encoding events failed", "endpoint", id, "err", err)
			e.sleep(ctx, nil, e.cfg.Rescan)
			continue
		}
		if b.events == 0 {
			w.pending.Store(0)
			w.oldest.Store(0)
			if len(entries) == 0 {
				e.sleep(ctx, wake, e.cfg.Rescan)
			} else {
				skip = b.through
			}
			continue
		}
		w.pending.Store(int64(b.events))
		w.oldest.Store(b.oldest.UnixNano())
		select {
		case e.sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		d := e.deliver(ctx, &wh, b)
		<-e.sem
		if ctx.Err() != nil {
			return // not recorded: sent again by whoever runs next
		}
		switch err := e.record(&wh, b, d); {
		case errors.Is(err, errGone):
			return
		case errors.Is(err, errConflict):
			continue
		case err != nil:
			e.log.Error("webhook: recording a delivery failed; it will be sent again", "endpoint", id, "err", err)
			e.sleep(ctx, nil, e.cfg.Rescan)
		case d.OK:
			w.pending.Store(0)
			w.oldest.Store(0)
		}
	}
}

// sleep waits for d, ctx's end or wake (nil: none).
func (e *Engine) sleep(ctx context.Context, wake <-chan struct{}, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-wake:
	case <-t.C:
	}
}

// batchOf builds the POST of the endpoint's kinds among entries (in seq
// order), up to MaxBatch events and MaxBatchBytes.
func (e *Engine) batchOf(wh *Endpoint, entries []registry.AuditEntry) (*batch, error) {
	b := &batch{}
	body := append(make([]byte, 0, 1024), `{"endpoint":`...)
	body = strconv.AppendQuote(body, wh.ID)
	body = append(body, `,"events":[`...)
	for i := range entries {
		en := &entries[i]
		if !slices.Contains(wh.Kinds, en.Action) {
			b.through = en.Seq
			continue
		}
		var v any = en
		if e.cfg.Event != nil {
			v = e.cfg.Event(en)
		}
		js, err := marshal(v)
		if err != nil {
			return nil, err
		}
		if b.events > 0 && len(body)+len(js)+2 > e.cfg.MaxBatchBytes {
			break
		}
		if b.events > 0 {
			body = append(body, ',')
		} else {
			b.first, b.oldest = en.Seq, en.Time
		}
		body = append(body, js...)
		b.events++
		b.last, b.through = en.Seq, en.Seq
	}
	b.body = append(body, ']', '}')
	return b, nil
}

// marshal is json.Marshal without HTML escaping (the feed's encoding).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// deliver POSTs b to the endpoint and returns the log entry of the attempt
// (without its number).
func (e *Engine) deliver(ctx context.Context, wh *Endpoint, b *batch) Delivery {
	start := e.now()
	d := Delivery{Time: start.UTC(), FirstSeq: b.first, LastSeq: b.last, Events: b.events}
	began := time.Now()
	defer func() { d.DurationMS = float64(time.Since(began).Microseconds()) / 1000 }()
	rctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, wh.URL, bytes.NewReader(b.body))
	if err != nil {
		d.Error, d.Detail = outbound.ClassOther, err.Error()
		e.count(d.Error)
		return d
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, Sign(wh.Secret, start.Unix(), b.body))
	req.Header.Set(DeliveryHeader, wh.ID+"."+strconv.FormatUint(wh.Attempts+1, 10))
	res, err := e.client.Do(req)
	if err != nil {
		d.Error, d.Detail = outbound.Classify(err), err.Error()
		e.count(d.Error)
		return d
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxResponseBytes))
	res.Body.Close()
	d.Status = res.StatusCode
	d.OK = res.StatusCode >= 200 && res.StatusCode < 300
	if len(body) > maxLogResponse {
		body = body[:maxLogResponse]
	}
	d.Response = string(bytes.ToValidUTF8(body, []byte("\uFFFD")))
	if d.OK {
		e.count(resultSuccess)
	} else {
		e.count(resultStatus)
	}
	return d
}

// backoff is the wait after the n-th failure in a row (n ≥ 1).
func (e *Engine) backoff(n int) time.Duration {
	d := e.cfg.Backoff
	for i := 1; i < n && d < e.cfg.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, e.cfg.MaxBackoff)
}

// record writes the attempt d of batch b: its log entry and, after a
// success, the cursor past b; after a failure the time of the next attempt,
// and the disabling if the endpoint has failed for DisableAfter. It
// compares the cursor and attempt count wh was read with: errConflict if
// they changed, errGone if the endpoint is no longer active.
func (e *Engine) record(wh *Endpoint, b *batch, d Delivery) error {
	now := e.now().UTC()
	var disabled *Endpoint
	err := e.w.Update(func(tx registry.Tx) error {
		disabled = nil
		cur, ok, err := endpoint(tx.Tx, wh.Namespace, wh.ID)
		if err != nil {
			return err
		}
		if !ok || cur.State != Active {
			return errGone
		}
		if cur.Cursor != wh.Cursor || cur.Attempts != wh.Attempts {
			return errConflict
		}
		cur.Attempts++
		d := d
		d.Attempt = cur.Attempts
		cur.LastAttempt = &now
		if d.OK {
			cur.Cursor = b.through
			cur.Failures, cur.FailingSince, cur.NextAttempt, cur.LastError = 0, nil, nil, ""
			cur.LastSuccess = &now
		} else {
			cur.Failures++
			if cur.FailingSince == nil {
				cur.FailingSince = &now
			}
			next := now.Add(e.backoff(cur.Failures))
			cur.NextAttempt = &next
			cur.LastError = describe(&d)
			if now.Sub(*cur.FailingSince) >= e.cfg.DisableAfter {
				cur.State, cur.DisabledAt, cur.NextAttempt = Disabled, &now, nil
				cur.DisabledReason = fmt.Sprintf("disabled by the node: every delivery failed since %s (%d attempts); last: %s; fix the endpoint and enable it again",
					cur.FailingSince.Format(time.RFC3339), cur.Failures, cur.LastError)
				if err := tx.Audit("node", registry.ActWebhookDisable, cur.Prefix+"/"+cur.NS+"/webhooks/"+cur.ID, nil,
					map[string]any{"url": cur.URL, "reason": cur.DisabledReason}); err != nil {
					return err
				}
				disabled = &cur
			}
		}
		if err := logDelivery(tx.Tx, cur.ID, &d); err != nil {
			return err
		}
		return putEndpoint(tx.Tx, &cur)
	})
	if err != nil {
		return err
	}
	if !d.OK {
		e.log.Warn("webhook: delivery failed", "endpoint", wh.ID, "namespace", wh.Prefix+"/"+wh.NS,
			"seq", fmt.Sprintf("%d-%d", b.first, b.last), "status", d.Status, "error", d.Error, "detail", d.Detail)
	}
	if disabled != nil {
		e.log.Warn("webhook: endpoint disabled", "endpoint", wh.ID, "namespace", wh.Prefix+"/"+wh.NS, "reason", disabled.DisabledReason)
	}
	return nil
}

// describe is an attempt's failure in one line.
func describe(d *Delivery) string {
	if d.Status != 0 {
		return "HTTP " + strconv.Itoa(d.Status)
	}
	return d.Error + ": " + d.Detail
}
