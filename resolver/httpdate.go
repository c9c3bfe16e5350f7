package resolver

import (
	"sync/atomic"
	"time"

	"pidnode/handlev"
)

// maxExpires caps how far ahead Expires may point (docs/handle-protocol.md §2:
// "resolution time + the value's TTL, capped"). A day matches the TTL every
// pidnode-written value carries (docs/product.md §3).
const maxExpires = 24 * 60 * 60

const httpTimeFormat = "Mon, 02 Jan 2006 15:04:05 GMT"

// httpDate is one formatted HTTP date.
type httpDate struct {
	unix int64
	text []byte
}

// dateCache keeps the most recent (largest) Expires second formatted, so that
// under steady traffic the date is formatted once per second, not per request.
// Older seconds (shorter TTLs) are formatted into the caller's buffer instead of
// replacing the cached one, so alternating TTLs cannot make every request
// allocate.
type dateCache struct {
	p atomic.Pointer[httpDate]
}

// appendDate appends the HTTP date of unix second sec to dst, from the cache
// when it holds that second.
func (c *dateCache) appendDate(dst []byte, sec int64) []byte {
	if d := c.p.Load(); d != nil {
		if d.unix == sec {
			return append(dst, d.text...)
		}
		if d.unix > sec {
			return time.Unix(sec, 0).UTC().AppendFormat(dst, httpTimeFormat)
		}
	}
	d := &httpDate{unix: sec, text: time.Unix(sec, 0).UTC().AppendFormat(make([]byte, 0, len(httpTimeFormat)), httpTimeFormat)}
	c.p.Store(d)
	return append(dst, d.text...)
}

// expiresAt is the unix second a redirect's Expires names: now + the value's
// TTL for a relative TTL, the TTL itself for an absolute one, clamped to
// [now, now+maxExpires].
func expiresAt(now int64, typ handlev.TTLType, ttl int32) int64 {
	t := now + int64(ttl)
	if typ == handlev.TTLAbsolute {
		t = int64(ttl)
	}
	return min(max(t, now), now+maxExpires)
}
