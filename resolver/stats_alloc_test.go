//go:build !race

package resolver

import (
	"testing"

	"pidnode/cache"
)

// TestAllocationCountedAndLimited: the hot paths stay allocation-free with
// resolution counting and the per-address rate limit on.
func TestAllocationCountedAndLimited(t *testing.T) {
	checkHandlerAllocs(t, newFixture(t, func(c *Config) { c.Counter = cache.NewCounter(0); c.RateLimit = 1e12 }))
}
