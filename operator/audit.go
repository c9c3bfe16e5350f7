package operator

import (
	"strconv"
	"strings"
	"time"

	"pidnode/registry"
)

// The operator's reading of the audit log, which GET /ops/v1/audit and the
// console's audit page share: one page newest first, filtered by SNAA,
// action and time.

// AuditQuery reads a page's query from a request's parameters (get):
// before (a sequence number), snaa, action, from and to (a date
// YYYY-MM-DD, to inclusive, or an RFC 3339 time) and limit (1 to 1000,
// defaultLimit if empty); or after (or cursor), which follows the log
// oldest first from that sequence number and takes no filter. A malformed
// one is ErrBadRequest naming it.
func AuditQuery(get func(string) string, defaultLimit int) (registry.AuditQuery, error) {
	q := registry.AuditQuery{Limit: defaultLimit, SNAA: strings.TrimSpace(get("snaa")), Action: strings.TrimSpace(get("action"))}
	if l := get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 1000 {
			return q, refuse(ErrBadRequest, "limit must be an integer from 1 to 1000")
		}
		q.Limit = n
	}
	after := get("after")
	if after == "" {
		after = get("cursor")
	}
	if after != "" {
		n, err := strconv.ParseUint(after, 10, 64)
		if err != nil {
			return q, refuse(ErrBadRequest, "after must be a sequence number")
		}
		return registry.AuditQuery{Limit: q.Limit, Follow: true, After: n}, nil
	}
	if b := get("before"); b != "" {
		n, err := strconv.ParseUint(b, 10, 64)
		if err != nil || n == 0 {
			return q, refuse(ErrBadRequest, "before must be the sequence number of an audit entry, as a page's next link gives it")
		}
		q.Before = n
	}
	var err error
	if q.From, err = auditTime(get("from"), false); err != nil {
		return q, refuse(ErrBadRequest, "from must be a date such as 2026-03-11 or a time such as 2026-03-11T09:00:00Z")
	}
	if q.To, err = auditTime(get("to"), true); err != nil {
		return q, refuse(ErrBadRequest, "to must be a date such as 2026-03-11 or a time such as 2026-03-11T09:00:00Z")
	}
	if !q.From.IsZero() && !q.To.IsZero() && !q.From.Before(q.To) {
		return q, refuse(ErrBadRequest, "from must be before to")
	}
	return q, nil
}

// auditTime parses a date (the day's start, or with end the next day's, so
// that to=2026-03-11 includes that day) or an RFC 3339 time; "" is zero.
func auditTime(s string, end bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.Parse(time.DateOnly, s); err == nil {
		if end {
			d = d.AddDate(0, 0, 1)
		}
		return d, nil
	}
	return time.Parse(time.RFC3339, s)
}

// AuditList is a page of the audit log as GET /ops/v1/audit answers it:
// Next, if not empty, is the following page's before.
type AuditList struct {
	Entries []registry.AuditEntry `json:"entries"`
	Next    string                `json:"next,omitempty"`
}

// AuditList reads the query of a page (AuditQuery) and returns the page.
func (s *Service) AuditList(get func(string) string, defaultLimit int) (*AuditList, error) {
	q, err := AuditQuery(get, defaultLimit)
	if err != nil {
		return nil, err
	}
	es, next, err := s.Audit(q)
	if err != nil {
		return nil, err
	}
	out := &AuditList{Entries: es}
	if next != 0 {
		out.Next = strconv.FormatUint(next, 10)
	}
	return out, nil
}

// Audit returns a page of the audit log, newest first, and the before of
// the next page (0 if none); with q.Follow the entries after q.After,
// oldest first.
func (s *Service) Audit(q registry.AuditQuery) ([]registry.AuditEntry, uint64, error) {
	if q.Follow {
		es, err := s.reg.AuditLog(q.After, q.Limit)
		if es == nil {
			es = []registry.AuditEntry{}
		}
		return es, 0, err
	}
	return s.reg.AuditPage(q)
}
