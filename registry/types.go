package registry

import "time"

// Application states (docs/product.md §4.1).
const (
	StateSubmitted = "SUBMITTED"
	StateApproved  = "APPROVED"
	StateRejected  = "REJECTED"
)

// Contact is a person at an applying organisation.
type Contact struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// Application is an organisation's request to become an SNAA, stored as JSON in
// store.BucketApplications under its ID.
type Application struct {
	ID                    string  `json:"id"`
	Organisation          string  `json:"organisation"`
	TechnicalContact      Contact `json:"technical_contact"`
	AdministrativeContact Contact `json:"administrative_contact"`
	PolicyVersion         string  `json:"policy_version"`
	MaintenanceStatement  string  `json:"maintenance_statement"`
	// Prefixes and CustomIDs are what the organisation asks for; the
	// operator decides on approval.
	Prefixes  []string `json:"prefixes,omitempty"`
	CustomIDs bool     `json:"custom_ids,omitempty"`
	// StatusHash is the SHA-256 (hex) of the status token an application
	// made through the public form or route was given (shown once); the
	// token itself is never stored.
	StatusHash string     `json:"status_token_sha256,omitempty"`
	State      string     `json:"state"`
	Submitted  time.Time  `json:"submitted"`
	Decided    *time.Time `json:"decided,omitempty"`
	Note       string     `json:"note,omitempty"`
	SNAAID     string     `json:"snaa_id,omitempty"`
}

// SNAA is an approved Sub-Name Assigning Authority, stored as JSON in
// store.BucketSNAAs under its ID.
type SNAA struct {
	ID               string    `json:"id"`
	Organisation     string    `json:"organisation"`
	Namespace        string    `json:"namespace"`
	Prefixes         []string  `json:"prefixes"`
	CustomIDs        bool      `json:"custom_ids"`
	Suspended        bool      `json:"suspended"`
	ApplicationID    string    `json:"application_id,omitempty"`
	TechnicalContact Contact   `json:"technical_contact"`
	Created          time.Time `json:"created"`
	Updated          time.Time `json:"updated"`
	// MaxKeys is how many unrevoked keys the SNAA may hold; 0 means the
	// node's default (docs/product.md §4.1).
	MaxKeys int `json:"max_keys,omitempty"`
	// Shard names the etcd cluster that holds the namespace's records in
	// a cluster of several (docs/product.md §10); empty: the registry's.
	Shard string `json:"shard,omitempty"`
}

// MayWrite reports whether the SNAA may write under prefix (canonical upper case).
func (s *SNAA) MayWrite(prefix string) bool {
	for _, p := range s.Prefixes {
		if p == prefix {
			return true
		}
	}
	return false
}

// Key is an API key's metadata. The secret is never stored: Hash is its SHA-256
// (hex), which is also its key in store.BucketKeys.
type Key struct {
	ID       string     `json:"id"`
	SNAAID   string     `json:"snaa_id"`
	Name     string     `json:"name"`
	Hash     string     `json:"hash,omitempty"`
	Created  time.Time  `json:"created"`
	LastUsed *time.Time `json:"last_used,omitempty"`
	Revoked  *time.Time `json:"revoked,omitempty"`
}

// AuditEntry is one line of the append-only audit log, stored as JSON in
// store.BucketAudit under its big-endian sequence number.
type AuditEntry struct {
	Seq   uint64    `json:"seq"`
	Time  time.Time `json:"time"`
	Actor string    `json:"actor"`
	// KeyName is the name of the SNAA key that made an identifier write.
	KeyName string `json:"key_name,omitempty"`
	// Person is the e-mail address of the person whose session made the
	// write (docs/product.md §4.6); empty for a key's write.
	Person string `json:"person,omitempty"`
	Action string `json:"action"`
	Target string `json:"target"`
	Before any    `json:"before,omitempty"`
	After  any    `json:"after,omitempty"`
}

// IdemRecord remembers a create made with an Idempotency-Key, stored as JSON in
// store.BucketIdempotency under "<snaa id> <base> <key>".
type IdemRecord struct {
	BodyHash string    `json:"body_hash"`
	Key      string    `json:"key"` // storage key of the created record
	Created  time.Time `json:"created"`
}
