package cluster

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"pidnode/internal/cfgerr"
)

var (
	// ErrConfig is wrapped by every *ConfigError (a Config field Dial,
	// Reclaim or Register refuses, CheckNodeName's and CheckShardName's
	// refusals), and by the refusals of a namespace move's arguments.
	ErrConfig = errors.New("cluster: invalid configuration")

	// ErrUnreachable: etcd did not answer within Config.DialTimeout.
	// Returned wrapped in *UnreachableError.
	ErrUnreachable = errors.New("cluster: etcd unreachable")

	// ErrLimits: etcd's --max-txn-ops or --max-request-bytes is too small for
	// a bulk write. Returned wrapped in *LimitError.
	ErrLimits = errors.New("cluster: etcd limits too small")

	// ErrUnavailable: etcd did not decide a write within the write timeout
	// (no quorum, no connection). The write may or may not have been made;
	// admin answers 503 with Retry-After.
	ErrUnavailable = errors.New("cluster: etcd unavailable")

	// ErrStorageFull: etcd refused a write because its database reached its
	// quota (--quota-backend-bytes) and it raised its NOSPACE alarm. Every
	// write fails so until space is freed and the alarm disarmed (Reclaim);
	// retrying does not help. Returned wrapped in *StorageFullError; admin
	// answers 507.
	ErrStorageFull = errors.New("cluster: etcd storage full")

	// ErrUnknownShard: a shard name that is not one of Config.Shards.
	ErrUnknownShard = errors.New("cluster: no such shard")

	// ErrCrossShard: a write's records belong to namespaces of another
	// shard than the one its owner's namespace is on; one etcd transaction
	// cannot hold it.
	ErrCrossShard = errors.New("cluster: a write spans shards")

	// ErrConflict: a write lost to concurrent writes more times than it is
	// retried.
	ErrConflict = errors.New("cluster: write kept conflicting with concurrent writes")
)

// ConfigError reports a Config field that Dial, Reclaim or Register refused,
// or a name CheckNodeName or CheckShardName refused; it wraps ErrConfig.
type ConfigError = cfgerr.Error

// required is the *ConfigError for a required field left unset.
func required(field string) *ConfigError { return cfgerr.Required("cluster", field, ErrConfig) }

// configError is the *ConfigError for field with the rejected value v.
func configError(field, v, reason string) *ConfigError {
	return &ConfigError{Pkg: "cluster", Field: field, Value: v, Reason: reason, Err: ErrConfig}
}

// UnreachableError says which endpoints did not answer and why.
type UnreachableError struct {
	Endpoints []string
	Err       error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("etcd %v did not answer: %v", e.Endpoints, e.Err)
}

func (e *UnreachableError) Unwrap() []error { return []error{ErrUnreachable, e.Err} }

// LimitError names the etcd setting that is too small and the value a
// cluster needs.
type LimitError struct {
	Setting string // "--max-txn-ops" or "--max-request-bytes"
	Need    int
	Err     error // etcd's refusal
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("etcd refuses a transaction of a full bulk write: its %s is below %d (%v)", e.Setting, e.Need, e.Err)
}

func (e *LimitError) Unwrap() error { return ErrLimits }

// UnavailableError is a write etcd did not decide in time. RetryAfter is the
// wait the admin API's 503 asks of the client.
type UnavailableError struct {
	Err error
}

func (e *UnavailableError) Error() string { return "etcd unavailable: " + e.Err.Error() }

func (e *UnavailableError) Unwrap() []error { return []error{ErrUnavailable, e.Err} }

// RetryAfter is how long a client should wait before trying again: about
// one etcd leader election.
func (e *UnavailableError) RetryAfter() time.Duration { return 2 * time.Second }

// StorageFullError is a write etcd refused with its NOSPACE alarm raised.
type StorageFullError struct {
	Shard string // the shard's name in a cluster of several, else ""
	Err   error  // etcd's refusal
}

func (e *StorageFullError) Error() string {
	if e.Shard != "" {
		return "the etcd of shard " + e.Shard + " is full (NOSPACE alarm: it reached --quota-backend-bytes) and refuses every write to its namespaces until space is freed and the alarm disarmed: " +
			"run `pidnode cluster reclaim` with its endpoints, and raise the quota if that frees too little"
	}
	return "etcd's database is full (NOSPACE alarm: it reached --quota-backend-bytes) and refuses every write until space is freed and the alarm disarmed: " +
		"run `pidnode cluster reclaim`, and raise the quota if that frees too little"
}

func (e *StorageFullError) Unwrap() []error { return []error{ErrStorageFull, e.Err} }

// StorageFull marks the error for the admin API, which answers 507 to it.
func (e *StorageFullError) StorageFull() bool { return true }

// ShardsError is Node.WriteState's answer when some shards cannot make
// writes: Errs[i] says why for shard Names[i].
type ShardsError struct {
	Names []string
	Errs  []error
}

func (e *ShardsError) Error() string {
	var b strings.Builder
	for i, name := range e.Names {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "shard %s: %v", name, e.Errs[i])
	}
	return b.String()
}

// StorageFull reports whether every shard named is storage-full (the
// admin API's readiness then reads "storage full").
func (e *ShardsError) StorageFull() bool {
	for _, err := range e.Errs {
		var f *StorageFullError
		if !errors.As(err, &f) {
			return false
		}
	}
	return true
}

// movedError is a write that went to a shard a namespace of it is moving
// off (MoveNamespace): CommitAs sends it again, once the namespace's SNAA
// names its new shard if the namespace is the owner's.
type movedError struct {
	namespaces []string
}

func (e *movedError) Error() string {
	return "cluster: namespace " + strings.Join(e.namespaces, ", ") + " moved to another shard"
}
