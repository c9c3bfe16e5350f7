package admin

import (
	"pidnode/read"
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

// Identifier is the reply body of the SNAA routes (docs/product.md §4), and
// Links its resolver URLs: package read's view of an identifier.
type (
	Identifier = read.Identifier
	Links      = read.Links
)
