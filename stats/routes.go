package stats

import (
	"context"
	"net/http"
	"time"

	"pidnode/internal/route"
	"pidnode/store"
)

// DayCount is the number of resolutions on one UTC day.
type DayCount struct {
	Date  string `json:"date"` // YYYY-MM-DD
	Count uint64 `json:"count"`
}

// Reply is the reply of the …/stats routes (the API's "Stats" schema).
type Reply struct {
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

// Routes are the feature's namespace routes, GET …/{ns}/stats and
// GET …/{ns}/{id}/stats, as rows of the API's table.
func (s *Service) Routes() []route.Route {
	q := []route.Param{{Name: "from", Desc: "first day, YYYY-MM-DD (default 29 days before to)"}, {Name: "to", Desc: "last day, YYYY-MM-DD (default today, UTC)"}}
	doc := func(summary string) route.Doc {
		return route.Doc{Summary: summary, Auth: "snaa", OK: 200, OKSchema: "Stats", Query: q, Tag: "snaa"}
	}
	return []route.Route{
		{Name: "stats", H: func(w http.ResponseWriter, r *http.Request, t route.Target, _ string) error {
			return s.serve(w, r, t, "")
		}, Ops: []route.Op{{Method: "GET", Path: "stats", Doc: doc("Resolutions per day in the namespace (counted in memory, flushed every few seconds)")}}},
		{Suffix: "stats", H: s.serve,
			Ops: []route.Op{{Method: "GET", Path: "stats", Doc: doc("Resolutions per day of an identifier (counted in memory, flushed every few seconds)")}}},
	}
}

// dateRange reads ?from= and ?to= (YYYY-MM-DD, inclusive; default the last
// 30 days up to today, UTC).
func (s *Service) dateRange(r *http.Request) (from, to time.Time, err error) {
	q := r.URL.Query()
	from, to = s.Days()
	if v := q.Get("to"); v != "" {
		if to, err = time.Parse(time.DateOnly, v); err != nil {
			return from, to, route.Errorf(http.StatusBadRequest, "to must be a date YYYY-MM-DD")
		}
		from = firstDay(to)
	}
	if v := q.Get("from"); v != "" {
		if from, err = time.Parse(time.DateOnly, v); err != nil {
			return from, to, route.Errorf(http.StatusBadRequest, "from must be a date YYYY-MM-DD")
		}
	}
	if from.After(to) {
		return from, to, route.Errorf(http.StatusBadRequest, "from is after to")
	}
	return from, to, nil
}

// serve serves GET …/{ns}/stats (id == "") and …/{ns}/{id}/stats.
func (s *Service) serve(w http.ResponseWriter, r *http.Request, t route.Target, id string) error {
	from, to, err := s.dateRange(r)
	if err != nil {
		return err
	}
	out, err := s.Read(r.Context(), t, id, from, to)
	if err != nil {
		return err
	}
	route.WriteJSON(w, http.StatusOK, out)
	return nil
}

// Days is the default range of the statistics: the 30 days up to today
// (UTC), as GET …/stats answers without ?from= and ?to=.
func (s *Service) Days() (from, to time.Time) {
	to = s.now().UTC().Truncate(24 * time.Hour)
	return firstDay(to), to
}

// firstDay is the first of the 30 days up to to.
func firstDay(to time.Time) time.Time { return to.AddDate(0, 0, -29) }

// Read returns the resolutions per day of namespace t (id == "") or of
// its identifier id from day from to day to, inclusive: what the API's
// …/stats routes answer and the console's chart shows. An unknown
// identifier is a *route.Error of 404.
func (s *Service) Read(ctx context.Context, t route.Target, id string, from, to time.Time) (*Reply, error) {
	out := &Reply{Namespace: t.Namespace, Prefix: t.Prefix, From: from.Format(time.DateOnly), To: to.Format(time.DateOnly), Days: []DayCount{}}
	var key string
	var err error
	if id == "" {
		if key, err = s.namer.NamespaceKey(t.Prefix, t.Namespace); err != nil {
			return nil, err
		}
	} else {
		out.Handle = s.namer.Full(t.Prefix, t.Namespace, id)
		if from, ok := s.retainedFrom(); ok {
			out.RetainedFrom = from.Format(time.DateOnly)
		}
		if key, _, err = s.namer.Key(out.Handle); err != nil {
			return nil, route.Errorf(http.StatusNotFound, "no identifier %s: %v", out.Handle, err)
		}
	}
	add := func(date string, n uint64) {
		out.Total += n
		out.Days = append(out.Days, DayCount{Date: date, Count: n})
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
		if s.days == nil {
			days(tx, id == "", key, from, to, add)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if s.days != nil && found {
		if err := s.days(ctx, id == "", key, from, to, add); err != nil {
			return nil, err
		}
	}
	if !found {
		return nil, route.Errorf(http.StatusNotFound, "no identifier %s", out.Handle)
	}
	return out, nil
}
