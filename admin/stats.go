package admin

import (
	"bytes"
	"context"
	"encoding/binary"
	"net/http"
	"strings"
	"time"

	"pidnode/store"
)

// CountSource hands over resolution counts accumulated in memory since the
// last call (cache.Counter satisfies it; the resolvers count into it on their
// hot path, and the flusher here writes the counts to the store in batches).
type CountSource interface {
	Drain(fn func(key string, n uint64))
}

// DefaultStatsInterval is how often RunStats flushes resolution counts.
const DefaultStatsInterval = 10 * time.Second

// Resolution statistics in store.BucketStats, by UTC day, counts as uint64
// big-endian:
//
//	'i' <record storage key> 0x00 <YYYYMMDD>     resolutions of one identifier
//	'n' <namespace key prefix> 0x00 <YYYYMMDD>   resolutions in a namespace
//
// so one identifier's or namespace's days are one key range. Counts reach the
// bucket at each flush (RunStats, Close) and are attributed to the day of the
// flush. Only identifiers of SNAA namespaces (full form, production or test
// prefix) are counted: those are the ones the stats routes can show.
const (
	statsID = 'i'
	statsNS = 'n'
)

func statsKey(kind byte, key []byte, day string) []byte {
	k := make([]byte, 0, len(key)+len(day)+2)
	k = append(k, kind)
	k = append(k, key...)
	k = append(k, 0)
	return append(k, day...)
}

// FlushStats writes the counts accumulated in Config.Counter since the last
// flush, in one transaction. RunStats calls it periodically and Close once more.
func (s *Server) FlushStats() error {
	if s.counts == nil {
		return nil
	}
	pending := map[string]uint64{}
	s.counts.Drain(func(k string, n uint64) { pending[k] += n })
	if len(pending) == 0 {
		return nil
	}
	day := s.now().UTC().Format("20060102")
	ns := map[string]uint64{}
	ids := map[string]uint64{}
	for k, n := range pending {
		nsp := nsKeyPrefix(s.namer, []byte(k))
		if nsp == nil {
			continue
		}
		ids[k] += n
		ns[string(nsp)] += n
	}
	err := s.db.Update(func(tx *store.Tx) error {
		b := tx.Bolt().Bucket(store.BucketStats)
		add := func(kind byte, key string, n uint64) error {
			sk := statsKey(kind, []byte(key), day)
			if v := b.Get(sk); len(v) == 8 {
				n += binary.BigEndian.Uint64(v)
			}
			return b.Put(sk, binary.BigEndian.AppendUint64(nil, n))
		}
		for k, n := range ids {
			if err := add(statsID, k, n); err != nil {
				return err
			}
		}
		for k, n := range ns {
			if err := add(statsNS, k, n); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		s.metrics.statsFlushes.Add(1)
	}
	return err
}

// RunStats flushes resolution counts every Config.StatsInterval until ctx ends.
// cmd/pidnode runs it in a goroutine; Close flushes what is left.
func (s *Server) RunStats(ctx context.Context) {
	if s.counts == nil {
		return
	}
	t := time.NewTicker(s.statsEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.FlushStats(); err != nil {
				s.log.Warn("writing resolution statistics", "err", err)
			}
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

// serveStats serves GET …/{ns}/stats (id == "") and …/{ns}/{id}/stats.
func (s *Server) serveStats(w http.ResponseWriter, r *http.Request, t target, id string) error {
	from, to, err := s.statsRange(r)
	if err != nil {
		return err
	}
	out := Stats{Namespace: t.ns, Prefix: t.prefix, From: from.Format(time.DateOnly), To: to.Format(time.DateOnly), Days: []DayCount{}}
	var kind byte = statsNS
	var key string
	if id == "" {
		probe, _, err := s.namer.Key(s.namer.Full(t.prefix, t.ns, "X"))
		if err != nil {
			return err
		}
		key = probe[:len(probe)-1]
	} else {
		kind = statsID
		out.Handle = s.namer.Full(t.prefix, t.ns, id)
		if key, _, err = s.namer.Key(out.Handle); err != nil {
			return problem(http.StatusNotFound, "no identifier %s: %v", out.Handle, err)
		}
	}
	found := id == ""
	err = s.db.View(func(tx *store.Tx) error {
		if id != "" {
			st, ok, err := tx.Record(key)
			if err != nil || !ok {
				return err
			}
			found, out.Handle = true, st.Record.Handle
		}
		pre := statsKey(kind, []byte(key), "")
		lo := statsKey(kind, []byte(key), from.Format("20060102"))
		hi := statsKey(kind, []byte(key), to.Format("20060102"))
		c := tx.Bolt().Bucket(store.BucketStats).Cursor()
		for k, v := c.Seek(lo); k != nil && bytes.Compare(k, hi) <= 0 && len(v) == 8; k, v = c.Next() {
			d := k[len(pre):]
			if len(d) != 8 || !bytes.HasPrefix(k, pre) {
				continue
			}
			n := binary.BigEndian.Uint64(v)
			out.Total += n
			out.Days = append(out.Days, DayCount{Date: string(d[:4]) + "-" + string(d[4:6]) + "-" + string(d[6:]), Count: n})
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !found {
		return problem(http.StatusNotFound, "no identifier %s", out.Handle)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

const reservedMsg = "\"bulk\", \"stats\" and ids ending in \"/history\" or \"/stats\" are reserved by the API"

// reservedID reports whether a custom id would collide with a route:
// "bulk", "stats", and ids whose last segment is "history" or "stats".
func reservedID(id string) bool {
	last := id[strings.LastIndexByte(id, '/')+1:]
	return strings.EqualFold(id, "bulk") || strings.EqualFold(last, "history") || strings.EqualFold(last, "stats")
}
