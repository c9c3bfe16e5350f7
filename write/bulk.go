package write

import (
	"time"

	"pidnode/model"
	"pidnode/registry"
)

// ItemResult is the outcome of one bulk item, in request order: Err is nil
// for a success, which Created tells apart as a create or an update.
type ItemResult struct {
	Handle  string
	Created bool
	Err     error
}

type bulkItem struct {
	// op is the item's "op" (model.OpCreate, model.OpUpdate), or "" for
	// an item without one (an existing id updates, an unknown one creates).
	op  string
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
// transaction (one commit). Each item is one of a bulk file (model's bulk
// format, model/bulk.go): an item its caller could not read (Err) fails
// with that error, and Value must be an object. With "op": "create" it is a create
// (custom id with "id", generated without; a taken id fails the item);
// with "op": "update" a merge update of the existing identifier "id" (an
// unknown id fails the item, it never creates). Without "op", an item
// with "id" of an existing identifier is a merge update, with an unknown
// "id" a custom-id create, without "id" a create with a generated id. Each
// item succeeds or fails on its own and a failed item writes nothing. Items
// run the validation path of the single writes (check.go) and fail with
// the same errors. The error is the whole bulk's.
func (s *Service) Bulk(a *Actor, t Target, values []model.BulkItem) ([]ItemResult, error) {
	if len(values) == 0 || len(values) > MaxBulkItems {
		return nil, invalidField("(body)", "must hold 1 to 1000 items")
	}
	items := make([]*bulkItem, len(values))
	for i, x := range values {
		it := &bulkItem{}
		items[i] = it
		if x.Err != nil {
			it.res.Err = x.Err
			continue
		}
		obj, ok := x.Value.(map[string]any)
		if !ok {
			it.res.Err = invalidField("(item)", "must be an object")
			continue
		}
		if opv, ok := obj["op"]; ok {
			op, _ := opv.(string)
			if op != model.OpCreate && op != model.OpUpdate {
				it.res.Err = invalidField("op", `must be "create" or "update"`)
				continue
			}
			it.op = op
		}
		if idv, ok := obj["id"]; ok {
			ids, ok := idv.(string)
			if !ok || ids == "" {
				it.res.Err = invalidField("id", "must be a non-empty string")
				continue
			}
			it.id = ids
		} else if it.op == model.OpUpdate {
			it.res.Err = invalidField("id", "is required: an update names the identifier it changes")
			continue
		}
		if it.op != "" || it.id != "" {
			rest := make(map[string]any, len(obj))
			for k, v := range obj {
				if k != "id" && k != "op" {
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
			if it.pc != nil && (it.op == model.OpCreate || !(it.id != "" && tx.HasRecord(it.pc.key))) {
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
// theirs: it tells creates from updates (by op; without one, an id that
// exists is an update), fails an update of an unknown id and a create of
// a taken one,
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
	// An update may name an id an earlier item of the bulk creates: the
	// transaction runs the items in order.
	created := map[string]bool{}
	for _, it := range items {
		if it.obj == nil {
			continue
		}
		found := it.key != "" && (exists[it.key] || it.op == model.OpUpdate && created[it.key])
		switch {
		case it.op == model.OpUpdate && !found:
			it.res.Err, it.obj = refuse(ErrNotFound, "no identifier "+it.display+": an update changes an existing identifier; op create makes a new one"), nil
			continue
		case it.op == model.OpCreate && found:
			it.res.Err, it.obj = refuse(ErrExists, "identifier "+it.display+" already exists; op update changes it"), nil
			continue
		case found || it.op == model.OpUpdate:
			continue // an update
		}
		req, perr := s.checkCreate(a, t, it.id, it.obj)
		if perr == nil {
			var pc preparedCreate
			if pc, perr, err = s.prepareCreate(a, t, it.id, *req.Payload.URL, req.Meta, now); err != nil {
				return err
			}
			it.pc = &pc
			if it.key != "" && perr == nil {
				created[it.key] = true
			}
		}
		if perr != nil {
			it.res.Err, it.obj = perr, nil
		}
	}
	return nil
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
