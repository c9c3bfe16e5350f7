package tokenbucket

import "time"

// TakeN takes n tokens (n ≥ 1) from k's bucket at now (unix nanoseconds),
// all or none. A take of more tokens than the burst cannot ever fit the
// bucket: it is allowed when the bucket is full and leaves the key in debt,
// so that its next take waits until the sustained rate has paid for all n.
// Result.Wait, when !OK, is how long until the take of n would succeed.
func (t *Table[K]) TakeN(k K, n int, now int64) Result {
	if n <= 1 {
		return t.Take(k, now)
	}
	sh := &t.shards[(t.hash(k)*0x9e3779b97f4a7c15)>>58]
	sh.mu.Lock()
	e, ok := sh.m[k]
	if !ok {
		if len(sh.m) >= t.perShard {
			sh.makeRoom(now, t.perShard)
		}
		e.tat = now
	}
	tat := max(e.tat, now)
	cost := t.interval * int64(n)
	if cost/int64(n) != t.interval || cost > maxSpan {
		cost = maxSpan // overflow: a take that no rate will pay for soon
	}
	var r Result
	switch next := tat + cost; {
	case next-now <= t.tol, tat == now && cost > t.tol:
		e.tat, e.refused = next, 0
		r.OK = true
	default:
		e.tat = tat
		e.refused++
		r.Refused = e.refused
		if cost > t.tol {
			r.Wait = time.Duration(tat - now) // until the bucket is full
		} else {
			r.Wait = time.Duration(next - t.tol - now)
		}
	}
	sh.m[k] = e
	sh.mu.Unlock()
	return r
}

// GiveN gives back n tokens (n ≥ 1) that a successful TakeN of k took, for a
// caller that checks two limits in turn and was refused by the second: the
// first limit then charges nothing for a request that was not served. A
// key no longer in the table is left alone (its bucket is full already).
func (t *Table[K]) GiveN(k K, n int) {
	if n < 1 {
		return
	}
	cost := t.interval * int64(n)
	if cost/int64(n) != t.interval || cost > maxSpan {
		cost = maxSpan
	}
	sh := &t.shards[(t.hash(k)*0x9e3779b97f4a7c15)>>58]
	sh.mu.Lock()
	if e, ok := sh.m[k]; ok {
		// A theoretical arrival time in the past is a full bucket.
		e.tat -= cost
		sh.m[k] = e
	}
	sh.mu.Unlock()
}
