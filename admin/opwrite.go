package admin

import (
	"errors"

	"pidnode/access"
	"pidnode/registry"
)

// change is one audit entry of an operator write: what it did to which target.
type change struct {
	action, target string
	before, after  any
}

// opWriteAs is the one shape of admin's own writes of the admin buckets
// (webhooks): package access's Keys.Update, audited as actor, with the
// *Problem a handler refuses with as a refusal (see there: the write and
// its audit entries commit together or not at all, a refusal commits
// nothing, and the cache of keys is invalidated after). The operator's
// decisions are package operator's.
func (s *Server) opWriteAs(actor string, fn func(tx registry.Tx) ([]change, error)) error {
	return s.keys.Update(actor, isProblem, func(tx registry.Tx) ([]access.Change, error) {
		cs, err := fn(tx)
		out := make([]access.Change, len(cs))
		for i, c := range cs {
			out[i] = access.Change{Action: c.action, Target: c.target, Before: c.before, After: c.after}
		}
		return out, err
	})
}

func isProblem(err error) bool {
	var p *Problem
	return errors.As(err, &p)
}
