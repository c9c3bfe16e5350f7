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

// opWrite is the one shape of the operator writes (applications, SNAAs,
// keys): package access's Keys.Update, audited as the operator, with the
// *Problem a handler refuses with as a refusal (see there: the write and
// its audit entries commit together or not at all, a refusal commits
// nothing, and the cache of keys is invalidated after).
func (s *Server) opWrite(fn func(tx registry.Tx) ([]change, error)) error {
	return s.opWriteAs(ActorOperator, fn)
}

// opWriteAs is opWrite with the audit entries' actor: the operator, or an
// SNAA managing its own keys in the console (docs/product.md §4.2).
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
