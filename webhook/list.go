package webhook

import (
	"pidnode/registry"
)

// Views returns the endpoints of namespace ns under prefix with their
// delivery state (never a secret), as GET …/webhooks lists them, for the
// console's read-only overview; and the sequence number of the namespace
// feed's newest entry, against which each endpoint's cursor says how far
// its deliveries are.
func Views(reg *registry.Registry, prefix, ns string) ([]View, uint64, error) {
	nsp, err := reg.NamespaceKey(prefix, ns)
	if err != nil {
		return nil, 0, err
	}
	var out []View
	var last uint64
	err = reg.View(func(tx registry.Tx) error {
		es, err := endpoints(tx.Tx, nsp)
		if err != nil {
			return err
		}
		for i := range es {
			out = append(out, viewOf(&es[i]))
		}
		last, err = tx.NamespaceAuditLast(nsp)
		return err
	})
	return out, last, err
}
