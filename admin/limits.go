package admin

import (
	"net/http"
	"strings"

	"pidnode/access"
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
// may send together when Config.SNAARateLimit is zero (access.Admission).
const DefaultSNAARateFactor = access.DefaultSNAARateFactor

// Refusals by the limits of keys and SNAAs, the label values of
// pidnode_admin_limit_refusals_total; the rates' are counted by
// access.Admission, the others here.
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

// limit applies the rate limits to an authenticated SNAA request.
func (g *gate) limit(keyID, snaaID string) error { return g.adm.Charge(keyID, snaaID, 1) }

// SetReadOnly switches maintenance mode: while on, every write answers 503
// (reads keep working), on the API and in the console alike. Safe for
// concurrent use.
func (s *Server) SetReadOnly(on bool) { s.gate.adm.SetReadOnly(on) }

// checkWritable refuses a write in maintenance mode (503).
func (g *gate) checkWritable() error { return g.adm.Writable() }

// isBulk reports whether r is a bulk write (POST …/{ns}/bulk), which access.Admission
// charges by its items.
func isBulk(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.EqualFold(r.PathValue("id"), "bulk")
}
