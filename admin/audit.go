package admin

import (
	"net/http"
	"strconv"

	"pidnode/operator"
)

// AuditLog returns up to limit entries with a sequence number above after.
func (s *Server) AuditLog(after uint64, limit int) ([]AuditEntry, error) {
	return s.reg.AuditLog(after, limit)
}

// listAudit serves GET /ops/v1/audit: with after (or cursor), the entries
// after that sequence number oldest first, to follow the log; without, a
// page newest first filtered by snaa, action, from and to, whose next
// names the next page's before.
func (s *Server) listAudit(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if q.Has("after") || q.Has("cursor") {
		after, limit, p := pageParams(r)
		if p != nil {
			return p
		}
		var a uint64
		if after != "" {
			var err error
			if a, err = strconv.ParseUint(after, 10, 64); err != nil {
				return problem(http.StatusBadRequest, "after must be a sequence number")
			}
		}
		es, err := s.AuditLog(a, limit)
		if err != nil {
			return err
		}
		if es == nil {
			es = []AuditEntry{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"entries": es})
		return nil
	}
	aq, err := operator.AuditQuery(q.Get, 100)
	if err != nil {
		return err
	}
	es, next, err := s.ops.Audit(aq)
	if err != nil {
		return err
	}
	out := map[string]any{"entries": es}
	if next != 0 {
		out["next"] = strconv.FormatUint(next, 10)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// pageParams reads ?after= (or cursor=) and ?limit= (default 100, at most 1000).
func pageParams(r *http.Request) (after string, limit int, p *Problem) {
	q := r.URL.Query()
	after = q.Get("after")
	if after == "" {
		after = q.Get("cursor")
	}
	limit = 100
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 1000 {
			return "", 0, problem(http.StatusBadRequest, "limit must be an integer from 1 to 1000")
		}
		limit = n
	}
	return after, limit, nil
}
