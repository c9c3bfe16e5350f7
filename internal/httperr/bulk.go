package httperr

import (
	"net/http"

	"pidnode/model"
	"pidnode/write"
)

// BulkResult is the outcome of one bulk item as the fronts show it: 201
// (created) or 200 (updated) with the handle, or the problem the single
// routes answer for the same input.
type BulkResult struct {
	Status int                `json:"status"`
	Type   string             `json:"type,omitempty"`
	Title  string             `json:"title,omitempty"`
	Handle string             `json:"handle,omitempty"`
	Detail string             `json:"detail,omitempty"`
	Errors []model.FieldError `json:"errors,omitempty"`
}

// BulkSummary is a bulk's reply: the items' results in request order, and
// how many were created, updated and failed.
type BulkSummary struct {
	Items   []BulkResult `json:"items"`
	Created int          `json:"created"`
	Updated int          `json:"updated"`
	Failed  int          `json:"failed"`
}

// Bulk summarises the results of write.Service.Bulk.
func Bulk(res []write.ItemResult) *BulkSummary {
	sum := &BulkSummary{Items: make([]BulkResult, len(res))}
	for i, it := range res {
		switch {
		case it.Err != nil:
			p, _ := Of(it.Err)
			sum.Items[i] = BulkResult{Status: p.Status, Type: p.Type, Title: p.Title, Detail: p.Detail, Errors: p.Errors}
			sum.Failed++
		case it.Created:
			sum.Items[i] = BulkResult{Status: http.StatusCreated, Handle: it.Handle}
			sum.Created++
		default:
			sum.Items[i] = BulkResult{Status: http.StatusOK, Handle: it.Handle}
			sum.Updated++
		}
	}
	return sum
}
