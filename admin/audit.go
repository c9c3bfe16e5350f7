package admin

import (
	"net/http"
	"strconv"

	"pidnode/internal/route"
)

// AuditLog returns up to limit entries with a sequence number above after.
func (s *Server) AuditLog(after uint64, limit int) ([]AuditEntry, error) {
	return s.reg.AuditLog(after, limit)
}

func (s *opsAPI) listAudit(w http.ResponseWriter, r *http.Request) error {
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
	es, err := s.reg.AuditLog(a, limit)
	if err != nil {
		return err
	}
	if es == nil {
		es = []AuditEntry{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"entries": es})
	return nil
}

// pageParams reads ?after= (or cursor=) and ?limit= (route.PageParams).
func pageParams(r *http.Request) (after string, limit int, p *Problem) {
	after, limit, rerr := route.PageParams(r)
	if rerr != nil {
		return "", 0, problem(rerr.Status, "%s", rerr.Detail)
	}
	return after, limit, nil
}
