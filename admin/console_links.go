package admin

import (
	"net/http"
	"net/url"

	"pidnode/registry"
)

// The console's view of the link checker's findings (docs/product.md §4.4):
// the namespace's listing route, rendered. Like every console page it runs
// the API route's handler in the session's namespace.

type linksPage struct {
	Base    string
	Bases   []baseChoice
	State   string
	States  []string
	Targets []registry.LinkResult
	Next    string
}

func (s *Server) pageLinks(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	q := r.URL.Query()
	b, bn := s.consoleBase(q.Get("base"))
	pg := &linksPage{Base: bn, Bases: s.baseChoices(u, bn), State: q.Get("state"),
		States: []string{registry.LinkBroken, registry.LinkRecovering, registry.LinkFailing, "all"}}
	d.Title, d.D = "Link checks", pg
	aq := url.Values{"limit": {"50"}}
	for _, k := range []string{"state", "cursor"} {
		if v := q.Get(k); v != "" {
			aq.Set(k, v)
		}
	}
	path, pv := collection(b, u, "linkcheck")
	var page LinkcheckPage
	rep := s.snaaCall(r, u, b, apiCall{method: "GET", path: path, pathValues: pv, query: aq}, s.getHandles)
	if err := rep.decode(&page); err != nil {
		d.Problem, _ = problemOf(err)
		s.render(w, d.Problem.Status, "links", d)
		return nil
	}
	pg.Targets, pg.Next = page.Targets, page.NextCursor
	s.render(w, http.StatusOK, "links", d)
	return nil
}
