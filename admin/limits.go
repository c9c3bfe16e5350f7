package admin

import (
	"hash/maphash"
	"math"
	"net/http"
	"strconv"
	"strings"

	"pidnode/access"
	"pidnode/internal/tokenbucket"
)

// Limits per SNAA as well as per key (docs/product.md §4.1, §4.3): an SNAA
// may issue itself keys, so every limit that is counted per key is also
// counted per SNAA, and the keys themselves are capped, so that extra keys
// buy no more requests, streams or slots on the node.

// DefaultKeysPerSNAA is how many unrevoked keys an SNAA may hold unless the
// operator sets its own number (SNAA.MaxKeys); MaxKeysPerSNAA bounds that
// number. Package access, which issues keys, enforces them.
const (
	DefaultKeysPerSNAA = access.DefaultKeysPerSNAA
	MaxKeysPerSNAA     = access.MaxKeysPerSNAA
)

// DefaultSNAARateFactor is how many keys' worth of requests an SNAA's keys
// may send together when Config.SNAARateLimit is zero: more than one, so
// that one busy key leaves its SNAA's other clients room, and a fixed
// number, so that keys beyond it buy nothing.
const DefaultSNAARateFactor = 2

// Refusals by the limits of keys and SNAAs, the label values of
// pidnode_admin_limit_refusals_total.
const (
	refusedKeyRate = iota
	refusedSNAARate
	refusedKeyStreams
	refusedSNAAStreams
	refusedNodeStreams
	refusedSNAAKeys
	refusedLimits
)

var refusedNames = [refusedLimits]string{"key_rate", "snaa_rate", "key_streams", "snaa_streams", "node_streams", "snaa_keys"}

// rateLimiter is a token bucket per API key and one per SNAA (docs/product.md
// §4: 429 with Retry-After). Keys and SNAAs are few; the tables' bound only
// guards against a flood of them.
type rateLimiter struct {
	key, snaa *tokenbucket.Table[string]
}

// rateTableSize bounds the keys (and the SNAAs) the limiter tracks.
const rateTableSize = 100000

var rateSeed = maphash.MakeSeed()

func newRateLimiter(rate, burst, snaaRate, snaaBurst float64) *rateLimiter {
	hash := func(k string) uint64 { return maphash.String(rateSeed, k) }
	return &rateLimiter{
		key:  tokenbucket.New(tokenbucket.Config{Rate: rate, Burst: burst, Size: rateTableSize}, hash),
		snaa: tokenbucket.New(tokenbucket.Config{Rate: snaaRate, Burst: snaaBurst, Size: rateTableSize}, hash),
	}
}

// limit applies the rate limits to an authenticated SNAA request.
func (s *Server) limit(keyID, snaaID string) error { return s.limitN(keyID, snaaID, 1) }

// limitN charges a request that writes n identifiers (n ≥ 1) to the key's
// bucket, then to its SNAA's: a bulk of n items costs what n creates cost,
// so that the rate limit bounds the identifiers a key writes, not its
// requests. A bulk of more items than the burst is let through only with a
// full bucket and leaves the key in debt: its next requests wait until the
// sustained rate has paid for every item (internal/tokenbucket TakeN). A
// bulk the bucket cannot cover now is refused whole, with 429 and the
// Retry-After after which it can. The key's bucket is charged first, so a
// key over its own rate costs its SNAA's other keys nothing; a request the
// SNAA's bucket refuses gives the key's tokens back.
func (s *Server) limitN(keyID, snaaID string, n int) error {
	if s.rl == nil {
		return nil
	}
	now := s.now().UnixNano()
	who, t, reason := "with this key", s.rl.key, refusedKeyRate
	r := t.TakeN(keyID, n, now)
	if r.OK {
		who, t, reason = "with the keys of SNAA "+snaaID+" together", s.rl.snaa, refusedSNAARate
		if r = t.TakeN(snaaID, n, now); r.OK {
			return nil
		}
		s.rl.key.GiveN(keyID, n) // the key is charged only for what is served
	}
	secs := int(math.Ceil(r.Wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	s.metrics.rateLimited.Add(1)
	s.metrics.refused(reason)
	if n > 1 {
		return problem(http.StatusTooManyRequests, "a bulk of %d items costs %d of the %g writes per second allowed %s; retry in %d s", n, n, t.Rate(), who, secs).
			with("Retry-After", strconv.Itoa(secs))
	}
	return problem(http.StatusTooManyRequests, "more than %g requests per second %s; retry in %d s", t.Rate(), who, secs).
		with("Retry-After", strconv.Itoa(secs))
}

// SetReadOnly switches maintenance mode: while on, every write answers 503
// (reads keep working). Safe for concurrent use.
func (s *Server) SetReadOnly(on bool) { s.readOnly.Store(on) }

func (s *Server) checkWritable() error {
	if s.readOnly.Load() {
		return problem(http.StatusServiceUnavailable, "the node is in maintenance (read-only); retry later").with("Retry-After", "60")
	}
	return nil
}

// backup streams a consistent snapshot of the database (docs/product.md §8).
func (s *Server) backup(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="pidnode-`+s.now().UTC().Format("20060102T150405Z")+`.db"`)
	if _, err := s.db.Backup(w); err != nil {
		// Headers are gone; the client sees a truncated body and the log the cause.
		s.log.Error("backup failed", "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

// isBulk reports whether r is a bulk write (POST …/{ns}/bulk), which limitN
// charges by its items.
func isBulk(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.EqualFold(r.PathValue("id"), "bulk")
}
