package write

import (
	"bytes"
	"fmt"
	"time"

	"pidnode/model"
	"pidnode/registry"
)

// InvalidItem is a bulk item its caller could not decode as a value (a line
// of JSON Lines that is well-formed JSON holding an invalid string): Bulk
// fails that item with Err and writes the others.
type InvalidItem struct{ Err error }

// ItemResult is the outcome of one bulk item, in request order: Err is nil
// for a success, which Created tells apart as a create or an update.
type ItemResult struct {
	Handle  string
	Created bool
	Err     error
}

type bulkItem struct {
	id  string
	obj map[string]any // the item without "id"; nil when the item is refused before the transaction
	res ItemResult
	// display and key: the identifier an item with an id names.
	display, key string
	// pc: a create, prepared before the transaction (prepareBulk); nil for
	// an update.
	pc *preparedCreate
}

// Bulk makes up to MaxBulkItems creates and updates in t for a, in one
// transaction (one commit). Each item is a decoded JSON value: an object
// with "id" of an existing identifier is a merge update, with an unknown
// "id" a custom-id create, without "id" a create with a generated id. Each
// item succeeds or fails on its own and a failed item writes nothing. Items
// run the validation path of the single writes (check.go) and fail with
// the same errors. The error is the whole bulk's.
func (s *Service) Bulk(a *Actor, t Target, values []any) ([]ItemResult, error) {
	if len(values) == 0 || len(values) > MaxBulkItems {
		return nil, invalidField("(body)", "must hold 1 to 1000 items")
	}
	items := make([]*bulkItem, len(values))
	for i, x := range values {
		it := &bulkItem{}
		items[i] = it
		if bad, ok := x.(InvalidItem); ok {
			it.res.Err = bad.Err
			continue
		}
		obj, ok := x.(map[string]any)
		if !ok {
			it.res.Err = invalidField("(item)", "must be an object")
			continue
		}
		if idv, ok := obj["id"]; ok {
			ids, ok := idv.(string)
			if !ok || ids == "" {
				it.res.Err = invalidField("id", "must be a non-empty string")
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
	if err := s.prepareBulk(a, t, items, now); err != nil {
		return nil, err
	}
	var written []string
	// The bulk shares the commit groups with the SNAA's other writes and
	// with other SNAAs' as the len(items) writes it is (registry.CommitAs).
	err := s.w.CommitAs(a.SNAA.ID, len(items), func(tx registry.Tx) error {
		written = written[:0]
		for _, it := range items {
			if it.obj == nil {
				continue // refused before the transaction
			}
			it.res = ItemResult{}
			var (
				wr  writeResult
				err error
			)
			created := true
			if it.pc != nil && !(it.id != "" && tx.HasRecord(it.pc.key)) {
				wr, err = s.txCreatePrepared(tx, it.pc)
			} else {
				// An update, or a custom id created since prepareBulk
				// looked (then it is an update too, as if it had existed).
				created = false
				var req *model.Write
				if req, err = model.CheckPayload(it.obj); err != nil {
					err = refusal{err}
				} else {
					wr, err = s.txUpdate(tx, a, t, it.key, it.display, req, "", now)
				}
			}
			if r, ok := err.(refusal); ok {
				it.res.Err = r.err
				continue
			}
			if err != nil {
				return err
			}
			it.res = ItemResult{Handle: wr.stored.Record.Handle, Created: created}
			if wr.written {
				written = append(written, wr.key)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.invalidate(written...)
	out := make([]ItemResult, len(items))
	for i, it := range items {
		out[i] = it.res
	}
	return out, nil
}

// prepareBulk does before the transaction what the single writes do before
// theirs: it tells creates from updates (an id that exists is an update),
// runs a create's checks and builds its record (prepareCreate), so that the
// bulk holds its commit group (registry.CommitAs) only for the writes.
// Items refused here get their result and a nil obj. err is fatal.
func (s *Service) prepareBulk(a *Actor, t Target, items []*bulkItem, now time.Time) error {
	exists := map[string]bool{}
	err := s.reg.View(func(tx registry.Tx) error {
		for _, it := range items {
			if it.obj == nil || it.id == "" {
				continue
			}
			it.display = s.namer.Full(t.Prefix, t.Namespace, it.id)
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
		req, perr := s.checkCreate(a, t, it.id, it.obj)
		if perr == nil {
			var pc preparedCreate
			if pc, perr, err = s.prepareCreate(a, t, it.id, *req.Payload.URL, req.Meta, now); err != nil {
				return err
			}
			it.pc = &pc
		}
		if perr != nil {
			it.res.Err, it.obj = perr, nil
		}
	}
	return nil
}

// BulkItems decodes a bulk body: a JSON array of items, or JSON Lines (one
// item per line; empty lines skipped). A body sent as JSON Lines (lines) is
// read as such; a JSON one is told apart by its first character. A line
// that is not JSON is a *model.SyntaxError naming the line; a well-formed
// line whose value is not valid (a lone surrogate) is an InvalidItem, so
// that this item fails and the others are written.
func BulkItems(body []byte, lines bool) ([]any, error) {
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
					return nil, &model.SyntaxError{Msg: fmt.Sprintf("line %d: %s", n+1, se.Msg)}
				}
				if ve, ok := err.(*model.ValidationError); ok {
					arr = append(arr, InvalidItem{Err: ve})
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
		return nil, &model.ValidationError{Errors: []model.FieldError{{Field: "(body)", Message: "must be a JSON array (or JSON Lines) of {\"id\"?, \"url\"?, \"metadata\"?}"}}}
	}
	return arr, nil
}

// BulkCost is what a bulk of items costs the rate limits: its items, or
// one request when Bulk refuses it whole (no items, more than
// MaxBulkItems, a body that could not be read).
func BulkCost(items int) int {
	if items == 0 || items > MaxBulkItems {
		return 1
	}
	return items
}
