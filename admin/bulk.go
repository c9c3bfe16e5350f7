package admin

import (
	"net/http"

	"pidnode/internal/httperr"
	"pidnode/model"
	"pidnode/write"
)

// MaxBulkItems bounds a bulk request (docs/product.md §4).
const MaxBulkItems = write.MaxBulkItems

type BulkResult = httperr.BulkResult   // the outcome of one bulk item
type BulkSummary = httperr.BulkSummary // the bulk's reply

// bulkRoute is the namespace route POST …/{ns}/bulk: a bulk (bulkOf) whose
// body is the bulk format (model/bulk.go: JSON, JSON Lines or CSV).
func bulkRoute(s *snaaAPI) nsRoute {
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

// bulkOf is a bulk of up to MaxBulkItems items once they are decoded
// (decodeErr: decoding the body failed): the rate limit charged, the write
// service's Bulk (one transaction), each item's result (httperr.Bulk).
func (s *snaaAPI) bulkOf(p *principal, t target, items []model.BulkItem, decodeErr error) (*BulkSummary, error) {
	if lerr := s.adm.Charge(p.key.ID, p.snaa.ID, write.BulkCost(len(items))); lerr != nil {
		return nil, lerr
	}
	if decodeErr != nil {
		return nil, decodeErr
	}
	res, err := s.writes.Bulk(p.writer(), t.write(), items)
	if err != nil {
		return nil, err
	}
	sum := httperr.Bulk(res)
	s.metrics.creates.Add(uint64(sum.Created))
	s.metrics.updates.Add(uint64(sum.Updated))
	return sum, nil
}
