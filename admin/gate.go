package admin

import (
	"context"
	"errors"
	"net/http"

	"pidnode/access"
	"pidnode/operator"
	"pidnode/people"
)

// gate is the shared base of the route sets (opsAPI, snaaAPI), which each
// hold it: it says who a request is (the operator key, or an SNAA's key
// through package access), admits an SNAA's request (suspension, rate
// limits, maintenance: access.Admission) and issues and lists keys for
// both the operator's and an SNAA's own key routes. Its wrappers op and
// snaa are in auth.go, its limits in limits.go.
type gate struct {
	// keys says who a secret is (the operator, an SNAA's key), caches
	// valid keys and batches their last-used times; operator writes
	// invalidate it.
	keys *access.Keys
	// adm admits SNAA requests (suspension, rate limits, maintenance) on
	// the API and in the console (access.Admission).
	adm *access.Admission
	// syncAuth is Config.SyncAuth (nil on a single node).
	syncAuth func(ctx context.Context, namespace string) error
	// metrics are the Server's, which the route sets count in.
	metrics *metrics
	// session checks a console session on an API request without a key
	// (console.Server.APISession); set once the console is built.
	session func(r *http.Request, operator bool) (*access.Session, error)
	// people are the accounts of people: a person's event stream lives
	// while the person does.
	people *people.Service
}

// issueKeyAs issues a key for SNAA snaaID, audited as actor (the operator,
// or an SNAA rotating its own keys), and counts a refusal by the key limit.
func (g *gate) issueKeyAs(actor, snaaID, name string) (*IssuedKey, error) {
	k, secret, err := g.keys.Issue(actor, snaaID, name)
	if err != nil {
		if errors.Is(err, access.ErrKeyLimit) {
			g.metrics.refused(refusedSNAAKeys)
		}
		return nil, err
	}
	return operator.Issued(k, snaaID, secret), nil
}

// writeKeys writes the key list of SNAA snaaID (never a secret): the
// operator's GET /ops/v1/snaas/{id}/keys and an SNAA's own GET {base}/keys.
func (g *gate) writeKeys(w http.ResponseWriter, snaaID string) error {
	keys, err := g.keys.List(snaaID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"keys": keys})
	return nil
}
