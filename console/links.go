package console

import (
	"net/http"

	"pidnode/linkcheck"
	"pidnode/model"
	"pidnode/registry"
)

// The console's view of the link checker's findings (docs/product.md §4.4):
// the namespace's listing, read through package linkcheck, which owns the
// results, as the API's route reads it.

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
	// The API's GET …/{ns}/linkcheck: admitted as a request, the same
	// state filter and cursor, its page of linkcheck.List.
	st, given := q.Get("state"), q.Get("state") != ""
	t, err := s.consoleTarget(r, u, b, http.MethodGet)
	if err == nil {
		states, ok := linkcheck.States(st, given)
		if !ok {
			p := problem(http.StatusBadRequest, "state %s", linkcheck.StatesMsg)
			p.Errors = []model.FieldError{{Field: "state", Message: linkcheck.StatesMsg}}
			err = p
		} else {
			err = s.cfg.Registry.View(func(tx registry.Tx) error {
				page, err := linkcheck.List(tx.Tx, s.cfg.Namer, t.Prefix, t.Namespace, states, q.Get("cursor"), 50)
				pg.Targets, pg.Next = page.Targets, page.NextCursor
				return err
			})
		}
	}
	if err != nil {
		d.Problem, _ = problemOf(err)
		s.render(w, d.Problem.Status, "links", d)
		return nil
	}
	s.render(w, http.StatusOK, "links", d)
	return nil
}
