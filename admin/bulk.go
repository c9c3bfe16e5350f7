package admin

import (
	"bytes"
	"net/http"
	"time"

	"pidnode/model"
	"pidnode/registry"
)

// MaxBulkItems bounds a bulk request (docs/product.md §4).
const MaxBulkItems = 1000

// BulkResult is the outcome of one bulk item, in request order.
type BulkResult struct {
	Status int          `json:"status"`
	Type   string       `json:"type,omitempty"`
	Title  string       `json:"title,omitempty"`
	Handle string       `json:"handle,omitempty"`
	Detail string       `json:"detail,omitempty"`
	Errors []FieldError `json:"errors,omitempty"`
}

type bulkItem struct {
	id  string
	obj map[string]any // the item without "id"; nil when the item is refused before the transaction
	res BulkResult
	// display and key: the identifier an item with an id names.
	display, key string
	// pc: a create, prepared before the transaction (prepareBulk); nil for
	// an update.
	pc *preparedCreate
}

// prepareBulk does before the transaction what the single routes do before
// theirs: it tells creates from updates (an id that exists is an update),
// runs a create's checks and builds its record (prepareCreate), so that the
// bulk holds its commit group (registry/commit.go) only for the writes.
// Items refused here get their result and a nil obj. err is fatal.
func (s *Server) prepareBulk(p *principal, t target, items []*bulkItem, now time.Time) error {
	exists := map[string]bool{}
	err := s.reg.View(func(tx registry.Tx) error {
		for _, it := range items {
			if it.obj == nil || it.id == "" {
				continue
			}
			it.display = s.namer.Full(t.prefix, t.ns, it.id)
			if k, _, err := s.namer.Key(it.display); err == nil {
				it.key = k
				exists[k] = tx.HasRecord(k)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, it := range items {
		if it.obj == nil || (it.key != "" && exists[it.key]) {
			continue
		}
		req, perr := s.checkCreate(p, t, it.id, it.obj)
		if perr == nil {
			var pc preparedCreate
			if pc, perr, err = s.prepareCreate(p, t, it.id, *req.Payload.URL, req.Meta, now); err != nil {
				return err
			}
			it.pc = &pc
		}
		if perr != nil {
			it.res, it.obj = bulkError(perr), nil
		}
	}
	return nil
}

// bulk serves POST …/handles/{prefix}/{ns}/bulk: up to MaxBulkItems creates and
// updates in one transaction (one commit). An item with "id" of an existing
// identifier is a merge update; with an unknown "id" a custom-id create; without
// "id" a create with a generated id. Each item succeeds or fails on its own and
// a failed item writes nothing. Items run the validation path of the single
// routes (check.go) and fail with the same problems.
func (s *Server) bulk(w http.ResponseWriter, r *http.Request, p *principal, t target) error {
	body, lines, err := readBodyOf(w, r, s.maxBody, true)
	var arr []any
	if err == nil {
		arr, err = bulkItems(body, lines)
	}
	// The rate limit charges the items (limitN); a bulk that is refused
	// before they are counted costs one request.
	cost := len(arr)
	if cost == 0 || cost > MaxBulkItems {
		cost = 1 // refused below, as a whole
	}
	if lerr := s.limitN(p.key.ID, p.snaa.ID, cost); lerr != nil {
		return lerr
	}
	if err != nil {
		return err
	}
	if len(arr) == 0 || len(arr) > MaxBulkItems {
		return &model.ValidationError{Errors: []FieldError{{Field: "(body)", Message: "must hold 1 to 1000 items"}}}
	}
	items := make([]*bulkItem, len(arr))
	for i, x := range arr {
		it := &bulkItem{}
		items[i] = it
		if bad, ok := x.(invalidItem); ok {
			it.res = bulkError(bad.err)
			continue
		}
		obj, ok := x.(map[string]any)
		if !ok {
			it.res = bulkError(&model.ValidationError{Errors: []FieldError{{Field: "(item)", Message: "must be an object"}}})
			continue
		}
		if idv, ok := obj["id"]; ok {
			ids, ok := idv.(string)
			if !ok || ids == "" {
				it.res = bulkError(&model.ValidationError{Errors: []FieldError{{Field: "id", Message: "must be a non-empty string"}}})
				continue
			}
			it.id = ids
			rest := make(map[string]any, len(obj))
			for k, v := range obj {
				if k != "id" {
					rest[k] = v
				}
			}
			obj = rest
		}
		it.obj = obj
	}
	now := s.now()
	if err := s.prepareBulk(p, t, items, now); err != nil {
		return err
	}
	var written []string
	// The bulk shares the commit groups with the SNAA's other writes and
	// with other SNAAs' as the len(items) writes it is (registry.CommitAs).
	err = s.w.CommitAs(p.snaa.ID, len(items), func(tx registry.Tx) error {
		written = written[:0]
		for _, it := range items {
			if it.obj == nil {
				continue // refused before the transaction
			}
			it.res = BulkResult{}
			var res writeResult
			var perr, err error
			status := http.StatusCreated
			if it.pc != nil && !(it.id != "" && tx.HasRecord(it.pc.key)) {
				res, perr, err = s.txCreatePrepared(tx, it.pc, http.StatusConflict)
			} else {
				// An update, or a custom id created since prepareBulk
				// looked (then it is an update too, as if it had existed).
				status = http.StatusOK
				var req *model.Write
				if req, perr = model.CheckPayload(it.obj); perr == nil {
					res, perr, err = s.txUpdate(tx, p, t, it.key, it.display, req, "", now)
				}
			}
			if err != nil {
				return err
			}
			if perr != nil {
				it.res = bulkError(perr)
				continue
			}
			it.res = BulkResult{Status: status, Handle: res.stored.Record.Handle}
			if res.written {
				written = append(written, res.key)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range written {
		if s.inv != nil {
			s.inv.Invalidate(k)
		}
	}
	out := make([]BulkResult, len(items))
	for i, it := range items {
		out[i] = it.res
		switch it.res.Status {
		case http.StatusCreated:
			s.metrics.creates.Add(1)
		case http.StatusOK:
			s.metrics.updates.Add(1)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": out})
	return nil
}

// bulkItems decodes a bulk body: a JSON array of items, or JSON Lines (one
// item per line; empty lines skipped). A body sent as JSON Lines (lines) is
// read as such; a JSON one is told apart by its first character.
func bulkItems(body []byte, lines bool) ([]any, error) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if lines || len(trimmed) > 0 && trimmed[0] != '[' {
		var arr []any
		for n, line := range bytes.Split(body, []byte("\n")) {
			if line = bytes.TrimSpace(line); len(line) == 0 {
				continue
			}
			v, err := model.DecodeAny(line)
			if err != nil {
				if se, ok := err.(*model.SyntaxError); ok {
					return nil, problem(http.StatusBadRequest, "line %d: %s", n+1, se.Msg)
				}
				if ve, ok := err.(*model.ValidationError); ok {
					// Well-formed JSON with a value that is not (a lone
					// surrogate): this item fails, the others are written.
					arr = append(arr, invalidItem{ve})
					continue
				}
				return nil, err
			}
			arr = append(arr, v)
		}
		return arr, nil
	}
	v, err := model.DecodeAny(body)
	if err != nil {
		return nil, err
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, &model.ValidationError{Errors: []FieldError{{Field: "(body)", Message: "must be a JSON array (or JSON Lines) of {\"id\"?, \"url\"?, \"metadata\"?}"}}}
	}
	return arr, nil
}

// invalidItem is an item of a JSON Lines body that failed to decode as a
// well-formed line whose content is invalid.
type invalidItem struct{ err error }

// bulkError is the result of an item that failed with err: the problem the
// single routes answer for the same input.
func bulkError(err error) BulkResult {
	p, _ := problemOf(err)
	return BulkResult{Status: p.Status, Type: p.Type, Title: p.Title, Detail: p.Detail, Errors: p.Errors}
}
