package registry

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"pidnode/store"
)

// Roles of a person (docs/product.md §4.6): a viewer reads, an editor also
// writes identifiers, an admin also manages the keys and the people of its
// SNAA (of the operator: applications, SNAAs and the operator's people).
const (
	RoleViewer = "viewer"
	RoleEditor = "editor"
	RoleAdmin  = "admin"
)

// RoleRank orders the roles (0: not a role).
func RoleRank(role string) int {
	switch role {
	case RoleViewer:
		return 1
	case RoleEditor:
		return 2
	case RoleAdmin:
		return 3
	}
	return 0
}

// Audit actions of people.
const (
	ActPersonInvite = "person.invite"
	ActPersonJoin   = "person.join"
	ActPersonRole   = "person.role"
	ActPersonRemove = "person.remove"
	// ActPersonWithdraw: an invitation taken back before it was used.
	ActPersonWithdraw = "person.withdraw"
)

// Person is a member of an SNAA's staff (or, with SNAAID empty, of the
// operator's), stored as JSON in store.BucketPeople under "p/" and its ID,
// with the indexes "e/<email>" and "s/<OIDC subject>" holding its ID.
// PasswordHash and TOTPSecret never leave the node: PersonView drops them,
// and only package people reads them.
type Person struct {
	ID     string `json:"id"`
	SNAAID string `json:"snaa_id,omitempty"`
	// Email is the address the person was invited at, lower case; unique
	// on the node.
	Email string `json:"email"`
	Role  string `json:"role"`
	// PasswordHash is the argon2id hash in PHC form ("" when the person
	// signs in through OpenID Connect).
	PasswordHash string `json:"password_hash,omitempty"`
	// TOTPSecret is the base32 secret of the person's second factor, if
	// any; it is shown once, at enrolment.
	TOTPSecret string `json:"totp_secret,omitempty"`
	// Subject is the OpenID Connect subject ("sub") bound at enrolment.
	Subject string    `json:"oidc_subject,omitempty"`
	Created time.Time `json:"created"`
}

// PersonView is p as a page or the API shows it: without its secrets.
type PersonView struct {
	ID      string    `json:"id"`
	SNAAID  string    `json:"snaa_id,omitempty"`
	Email   string    `json:"email"`
	Role    string    `json:"role"`
	TOTP    bool      `json:"totp"`
	OIDC    bool      `json:"oidc"`
	Created time.Time `json:"created"`
}

// View is p without its secrets.
func (p *Person) View() PersonView {
	return PersonView{ID: p.ID, SNAAID: p.SNAAID, Email: p.Email, Role: p.Role, TOTP: p.TOTPSecret != "",
		OIDC: p.Subject != "", Created: p.Created}
}

