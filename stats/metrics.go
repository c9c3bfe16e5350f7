package stats

import (
	"pidnode/cache"
	"pidnode/internal/promtext"
)

// table is what a bounded in-memory counter (cache.Counter) shows of itself
// on /metrics.
type table interface {
	Keys() int
	Usage() cache.CounterUsage
	Dropped() uint64
}

// AppendMetrics appends the feature's Prometheus text to b: the flushes
// written, and, when Config.Counter is a bounded table (cache.Counter), its
// pending keys, memory and early flushes (docs/architecture.md practice
// 13). The flush counter keeps the name it had when the API ran the flush.
func (s *Service) AppendMetrics(b []byte) []byte {
	b = promtext.CounterFamily(b, "pidnode_admin_stats_flushes_total", "Resolution statistics flushed to the store.", s.flushes.Load())
	c, ok := s.counts.(table)
	if !ok {
		return b
	}
	b = promtext.GaugeFamily(b, "pidnode_stats_pending_keys", "Identifiers with resolution counts not yet written to the database.", int64(c.Keys()))
	su := c.Usage()
	b = promtext.GaugeFamily(b, "pidnode_stats_table_bytes", "Bytes the in-memory resolution statistics table holds (identifiers, counters, map slots).", su.Bytes)
	b = promtext.GaugeFamily(b, "pidnode_stats_table_limit_bytes", "The statistics table's bound: at half of it the table is flushed early.", su.Limit)
	b = promtext.CounterFamily(b, "pidnode_stats_early_flushes_total", "Statistics flushes asked for before the interval because the table reached half its bound.", su.EarlyAsked)
	b = promtext.CounterFamily(b, "pidnode_stats_waits_total", "Resolutions of an identifier new to the full statistics table that waited for a flush to make room.", su.Waits)
	b = promtext.CounterFamily(b, "pidnode_stats_dropped_total", "Resolutions not counted: the statistics table was full and no flush made room in time.", c.Dropped())
	return b
}
