package admin

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"pidnode/registry"
)

// CountSource hands over resolution counts accumulated in memory since the
// last call (cache.Counter satisfies it; the resolvers count into it on their
// hot path, and FlushStats writes the counts to the store in batches).
type CountSource = registry.CountSource

// DefaultStatsInterval is how often RunStats flushes resolution counts.
const DefaultStatsInterval = 10 * time.Second

// FlushStats writes the counts accumulated in Config.Counter since the last
// flush (registry.Registry.FlushStats). RunStats calls it periodically and
// Close once more.
func (s *Server) FlushStats() error {
	if s.counts == nil {
		return nil
	}
	wrote, err := s.reg.FlushStats(s.counts)
	if wrote && err == nil {
		s.metrics.statsFlushes.Add(1)
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

// RunStats flushes resolution counts every Config.StatsInterval until ctx
// ends, and at once whenever the counter asks for it (EarlyFlusher), so that
// its table stays within its bound without losing counts. cmd/pidnode runs it
// in a goroutine; Close flushes what is left.
func (s *Server) RunStats(ctx context.Context) {
	if s.counts == nil {
		return
	}
	var early <-chan struct{}
	if f, ok := s.counts.(EarlyFlusher); ok {
		var detach func()
		early, detach = f.AttachFlusher()
		defer detach()
	}
	t := time.NewTicker(s.statsEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-early:
		}
		if err := s.FlushStats(); err != nil {
			s.log.Warn("writing resolution statistics", "err", err)
		}
	}
}

// statsRetentionCheck is how often RunStatsRetention looks whether a day
// has expired since its last run.
const statsRetentionCheck = time.Hour

// retainedFrom is the first UTC day whose per-identifier counts are kept,
// and false when they are kept forever (Config.StatsRetention).
func (s *Server) retainedFrom() (time.Time, bool) {
	if s.statsKeep <= 0 {
		return time.Time{}, false
	}
	return s.now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 1-s.statsKeep), true
}

// ExpireStats deletes the per-identifier counts of the days before the
// retention (Config.StatsRetention) from the stats bucket
// (registry.Registry.ExpireStats), then, if set, calls Config.StatsExpire.
// It returns the first day kept; it does nothing when counts are kept
// forever.
func (s *Server) ExpireStats(ctx context.Context) (from time.Time, err error) {
	from, ok := s.retainedFrom()
	if !ok {
		return from, nil
	}
	start := time.Now()
	n, err := s.reg.ExpireStats(ctx, from)
	if err != nil {
		return from, fmt.Errorf("deleting expired resolution statistics: %w", err)
	}
	s.log.Info("expired resolution statistics deleted", "before", from.Format(time.DateOnly), "keys", n, "took", time.Since(start).Round(time.Millisecond))
	if s.statsExp != nil {
		start = time.Now()
		n, err := s.statsExp(ctx, from)
		if err != nil {
			return from, fmt.Errorf("deleting expired cluster statistics: %w", err)
		}
		s.log.Info("expired cluster statistics deleted", "before", from.Format(time.DateOnly), "keys", n, "took", time.Since(start).Round(time.Millisecond))
	}
	return from, nil
}

