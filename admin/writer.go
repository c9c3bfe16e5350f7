package admin

import (
	"net/http"

	"pidnode/write"
)

// Writer commits the API's writes (write.Writer): the database's own
// registry on a single node, a cluster node's etcd transactions otherwise.
type Writer = write.Writer

// syncBeforeAuth runs Config.SyncAuth before a key is looked up. A request
// that cannot be synced answers 503: its write could not be made either,
// and a read could be stale, which the admin API never is (the resolver
// fronts are where reads go on whatever etcd does).
func (s *Server) syncBeforeAuth(r *http.Request) error {
	if s.syncAuth == nil {
		return nil
	}
	return s.syncAuth(r.Context())
}

// AuthChanged drops the cached keys and SNAAs, for a writer that changes
// them without going through this Server (a cluster node applying another
// node's revocation), and makes the open event streams look their keys up
// again, so that a revoked key's or a suspended SNAA's streams end. Call it
// after the change has committed. Safe for concurrent use.
func (s *Server) AuthChanged() { s.keys.Invalidate() }
