package admin

import (
	"net/http"

	"pidnode/internal/route"
)

// listAudit serves GET /ops/v1/audit (operator.AuditQuery).
func (s *opsAPI) listAudit(w http.ResponseWriter, r *http.Request) error {
	out, err := s.ops.AuditList(r.URL.Query().Get, 100)
	if err == nil {
		writeJSON(w, http.StatusOK, out)
	}
	return err
}

// pageParams reads ?after= (or cursor=) and ?limit= (route.PageParams).
func pageParams(r *http.Request) (after string, limit int, p *Problem) {
	after, limit, rerr := route.PageParams(r)
	if rerr != nil {
		return "", 0, problem(rerr.Status, "%s", rerr.Detail)
	}
	return after, limit, nil
}