// RunStatsRetention runs ExpireStats at once and then whenever a further
// day has expired (it looks every hour), until ctx ends; a run that fails
// is tried again an hour later. cmd/pidnode runs it in a goroutine beside
// RunStats. With Config.StatsRetention 0 it returns at once.
func (s *Server) RunStatsRetention(ctx context.Context) {
	if s.statsKeep <= 0 {
		return
	}
	var done time.Time
	t := time.NewTicker(statsRetentionCheck)
	defer t.Stop()
	for {
		if from, _ := s.retainedFrom(); !from.Equal(done) {
			from, err := s.ExpireStats(ctx)
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

// DayCount is the number of resolutions on one UTC day.
type DayCount struct {
	Date  string `json:"date"` // YYYY-MM-DD
	Count uint64 `json:"count"`
}

// Stats is the reply of the …/stats routes.
type Stats struct {
	Handle    string     `json:"handle,omitempty"`
	Namespace string     `json:"namespace"`
	Prefix    string     `json:"prefix"`
	From      string     `json:"from"`
	To        string     `json:"to"`
	Total     uint64     `json:"total"`
	Days      []DayCount `json:"days"`
	// RetainedFrom, on an identifier's statistics, is the first day whose
	// counts this node keeps (--stats-retention): earlier days answer none.
	// Absent when they are kept forever, and on a namespace's, which are.
	RetainedFrom string `json:"retained_from,omitempty"`
}

// statsRange reads ?from= and ?to= (YYYY-MM-DD, inclusive; default the last 30
// days up to today, UTC).
func (s *Server) statsRange(r *http.Request) (from, to time.Time, err error) {
	q := r.URL.Query()
	to = s.now().UTC().Truncate(24 * time.Hour)
	if v := q.Get("to"); v != "" {
		if to, err = time.Parse(time.DateOnly, v); err != nil {
			return from, to, problem(http.StatusBadRequest, "to must be a date YYYY-MM-DD")
		}
	}
	from = to.AddDate(0, 0, -29)
	if v := q.Get("from"); v != "" {
		if from, err = time.Parse(time.DateOnly, v); err != nil {
			return from, to, problem(http.StatusBadRequest, "from must be a date YYYY-MM-DD")
		}
	}
	if from.After(to) {
		return from, to, problem(http.StatusBadRequest, "from is after to")
	}
	return from, to, nil
}

// statsRoutes are the namespace routes GET …/{ns}/stats and
// GET …/{id}/stats.
func statsRoutes(s *Server) []nsRoute {
	statsQ := []param{{"from", "first day, YYYY-MM-DD (default 29 days before to)"}, {"to", "last day, YYYY-MM-DD (default today, UTC)"}}
	return []nsRoute{
		{name: "stats", h: func(w http.ResponseWriter, r *http.Request, _ *principal, t target, _ string) error {
			return s.serveStats(w, r, t, "")
		}, ops: []nsOp{{"GET", "stats", op{summary: "Resolutions per day in the namespace (counted in memory, flushed every few seconds)", auth: "snaa", ok: 200, okSchema: "Stats", query: statsQ, tag: "snaa"}}}},
		{suffix: "stats", h: func(w http.ResponseWriter, r *http.Request, _ *principal, t target, id string) error {
			return s.serveStats(w, r, t, id)
		}, ops: []nsOp{{"GET", "stats", op{summary: "Resolutions per day of an identifier (counted in memory, flushed every few seconds)", auth: "snaa", ok: 200, okSchema: "Stats", query: statsQ, tag: "snaa"}}}},
	}
}

// serveStats serves GET …/{ns}/stats (id == "") and …/{ns}/{id}/stats.
func (s *Server) serveStats(w http.ResponseWriter, r *http.Request, t target, id string) error {
	from, to, err := s.statsRange(r)
	if err != nil {
		return err
	}
	out := Stats{Namespace: t.ns, Prefix: t.prefix, From: from.Format(time.DateOnly), To: to.Format(time.DateOnly), Days: []DayCount{}}
	var key string
	if id == "" {
		if key, err = s.reg.NamespaceKey(t.prefix, t.ns); err != nil {
			return err
		}
	} else {
		out.Handle = s.namer.Full(t.prefix, t.ns, id)
		if from, ok := s.retainedFrom(); ok {
			out.RetainedFrom = from.Format(time.DateOnly)
		}
		if key, _, err = s.namer.Key(out.Handle); err != nil {
			return problem(http.StatusNotFound, "no identifier %s: %v", out.Handle, err)
		}
	}
	found := id == ""
	err = s.reg.View(func(tx registry.Tx) error {
		if id != "" {
			st, ok, err := tx.Record(key)
			if err != nil || !ok {
				return err
			}
			found, out.Handle = true, st.Record.Handle
		}
		if s.statsDays == nil {
			tx.StatsDays(id == "", key, from, to, func(date string, n uint64) {
				out.Total += n
				out.Days = append(out.Days, DayCount{Date: date, Count: n})
			})
		}
		return nil
	})
	if err != nil {
		return err
	}
	if s.statsDays != nil && found {
		err := s.statsDays(r.Context(), id == "", key, from, to, func(date string, n uint64) {
			out.Total += n
			out.Days = append(out.Days, DayCount{Date: date, Count: n})
		})
		if p, ok := unavailableProblem(err); ok {
			return p
		}
		if err != nil {
			return err
		}
	}
	if !found {
		return problem(http.StatusNotFound, "no identifier %s", out.Handle)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
