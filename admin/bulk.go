package admin

import (
	"net/http"

	"pidnode/write"
)

// MaxBulkItems bounds a bulk request (docs/product.md §4).
const MaxBulkItems = write.MaxBulkItems

// BulkResult is the outcome of one bulk item, in request order.
type BulkResult struct {
	Status int          `json:"status"`
	Type   string       `json:"type,omitempty"`
	Title  string       `json:"title,omitempty"`
	Handle string       `json:"handle,omitempty"`
	Detail string       `json:"detail,omitempty"`
	Errors []FieldError `json:"errors,omitempty"`
}

// bulkRoute is the namespace route POST …/{ns}/bulk.
func bulkRoute(s *Server) nsRoute {
	return nsRoute{name: "bulk", h: func(w http.ResponseWriter, r *http.Request, p *principal, t target, _ string) error {
		if err := s.checkWritable(); err != nil {
			return err
		}
		return s.bulk(w, r, p, t)
	}, ops: []nsOp{{"POST", "bulk", op{summary: "Create and update up to 1000 identifiers in one transaction; an item with the id of an existing identifier is a merge update, with an unknown id a custom-id create, without id a generated-id create; each item succeeds or fails on its own", auth: "snaa", request: "BulkRequest", jsonLines: true, ok: 200, okSchema: "BulkResponse", tag: "snaa"}}}}
}

// bulk serves POST …/handles/{prefix}/{ns}/bulk: up to MaxBulkItems creates and
// updates in one transaction (write.Service.Bulk). Each item succeeds or
// fails on its own, with the problem the single routes answer for it.
func (s *Server) bulk(w http.ResponseWriter, r *http.Request, p *principal, t target) error {
	body, lines, err := readBodyOf(w, r, s.maxBody, true)
	out, err := s.runBulk(p, t, body, lines, err)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": out})
	return nil
}

// runBulk is bulk once the body is read (readErr: reading it failed): the
// items decoded, the rate limit charged, the write service's Bulk, each
// item's result. The API's route and the console's bulk page share it.
func (s *Server) runBulk(p *principal, t target, body []byte, lines bool, readErr error) ([]BulkResult, error) {
	var arr []any
	err := readErr
	if err == nil {
		arr, err = write.BulkItems(body, lines)
	}
	if lerr := s.adm.Charge(p.key.ID, p.snaa.ID, write.BulkCost(len(arr))); lerr != nil {
		return nil, lerr
	}
	if err != nil {
		return nil, err
	}
	res, err := s.writes.Bulk(p.writer(), t.write(), arr)
	if err != nil {
		return nil, err
	}
	out := make([]BulkResult, len(res))
	for i, it := range res {
		switch {
		case it.Err != nil:
			out[i] = bulkError(it.Err)
		case it.Created:
			out[i] = BulkResult{Status: http.StatusCreated, Handle: it.Handle}
			s.metrics.creates.Add(1)
		default:
			out[i] = BulkResult{Status: http.StatusOK, Handle: it.Handle}
			s.metrics.updates.Add(1)
		}
	}
	return out, nil
}

// bulkError is the result of an item that failed with err: the problem the
// single routes answer for the same input.
func bulkError(err error) BulkResult {
	p, _ := problemOf(err)
	return BulkResult{Status: p.Status, Type: p.Type, Title: p.Title, Detail: p.Detail, Errors: p.Errors}
}
