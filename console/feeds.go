package console

import (
	"net/http"
	"strconv"

	"pidnode/registry"
)

// Read-only overviews of what the namespace's feed features keep, read
// through the registry as their API routes read it: the change feed (the
// namespace's identifier writes in the audit log, GET …/{ns}/events) and
// the webhook endpoints with their delivery state (GET …/{ns}/webhooks).
// Creating or changing an endpoint stays with the API.

type feedPage struct {
	Base         string
	Bases        []baseChoice
	Entries      []auditRow
	Next, Newest string
	Last         uint64
}

// pageEvents shows the namespace's change feed, newest first, 50 a page.
func (s *Server) pageEvents(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	q := r.URL.Query()
	b, bn := s.consoleBase(q.Get("base"))
	pg := &feedPage{Base: bn, Bases: s.baseChoices(u, bn)}
	d.Title, d.D = "Change feed", pg
	var before uint64
	if v := q.Get("before"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n == 0 {
			return problem(http.StatusBadRequest, "before must be the sequence number of a feed entry, as a page's link gives it")
		}
		before = n
		pg.Newest = "/console/events?base=" + bn
	}
	t, err := s.consoleTarget(r, u, b, http.MethodGet)
	if err != nil {
		return err
	}
	nsp, err := s.cfg.Registry.NamespaceKey(t.Prefix, t.Namespace)
	if err != nil {
		return err
	}
	entries, next, err := s.cfg.Registry.NamespaceAuditNewest(nsp, before, 50)
	if err != nil {
		return err
	}
	for _, e := range entries {
		what := auditVerbs[e.Action]
		if what == "" {
			what = e.Action
		}
		pg.Entries = append(pg.Entries, auditRow{AuditEntry: e, Who: auditWho(&e, map[string]string{u.SNAA.ID: u.SNAA.Organisation}), What: what, Changes: fieldChanges(e.Before, e.After)})
	}
	if next != 0 {
		pg.Next = "/console/events?base=" + bn + "&before=" + strconv.FormatUint(next, 10)
	}
	s.render(w, http.StatusOK, "events", d)
	return nil
}

type webhooksPage struct {
	Base     string
	Bases    []baseChoice
	Webhooks []registry.Webhook
	// Last is the seq of the feed's newest entry, against which each
	// endpoint's cursor says how far its deliveries are.
	Last uint64
}

// pageWebhooks lists the namespace's webhook endpoints and their delivery
// state (never a secret).
func (s *Server) pageWebhooks(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	b, bn := s.consoleBase(r.URL.Query().Get("base"))
	pg := &webhooksPage{Base: bn, Bases: s.baseChoices(u, bn)}
	d.Title, d.D = "Webhooks", pg
	t, err := s.consoleTarget(r, u, b, http.MethodGet)
	if err != nil {
		return err
	}
	nsp, err := s.cfg.Registry.NamespaceKey(t.Prefix, t.Namespace)
	if err != nil {
		return err
	}
	err = s.cfg.Registry.View(func(tx registry.Tx) (err error) {
		if pg.Webhooks, err = tx.Webhooks(nsp); err != nil {
			return err
		}
		pg.Last, err = tx.NamespaceAuditLast(nsp)
		return err
	})
	if err != nil {
		return err
	}
	for i := range pg.Webhooks {
		pg.Webhooks[i].Secret = ""
	}
	s.render(w, http.StatusOK, "webhooks", d)
	return nil
}
