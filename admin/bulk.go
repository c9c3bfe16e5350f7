package admin

import (
	"net/http"

	"pidnode/model"
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

// bulkRoute is the namespace route POST …/{ns}/bulk: a bulk (bulkOf) whose
// body is the bulk format (model/bulk.go: JSON, JSON Lines or CSV).
func bulkRoute(s *Server) nsRoute {
	return nsRoute{name: "bulk", h: func(w http.ResponseWriter, r *http.Request, p *principal, t target, _ string) error {
		if err := s.checkWritable(); err != nil {
			return err
		}
		var items []model.BulkItem
		body, kind, err := readBodyOf(w, r, s.maxBody, true)
		if err == nil && kind == "text/csv" {
			items, err = s.model.DecodeBulkCSV(body)
		} else if err == nil {
			items, err = model.DecodeBulkJSON(body, kind != "")
		}
		sum, err := s.bulkOf(p, t, items, err)
		if err == nil {
			writeJSON(w, http.StatusOK, sum)
		}
		return err
	}, ops: []nsOp{{"POST", "bulk", op{summary: "Create and update up to 1000 identifiers in one transaction; an item with op create is a create (custom id with id, generated without), with op update a merge update of an existing identifier (an unknown id fails the item); without op, an item with the id of an existing identifier is a merge update, with an unknown id a custom-id create, without id a generated-id create; each item succeeds or fails on its own. The body may also be CSV (text/csv), one column per model field (docs/product.md)", auth: "snaa", request: "BulkRequest", jsonLines: true, ok: 200, okSchema: "BulkResponse", tag: "snaa"}}}}
}

// BulkSummary is the bulk route's reply: the items' results in order, and their counts.
type BulkSummary struct {
	Items   []BulkResult `json:"items"`
	Created int          `json:"created"`
	Updated int          `json:"updated"`
	Failed  int          `json:"failed"`
}

// runBulk is a bulk of JSON (lines: JSON Lines) once the body is read
// (readErr: reading it failed). The console's bulk page calls it.
func (s *Server) runBulk(p *principal, t target, body []byte, lines bool, readErr error) (out []BulkResult, err error) {
	var items []model.BulkItem
	if readErr == nil {
		items, readErr = model.DecodeBulkJSON(body, lines)
	}
	sum, err := s.bulkOf(p, t, items, readErr)
	if sum != nil {
		out = sum.Items
	}
	return out, err
}

// bulkOf is a bulk of up to MaxBulkItems items once they are decoded
// (decodeErr: decoding the body failed): the rate limit charged, the write
// service's Bulk (one transaction), each item's result, which is the
// problem the single routes answer for the same input if it failed.
func (s *Server) bulkOf(p *principal, t target, items []model.BulkItem, decodeErr error) (*BulkSummary, error) {
	// The rate limit charges the items (limitN); a bulk that is refused
	// before they are counted costs one request.
	cost := len(items)
	if cost == 0 || cost > MaxBulkItems {
		cost = 1 // refused below, as a whole
	}
	if lerr := s.limitN(p.key.ID, p.snaa.ID, cost); lerr != nil {
		return nil, lerr
	}
	if decodeErr != nil {
		return nil, decodeErr
	}
	res, err := s.writes.Bulk(p.writer(), t.write(), items)
	if err != nil {
		return nil, err
	}
	sum := &BulkSummary{Items: make([]BulkResult, len(res))}
	for i, it := range res {
		switch {
		case it.Err != nil:
			pr, _ := problemOf(it.Err) // what the single routes answer for the same input
			sum.Items[i] = BulkResult{Status: pr.Status, Type: pr.Type, Title: pr.Title, Detail: pr.Detail, Errors: pr.Errors}
			sum.Failed++
		case it.Created:
			sum.Items[i] = BulkResult{Status: http.StatusCreated, Handle: it.Handle}
			sum.Created++
			s.metrics.creates.Add(1)
		default:
			sum.Items[i] = BulkResult{Status: http.StatusOK, Handle: it.Handle}
			sum.Updated++
			s.metrics.updates.Add(1)
		}
	}
	return sum, nil
}
