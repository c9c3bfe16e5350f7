package admin

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"pidnode/write"
)

// Writer commits the API's writes (write.Writer): the database's own
// registry on a single node, a cluster node's etcd transactions otherwise.
type Writer = write.Writer

// unavailable is an error of a Writer that could not have its write
// decided (a cluster node that cannot reach a quorum of etcd): the client is
// told to retry after RetryAfter, with 503.
type unavailable interface {
	error
	RetryAfter() time.Duration
}

// unavailableProblem maps a Writer's unavailable error to 503 with
// Retry-After; false for any other error.
func unavailableProblem(err error) (*Problem, bool) {
	var u unavailable
	if !errors.As(err, &u) {
		return nil, false
	}
	secs := int(math.Ceil(u.RetryAfter().Seconds()))
	if secs < 1 {
		secs = 1
	}
	return problem(http.StatusServiceUnavailable, "writes are unavailable: %v; retry in %d s (resolution is not affected)", u, secs).
		with("Retry-After", strconv.Itoa(secs)), true
}

// storageFull is an error of a Writer whose store refuses every write until
// an operator frees space (a cluster node's etcd at its quota, with its
// NOSPACE alarm raised). Retrying does not help, so the client gets 507
// without Retry-After.
type storageFull interface {
	error
	StorageFull() bool
}

// storageFullProblem maps a Writer's storage-full error to 507
// /problems/storage-full; false for any other error.
func storageFullProblem(err error) (*Problem, bool) {
	var f storageFull
	if !errors.As(err, &f) || !f.StorageFull() {
		return nil, false
	}
	return problem(http.StatusInsufficientStorage, "writes are refused: the cluster's storage is full; the operator must free space (resolution is not affected): %v", f), true
}

// syncBeforeAuth runs Config.SyncAuth before a key is looked up. A request
// that cannot be synced answers 503: its write could not be made either,
// and a read could be stale, which the admin API never is (the resolver
// fronts are where reads go on whatever etcd does).
func (s *Server) syncBeforeAuth(r *http.Request) error {
	if s.syncAuth == nil {
		return nil
	}
	err := s.syncAuth(r.Context())
	if err == nil {
		return nil
	}
	if p, ok := unavailableProblem(err); ok {
		return p
	}
	return err
}

// AuthChanged drops the cached keys and SNAAs, for a writer that changes
// them without going through this Server (a cluster node applying another
// node's revocation), and makes the open event streams look their keys up
// again, so that a revoked key's or a suspended SNAA's streams end. Call it
// after the change has committed. Safe for concurrent use.
func (s *Server) AuthChanged() { s.keys.Invalidate() }
