package main

import (
	"context"
	"time"
)

// warmStore brings the database file into memory in the background once the
// node serves (store.DB.Warm), so that the first rounds of cache misses after
// a start do not each wait for their B+tree pages to be read and mapped. It
// does not delay readiness. It reads at most the cache budget's worth of the
// file (the pages the kernel keeps are page cache, which it may reclaim) and
// stops with ctx or when the database closes.
func (n *node) warmStore(ctx context.Context) {
	// The goroutine reads its own copies: closeAll clears n's fields.
	db, budget, log := n.db, n.budget, n.log
	go func() {
		start := time.Now()
		got, err := db.Warm(ctx, budget)
		if err != nil {
			log.Warn("warming the database file; misses read it on demand", "err", err, "bytes", got)
			return
		}
		log.Info("database file warmed", "bytes", got, "took", time.Since(start).Round(time.Millisecond))
	}()
}
