package admin

import (
	"net/http"
	"strconv"
)

// listAudit serves GET /ops/v1/audit (operator.AuditQuery).
func (s *Server) listAudit(w http.ResponseWriter, r *http.Request) error {
	out, err := s.ops.AuditList(r.URL.Query().Get, 100)
	if err == nil {
		writeJSON(w, http.StatusOK, out)
	}
	return err
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
