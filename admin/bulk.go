package admin

import (
	"mime"
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

// bulkRoute is the namespace route POST …/{ns}/bulk.
func bulkRoute(s *Server) nsRoute {
	return nsRoute{name: "bulk", h: func(w http.ResponseWriter, r *http.Request, p *principal, t target, _ string) error {
		if err := s.checkWritable(); err != nil {
			return err
		}
		return s.bulk(w, r, p, t)
	}, ops: []nsOp{{"POST", "bulk", op{summary: "Create and update up to 1000 identifiers in one transaction; an item with op create is a create (custom id with id, generated without), with op update a merge update of an existing identifier (an unknown id fails the item); without op, an item with the id of an existing identifier is a merge update, with an unknown id a custom-id create, without id a generated-id create; each item succeeds or fails on its own. The body may also be CSV (text/csv), one column per model field (docs/product.md)", auth: "snaa", request: "BulkRequest", jsonLines: true, bulkCSV: true, ok: 200, okSchema: "BulkResponse", tag: "snaa"}}}}
}

// bulk serves POST …/handles/{prefix}/{ns}/bulk: up to MaxBulkItems creates and
// updates in one transaction (write.Service.Bulk). Each item succeeds or
// fails on its own, with the problem the single routes answer for it. The
// body is the bulk format (model/bulk.go): JSON, JSON Lines or, as
// text/csv, CSV.
func (s *Server) bulk(w http.ResponseWriter, r *http.Request, p *principal, t target) error {
	var (
		items []model.BulkItem
		err   error
	)
	if mt, _, perr := mime.ParseMediaType(r.Header.Get("Content-Type")); perr == nil && mt == "text/csv" {
		var body []byte
		if body, err = readLimited(w, r, s.maxBody); err == nil {
			items, err = s.model.DecodeBulkCSV(body)
		}
	} else {
		body, lines, rerr := readBodyOf(w, r, s.maxBody, true)
		if err = rerr; err == nil {
			items, err = model.DecodeBulkJSON(body, lines)
		}
	}
	out, err := s.bulkOf(p, t, items, err)
	if err != nil {
		return err
	}
	sum := BulkSummary{Items: out}
	for _, it := range out {
		switch it.Status {
		case http.StatusCreated:
			sum.Created++
		case http.StatusOK:
			sum.Updated++
		default:
			sum.Failed++
		}
	}
	writeJSON(w, http.StatusOK, &sum)
	return nil
}

// BulkSummary is the bulk route's reply: each item's result, in request
// order, and how many were created, updated and failed.
type BulkSummary struct {
	Items   []BulkResult `json:"items"`
	Created int          `json:"created"`
	Updated int          `json:"updated"`
	Failed  int          `json:"failed"`
}

// runBulk is bulk once the JSON body is read (readErr: reading it failed):
// the items decoded, then bulkOf. The console's bulk page calls it.
func (s *Server) runBulk(p *principal, t target, body []byte, lines bool, readErr error) ([]BulkResult, error) {
	var items []model.BulkItem
	err := readErr
	if err == nil {
		items, err = model.DecodeBulkJSON(body, lines)
	}
	return s.bulkOf(p, t, items, err)
}

// bulkOf is a bulk once its items are decoded (decodeErr: decoding the
// body failed): the rate limit charged, the write service's Bulk, each
// item's result.
func (s *Server) bulkOf(p *principal, t target, items []model.BulkItem, decodeErr error) ([]BulkResult, error) {
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
	arr := make([]any, len(items))
	for i, it := range items {
		if it.Err != nil {
			arr[i] = write.InvalidItem{Err: it.Err}
		} else {
			arr[i] = it.Value
		}
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
