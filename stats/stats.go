package stats

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"pidnode/handlev"
	"pidnode/store"
)

// DefaultInterval is how often Run flushes resolution counts.
const DefaultInterval = 10 * time.Second

// Config configures a Service.
type Config struct {
	// DB holds the stats bucket and the records the routes look up. Required.
	DB *store.DB
	// Namer maps handles to storage keys and namespaces. Required.
	Namer *handlev.Namer
	// Counter is where the resolvers count resolutions (a *cache.Counter);
	// Run and Flush write its counts to the store. Nil: no statistics are
	// collected (the routes answer with zero counts).
	Counter CountSource
	// Interval is how often Run flushes. If zero, DefaultInterval.
	Interval time.Duration
	// Retention is how many days of per-identifier daily counts are kept,
	// today included (RunRetention); 0 keeps them forever. Per-namespace
	// counts are always kept.
	Retention int
	// Published, if set, is told the statistics keys each flush wrote and
	// their new totals; a cluster node publishes them.
	Published func(keys [][]byte, totals []uint64)
	// Days, if set, answers the routes in place of the local bucket: a
	// cluster node sums every node's. Its errors reach the API's error
	// mapping (an unavailable etcd is a 503).
	Days func(ctx context.Context, namespace bool, key string, from, to time.Time, fn func(date string, n uint64)) error
	// Expire, if set, is called after the local bucket's expiry with the
	// first day kept: a cluster node deletes its expired statistics in etcd.
	Expire func(ctx context.Context, from time.Time) (deleted int, err error)
	// Now is the clock (the day counts are attributed to, the routes'
	// default range, the retention's cut-off). If nil, time.Now.
	Now func() time.Time
	// Logger receives the jobs' failures and expiry runs. Nil discards.
	Logger *slog.Logger
}

// Service is the resolution statistics feature: flushing counts into the
// stats bucket, expiring old days, and the routes that read them. It is
// safe for concurrent use.
type Service struct {
	db      *store.DB
	namer   *handlev.Namer
	counts  CountSource
	every   time.Duration
	keep    int
	publish func(keys [][]byte, totals []uint64)
	days    func(ctx context.Context, namespace bool, key string, from, to time.Time, fn func(date string, n uint64)) error
	exp     func(ctx context.Context, from time.Time) (int, error)
	now     func() time.Time
	log     *slog.Logger
	flushes atomic.Uint64 // flushes that wrote something
}

// New returns the Service of cfg, with its documented defaults filled in.
func New(cfg Config) *Service {
	s := &Service{db: cfg.DB, namer: cfg.Namer, counts: cfg.Counter, every: cfg.Interval, keep: max(cfg.Retention, 0),
		publish: cfg.Published, days: cfg.Days, exp: cfg.Expire, now: cfg.Now, log: cfg.Logger}
	if s.every <= 0 {
		s.every = DefaultInterval
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// Flush writes the counts accumulated in Config.Counter since the last
// flush. Run calls it periodically; the node calls it once more at
// shutdown.
func (s *Service) Flush() error {
	if s.counts == nil {
		return nil
	}
	wrote, err := flush(s.db, s.namer, s.now(), s.counts, s.publish)
	if wrote && err == nil {
		s.flushes.Add(1)
	}
	return err
}

// EarlyFlusher is a CountSource with a bound on its memory that asks to be
// flushed before the next interval when it fills up (cache.Counter): its
// channel receives a value then. While attached, a full source waits for a
// flush instead of dropping counts; detach ends that.
type EarlyFlusher interface {
	AttachFlusher() (early <-chan struct{}, detach func())
}

// Run flushes resolution counts every Config.Interval until ctx ends, and
// at once whenever the counter asks for it (EarlyFlusher), so that its
// table stays within its bound without losing counts. cmd/pidnode runs it
// in a goroutine and flushes what is left at shutdown.
func (s *Service) Run(ctx context.Context) {
	if s.counts == nil {
		return
	}
	var early <-chan struct{}
	if f, ok := s.counts.(EarlyFlusher); ok {
		var detach func()
		early, detach = f.AttachFlusher()
		defer detach()
	}
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-early:
		}
		if err := s.Flush(); err != nil {
			s.log.Warn("writing resolution statistics", "err", err)
		}
	}
}

// retentionCheck is how often RunRetention looks whether a day has expired
// since its last run.
const retentionCheck = time.Hour

// retainedFrom is the first UTC day whose per-identifier counts are kept,
// and false when they are kept forever (Config.Retention).
func (s *Service) retainedFrom() (time.Time, bool) {
	if s.keep <= 0 {
		return time.Time{}, false
	}
	return s.now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 1-s.keep), true
}

// Expire deletes the per-identifier counts of the days before the
// retention (Config.Retention) from the stats bucket, then, if set, calls
// Config.Expire. It returns the first day kept; it does nothing when counts
// are kept forever.
func (s *Service) Expire(ctx context.Context) (from time.Time, err error) {
	from, ok := s.retainedFrom()
	if !ok {
		return from, nil
	}
	start := time.Now()
	n, err := expire(ctx, s.db, from)
	if err != nil {
		return from, fmt.Errorf("deleting expired resolution statistics: %w", err)
	}
	s.log.Info("expired resolution statistics deleted", "before", from.Format(time.DateOnly), "keys", n, "took", time.Since(start).Round(time.Millisecond))
	if s.exp != nil {
		start = time.Now()
		n, err := s.exp(ctx, from)
		if err != nil {
			return from, fmt.Errorf("deleting expired cluster statistics: %w", err)
		}
		s.log.Info("expired cluster statistics deleted", "before", from.Format(time.DateOnly), "keys", n, "took", time.Since(start).Round(time.Millisecond))
	}
	return from, nil
}

// RunRetention runs Expire at once and then whenever a further day has
// expired (it looks every hour), until ctx ends; a run that fails is tried
// again an hour later. cmd/pidnode runs it in a goroutine beside Run. With
// Config.Retention 0 it returns at once.
func (s *Service) RunRetention(ctx context.Context) {
	if s.keep <= 0 {
		return
	}
	var done time.Time
	t := time.NewTicker(retentionCheck)
	defer t.Stop()
	for {
		if from, _ := s.retainedFrom(); !from.Equal(done) {
			from, err := s.Expire(ctx)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				s.log.Warn("resolution statistics retention", "err", err)
			} else {
				done = from
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
