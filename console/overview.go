package console

import (
	"net/http"

	"pidnode/internal/route"
)

// The SNAA's overview pages beside its identifiers: resolution statistics
// of its namespace (stats.Service.Read, as GET …/{ns}/stats).

// prefixTotal is one prefix's line of the statistics table.
type prefixTotal struct {
	Prefix, Base string
	Total, Max   uint64
	Current      bool
}

type statsPage struct {
	Base    string
	Bases   []baseChoice
	Totals  []prefixTotal
	Chart   *chart
	Enabled bool
}

// pageStats shows the namespace's resolutions per day: a table of totals
// per prefix, and for the chosen prefix the chart and the numbers.
func (s *Server) pageStats(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	_, bn := s.consoleBase(r.URL.Query().Get("base"))
	pg := &statsPage{Base: bn, Bases: s.baseChoices(u, bn), Enabled: s.cfg.Stats != nil}
	d.Title, d.D = "Resolution statistics", pg
	if s.cfg.Stats == nil {
		s.render(w, http.StatusOK, "stats", d)
		return nil
	}
	from, to := s.cfg.StatsDays()
	for _, c := range pg.Bases {
		b, _ := s.consoleBase(c.Name)
		// The API's GET …/{ns}/stats, admitted as one request per prefix.
		t, err := s.consoleTarget(r, u, b, http.MethodGet)
		if err != nil {
			return err
		}
		st, err := s.cfg.Stats(r.Context(), route.Target{Prefix: t.Prefix, Namespace: t.Namespace}, "", from, to)
		if err != nil {
			return err
		}
		ch := newChart(st)
		pg.Totals = append(pg.Totals, prefixTotal{Prefix: c.Prefix, Base: c.Name, Total: ch.Total, Max: ch.Max, Current: c.Current})
		if c.Current {
			pg.Chart = ch
		}
	}
	s.render(w, http.StatusOK, "stats", d)
	return nil
}
