package admin

import (
	"time"

	"pidnode/registry"
)

// The records of the admin buckets are also the bodies of the operator
// routes' replies.
type (
	Application = registry.Application
	Contact     = registry.Contact
	SNAA        = registry.SNAA
	Key         = registry.Key
	AuditEntry  = registry.AuditEntry
)

// Application states and audit actions, as the API shows them.
const (
	StateSubmitted = registry.StateSubmitted
	StateApproved  = registry.StateApproved
	StateRejected  = registry.StateRejected

	ActApplicationSubmit  = registry.ActApplicationSubmit
	ActApplicationApprove = registry.ActApplicationApprove
	ActApplicationReject  = registry.ActApplicationReject
	ActSNAACreate         = registry.ActSNAACreate
	ActSNAAUpdate         = registry.ActSNAAUpdate
	ActKeyIssue           = registry.ActKeyIssue
	ActKeyRevoke          = registry.ActKeyRevoke
	ActHandleCreate       = registry.ActHandleCreate
	ActHandleUpdate       = registry.ActHandleUpdate
	ActorOperator         = registry.ActorOperator
)

// Identifier is the reply body of the SNAA routes (docs/product.md §4).
type Identifier struct {
	Handle    string         `json:"handle"`
	Prefix    string         `json:"prefix"`
	Namespace string         `json:"namespace"`
	ID        string         `json:"id"`
	URL       string         `json:"url"`
	Metadata  map[string]any `json:"metadata"`
	Version   uint64         `json:"version"`
	Created   time.Time      `json:"created"`
	Updated   time.Time      `json:"updated"`
	Links     Links          `json:"links"`

	key string // storage key, for list cursors
	// metaJSON, if not nil, is Metadata's JSON as appendJSON writes it,
	// encoded before (a create encodes it for its audit entry too).
	metaJSON []byte
}

// Links are the resolver URLs of an identifier.
type Links struct {
	Resolve    string `json:"resolve"`
	API        string `json:"api"`
	NoRedirect string `json:"noredirect"`
}
