package handlev

import "pidnode/internal/ascii"

// TTLType says how Value.TTL is read (RFC 3651 §3.1).
type TTLType uint8

const (
	// TTLRelative: TTL is a number of seconds a client may cache the value.
	TTLRelative TTLType = 0
	// TTLAbsolute: TTL is the unix time (seconds) at which the value expires.
	TTLAbsolute TTLType = 1
)

// Perm is the permission byte of a handle value (RFC 3651 §3.1).
type Perm uint8

const (
	PermPublicWrite Perm = 0x01
	PermPublicRead  Perm = 0x02
	PermAdminWrite  Perm = 0x04
	PermAdminRead   Perm = 0x08

	// PermDefault is the usual 1110: admin read, admin write, public read.
	// The Handle JSON API omits "permissions" when a value has exactly this.
	PermDefault = PermAdminRead | PermAdminWrite | PermPublicRead
)

// Ref is a reference from a value to a value of another handle.
type Ref struct {
	Handle string
	Index  int32
}

// Value is one handle value. Data holds the raw value bytes as they are on the
// wire (for HS_ADMIN and HS_VLIST, their RFC 3651 encodings; see Admin and VList).
//
// A Value held in a Record published to readers (the cache) is immutable: never
// modify Data or Refs in place.
type Value struct {
	Index     int32
	Type      string
	Data      []byte
	TTLType   TTLType
	TTL       int32 // seconds (TTLRelative) or unix expiry time (TTLAbsolute)
	Timestamp int64 // unix seconds of the last change; 0 = unknown (omitted in JSON)
	Perm      Perm
	Refs      []Ref
}

// Record is a handle and its values in storage order. Order matters: the Handle
// JSON API returns values in this order and the redirect picks the first URL value.
type Record struct {
	// Handle is the canonical display form (upper case, dashes as issued).
	Handle string
	Values []Value
}

// Admin is the decoded data of an HS_ADMIN value (docs/handle-protocol.md §1.2, §3.4).
type Admin struct {
	Mask   uint16
	Handle string
	Index  int32
}

// Admin permission bits (docs/handle-protocol.md §1.2).
const (
	AdminAddHandle    uint16 = 0x0001
	AdminDeleteHandle uint16 = 0x0002
	AdminAddNA        uint16 = 0x0004
	AdminDeleteNA     uint16 = 0x0008
	AdminModifyValue  uint16 = 0x0010
	AdminRemoveValue  uint16 = 0x0020
	AdminAddValue     uint16 = 0x0040
	AdminModifyAdmin  uint16 = 0x0080
	AdminRemoveAdmin  uint16 = 0x0100
	AdminAddAdmin     uint16 = 0x0200
	AdminReadValue    uint16 = 0x0400
	AdminListHandles  uint16 = 0x0800
	AdminAll          uint16 = 0x0FFF
)

// Well-known value types.
const (
	TypeURL     = "URL"
	TypeEmail   = "EMAIL"
	TypeAdmin   = "HS_ADMIN"
	TypeVList   = "HS_VLIST"
	TypeSite    = "HS_SITE"
	TypePubKey  = "HS_PUBKEY"
	TypeAlias   = "HS_ALIAS"
	TypeStatus  = "STATUS"
	TypeRelated = "RELATED"
)

// Status is the lifecycle state a record carries in its STATUS value (docs/product.md §3).
type Status uint8

const (
	// StatusNone: the record has no STATUS value (e.g. an imported legacy record);
	// it resolves like a registered one.
	StatusNone Status = iota
	StatusSubmitted
	StatusRegistered
	StatusObsoleted
	StatusDeprecated
)

var statusNames = [...]string{"", "SUBMITTED", "REGISTERED", "OBSOLETED", "DEPRECATED"}

// String returns the STATUS value text ("" for StatusNone).
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return ""
}

// Tombstoned reports whether the identifier is retired (410 Gone on redirect).
func (s Status) Tombstoned() bool { return s == StatusObsoleted || s == StatusDeprecated }

// ParseStatus maps STATUS value text (ASCII case-insensitive) to a Status.
func ParseStatus(b []byte) (Status, bool) {
	for i := 1; i < len(statusNames); i++ {
		if ascii.EqualFold(b, statusNames[i]) {
			return Status(i), true
		}
	}
	return StatusNone, false
}

// Status returns the record's lifecycle state from its first STATUS value.
func (r *Record) Status() Status {
	for i := range r.Values {
		if ascii.EqualFold(r.Values[i].Type, TypeStatus) {
			s, _ := ParseStatus(r.Values[i].Data)
			return s
		}
	}
	return StatusNone
}