// Invitation is an open invitation, stored as JSON in store.BucketPeople
// under "i/" and the SHA-256 (hex) of its token; the token itself is never
// stored. Accepting it deletes it (single use).
type Invitation struct {
	SNAAID  string    `json:"snaa_id,omitempty"`
	Email   string    `json:"email"`
	Role    string    `json:"role"`
	By      string    `json:"by"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
}

// PeopleTx reads and writes the people bucket inside a transaction
// (Tx.People).
type PeopleTx struct{ t Tx }

// People is the people bucket of t.
func (t Tx) People() PeopleTx { return PeopleTx{t} }

// PersonActor is how a person appears as the actor of the audit log:
// "snaa:<id> person:<id>", or "operator person:<id>" for the operator's.
func PersonActor(snaaID, personID string) string {
	if snaaID == "" {
		return ActorOperator + " person:" + personID
	}
	return "snaa:" + snaaID + " person:" + personID
}

func personKey(id string) string       { return "p/" + id }
func emailKey(email string) string     { return "e/" + strings.ToLower(email) }
func subjectKey(sub string) string     { return "s/" + sub }
func invitationKey(hash string) string { return "i/" + hash }

// Person returns the person of id.
func (pt PeopleTx) Person(id string) (Person, bool, error) {
	var p Person
	k := personKey(id)
	ok, err := decodeJSON(pt.t.Get(store.BucketPeople, []byte(k)), k, &p)
	return p, ok, err
}

// PersonByEmail returns the person invited at email.
func (pt PeopleTx) PersonByEmail(email string) (Person, bool, error) {
	return pt.personByIndex(emailKey(email))
}

// PersonBySubject returns the person bound to OpenID Connect subject sub.
func (pt PeopleTx) PersonBySubject(sub string) (Person, bool, error) {
	if sub == "" {
		return Person{}, false, nil
	}
	return pt.personByIndex(subjectKey(sub))
}

func (pt PeopleTx) personByIndex(k string) (Person, bool, error) {
	id := pt.t.Get(store.BucketPeople, []byte(k))
	if id == nil {
		return Person{}, false, nil
	}
	return pt.Person(string(id))
}

// Put stores p and its indexes. The caller has checked that its
// email and subject are not another person's.
func (pt PeopleTx) Put(p *Person) error {
	t := pt.t
	if err := t.putJSON(store.BucketPeople, personKey(p.ID), p); err != nil {
		return err
	}
	if err := t.Put(store.BucketPeople, []byte(emailKey(p.Email)), []byte(p.ID)); err != nil {
		return err
	}
	if p.Subject != "" {
		return t.Put(store.BucketPeople, []byte(subjectKey(p.Subject)), []byte(p.ID))
	}
	return nil
}

// Delete removes p, its indexes and every session of it.
func (pt PeopleTx) Delete(p *Person) error {
	t := pt.t
	for _, k := range []string{personKey(p.ID), emailKey(p.Email)} {
		if err := t.Delete(store.BucketPeople, []byte(k)); err != nil {
			return err
		}
	}
	if p.Subject != "" {
		if err := t.Delete(store.BucketPeople, []byte(subjectKey(p.Subject))); err != nil {
			return err
		}
	}
	_, err := t.DeleteSessions(0, func(_ string, s *Session) bool { return s.PersonID == p.ID })
	return err
}

// Of returns the people of SNAA snaaID ("": the operator's), in
// the order of their ids.
func (pt PeopleTx) Of(snaaID string) ([]Person, error) {
	t := pt.t
	var out []Person
	c := t.bucket(store.BucketPeople).Cursor()
	pre := []byte("p/")
	for k, v := c.Seek(pre); k != nil && strings.HasPrefix(string(k), "p/"); k, v = c.Next() {
		var p Person
		if err := json.Unmarshal(v, &p); err != nil {
			return nil, fmt.Errorf("registry: person record: %w", err)
		}
		if p.SNAAID == snaaID {
			out = append(out, p)
		}
	}
	return out, nil
}

// Invitation returns the invitation whose token hashes to hash.
func (pt PeopleTx) Invitation(hash string) (Invitation, bool, error) {
	var in Invitation
	k := invitationKey(hash)
	ok, err := decodeJSON(pt.t.Get(store.BucketPeople, []byte(k)), k, &in)
	return in, ok, err
}

// PutInvitation stores in under its token's hash.
func (pt PeopleTx) PutInvitation(hash string, in *Invitation) error {
	t := pt.t
	return t.putJSON(store.BucketPeople, invitationKey(hash), in)
}

// DeleteInvitation removes the invitation whose token hashes to hash.
func (pt PeopleTx) DeleteInvitation(hash string) error {
	t := pt.t
	return t.Delete(store.BucketPeople, []byte(invitationKey(hash)))
}

// Invitations returns the invitations of SNAA snaaID ("": the
// operator's), each with the hash it is stored under.
func (pt PeopleTx) Invitations(snaaID string) (hashes []string, out []Invitation, err error) {
	c := pt.t.bucket(store.BucketPeople).Cursor()
	for k, v := c.Seek([]byte("i/")); k != nil && strings.HasPrefix(string(k), "i/"); k, v = c.Next() {
		var in Invitation
		if err := json.Unmarshal(v, &in); err != nil {
			return nil, nil, fmt.Errorf("registry: invitation record: %w", err)
		}
		if in.SNAAID == snaaID {
			hashes, out = append(hashes, string(k[2:])), append(out, in)
		}
	}
	return hashes, out, nil
}

// DeleteInvitations removes the invitations for which drop is true and
// returns how many it removed.
func (pt PeopleTx) DeleteInvitations(drop func(in *Invitation) bool) (int, error) {
	t := pt.t
	var doomed [][]byte
	c := t.bucket(store.BucketPeople).Cursor()
	for k, v := c.Seek([]byte("i/")); k != nil && strings.HasPrefix(string(k), "i/"); k, v = c.Next() {
		var in Invitation
		if err := json.Unmarshal(v, &in); err != nil {
			return 0, fmt.Errorf("registry: invitation record: %w", err)
		}
		if drop(&in) {
			doomed = append(doomed, append([]byte(nil), k...))
		}
	}
	for _, k := range doomed {
		if err := t.Delete(store.BucketPeople, k); err != nil {
			return 0, err
		}
	}
	return len(doomed), nil
}
