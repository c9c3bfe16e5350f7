package console

import (
	"net/http"
	"strconv"
	"time"
)

// Read-only overviews of what the namespace's feed features keep: the
// change feed (the namespace's identifier writes in the audit log, read
// through the registry as GET …/{ns}/events reads it) and the webhook
// endpoints with their delivery state (Config.Webhooks, the webhook
// feature's, as GET …/{ns}/webhooks lists them). Creating or changing an
// endpoint stays with the API.

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

// WebhookView is what the webhooks page shows of an endpoint: where it
// delivers, which kinds of events, its state, how far its deliveries are
// (Cursor, a sequence number of the feed) and its failures. Never a secret.
type WebhookView struct {
	URL, Description, State, DisabledReason, LastError string
	Kinds                                              []string
	Cursor                                             uint64
	Failures                                           int
	LastSuccess                                        *time.Time
}

type webhooksPage struct {
	Base     string
	Bases    []baseChoice
	Enabled  bool
	Webhooks []WebhookView
	// Last is the seq of the feed's newest entry, against which each
	// endpoint's cursor says how far its deliveries are.
	Last uint64
}

// pageWebhooks lists the namespace's webhook endpoints and their delivery
// state, read through Config.Webhooks (the webhook feature's).
func (s *Server) pageWebhooks(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	b, bn := s.consoleBase(r.URL.Query().Get("base"))
	pg := &webhooksPage{Base: bn, Bases: s.baseChoices(u, bn), Enabled: s.cfg.Webhooks != nil}
	d.Title, d.D = "Webhooks", pg
	t, err := s.consoleTarget(r, u, b, http.MethodGet)
	if err != nil {
		return err
	}
	if s.cfg.Webhooks != nil {
		if pg.Webhooks, pg.Last, err = s.cfg.Webhooks(t.Prefix, t.Namespace); err != nil {
			return err
		}
	}
	s.render(w, http.StatusOK, "webhooks", d)
	return nil
}
