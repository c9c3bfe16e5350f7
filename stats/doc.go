// Package stats is the resolution statistics feature (docs/product.md §10
// Statistics), whole: the stats bucket's key format and its one encoder
// and decoder (which cluster mode publishes by), the flush of the counts
// the resolvers keep in memory (a CountSource, in practice *cache.Counter)
// in short paced transactions, the retention job that deletes old days,
// the API's routes GET …/{ns}/stats and …/{ns}/{id}/stats as rows of the
// namespace route table (internal/route), and its metrics.
//
// It reads and writes the store directly, beside registry, and knows
// nothing of the API: the API registers Routes() and writes their errors.
// The counting itself stays in cache.Counter, on the read path, which must
// not import this package. cmd/pidnode runs Run and RunRetention in
// goroutines and a last Flush at shutdown.
package stats
