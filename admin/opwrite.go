package admin

import (
	"errors"

	"pidnode/registry"
)

// change is one audit entry of an operator write: what it did to which target.
type change struct {
	action, target string
	before, after  any
}

// opWrite is the one shape of the operator writes (applications, SNAAs,
// keys). In one transaction (updateAuth, which also invalidates the auth
// cache), fn reads and checks; it either refuses with a *Problem before it
// writes anything, or writes and returns the changes it made, which opWrite
// appends to the audit log in the same transaction, so that a write and its
// audit entries commit together or not at all. A refusal commits an empty
// transaction (returning nil to the store, so that bbolt does not roll back
// and re-run the batch partners) and is then returned as opWrite's error;
// any other error of fn rolls back. fn may be run more than once and must
// set what it hands out anew each time.
func (s *Server) opWrite(fn func(tx registry.Tx) ([]change, error)) error {
	return s.opWriteAs(ActorOperator, fn)
}

// opWriteAs is opWrite with the audit entries' actor: the operator, or an
// SNAA managing its own keys in the console (docs/product.md §4.2).
func (s *Server) opWriteAs(actor string, fn func(tx registry.Tx) ([]change, error)) error {
	var refused *Problem
	err := s.updateAuth(func(tx registry.Tx) error {
		refused = nil
		changes, err := fn(tx)
		if errors.As(err, &refused) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, c := range changes {
			if err := tx.Audit(actor, c.action, c.target, c.before, c.after); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if refused != nil {
		return refused
	}
	return nil
}
