package people

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/mail"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"pidnode/access"
	"pidnode/internal/cfgerr"
	"pidnode/model"
	"pidnode/registry"
)

// Defaults of Config's zero values.
const (
	DefaultInviteTTL = 72 * time.Hour
	DefaultLockAfter = 5
	DefaultLockFor   = 15 * time.Minute
	// MinPassword and MaxPassword bound a password's length in
	// characters (NIST SP 800-63B §5.1.1.2: at least 8; we ask 12).
	MinPassword = 12
	MaxPassword = 256
)

// Config configures New.
type Config struct {
	// Registry holds the people; Keys commits their writes with the audit
	// entries (access.Keys.Update, through the registry or a cluster
	// node). Required.
	Registry *registry.Registry
	Keys     *access.Keys
	// InviteTTL is how long an invitation stays valid; if zero,
	// DefaultInviteTTL.
	InviteTTL time.Duration
	// LockAfter failed sign-ins within LockFor lock an address for
	// LockFor; if zero, DefaultLockAfter and DefaultLockFor.
	LockAfter int
	LockFor   time.Duration
	// Argon2 are the costs of new password hashes; if zero, DefaultArgon2.
	Argon2 Argon2Params
	// Now is the clock (if nil, time.Now); Rand the source of tokens,
	// salts and secrets (if nil, crypto/rand).
	Now  func() time.Time
	Rand io.Reader
	// Logger receives a line per lockout (the address, never a password);
	// if nil, discarded.
	Logger *slog.Logger
}

// Service manages the people of SNAAs and of the operator. Safe for
// concurrent use.
type Service struct {
	reg   *registry.Registry
	keys  *access.Keys
	ttl   time.Duration
	argon Argon2Params
	now   func() time.Time
	rnd   io.Reader
	log   *slog.Logger
	lock  lockout
	// dummy is a hash of a random password, checked for an unknown
	// address so that its sign-in costs what a known one's does.
	dummy string

	signIns  [3]atomic.Uint64 // ok, denied, locked
	lockouts atomic.Uint64
}

// New validates cfg.
func New(cfg Config) (*Service, error) {
	if cfg.Registry == nil {
		return nil, cfgerr.Required("people", "Registry", ErrConfig)
	}
	if cfg.Keys == nil {
		return nil, cfgerr.Required("people", "Keys", ErrConfig)
	}
	s := &Service{reg: cfg.Registry, keys: cfg.Keys, ttl: cfg.InviteTTL, argon: cfg.Argon2, now: cfg.Now, rnd: cfg.Rand, log: cfg.Logger}
	if s.ttl <= 0 {
		s.ttl = DefaultInviteTTL
	}
	if s.argon == (Argon2Params{}) {
		s.argon = DefaultArgon2
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.rnd == nil {
		s.rnd = rand.Reader
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.lock = lockout{after: cfg.LockAfter, window: cfg.LockFor, lockFor: cfg.LockFor, m: map[string]*failures{}}
	if s.lock.after <= 0 {
		s.lock.after = DefaultLockAfter
	}
	if s.lock.lockFor <= 0 {
		s.lock.window, s.lock.lockFor = DefaultLockFor, DefaultLockFor
	}
	// The dummy comes from crypto/rand, not Config.Rand: nobody needs it
	// reproducible, and a caller's seeded source stays as it was.
	var pw [24]byte
	if _, err := io.ReadFull(rand.Reader, pw[:]); err != nil {
		return nil, err
	}
	var err error
	if s.dummy, err = hashPassword(rand.Reader, s.argon, base64.RawStdEncoding.EncodeToString(pw[:])); err != nil {
		return nil, err
	}
	return s, nil
}

// Actor names the principal making a write of people in the audit log
// (as access.Keys.Update takes it), e.g. "operator", "snaa:X key:Y" or
// "snaa:X person:Z".
type Actor = string

// normEmail checks and lower-cases an e-mail address.
func normEmail(email string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(email))
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e || len(e) > 254 || model.HasControl(e) {
		return "", &model.ValidationError{Errors: []model.FieldError{{Field: "email", Message: "is not an e-mail address"}}}
	}
	return e, nil
}

func checkRole(role string) error {
	if registry.RoleRank(role) == 0 {
		return &model.ValidationError{Errors: []model.FieldError{{Field: "role", Message: "must be viewer, editor or admin"}}}
	}
	return nil
}

func target(snaaID, what string) string {
	if snaaID == "" {
		return "operator/" + what
	}
	return snaaID + "/" + what
}

// Invite invites email with role to SNAA snaaID ("": the operator's
// people), audited as actor, and returns the invitation's token: the only
// time it exists outside the invitee's link. It refuses a bad address or
// role (*model.ValidationError), an unknown SNAA (ErrNotFound) and an
// address that is already a person's (ErrConflict). Expired invitations
// are deleted in the same transaction.
func (s *Service) Invite(actor Actor, snaaID, email, role string) (string, registry.Invitation, error) {
	email, err := normEmail(email)
	if err != nil {
		return "", registry.Invitation{}, err
	}
	if err := checkRole(role); err != nil {
		return "", registry.Invitation{}, err
	}
	var b [32]byte
	if _, err := io.ReadFull(s.rnd, b[:]); err != nil {
		return "", registry.Invitation{}, err
	}
	tok := base64.RawURLEncoding.EncodeToString(b[:])
	now := s.now().UTC()
	in := registry.Invitation{SNAAID: snaaID, Email: email, Role: role, By: actor, Created: now, Expires: now.Add(s.ttl)}
	err = s.keys.Update(actor, nil, func(tx registry.Tx) ([]access.Change, error) {
		if snaaID != "" {
			if _, ok, err := tx.SNAA(snaaID); err != nil || !ok {
				if err == nil {
					err = refuse(ErrNotFound, fmt.Sprintf("no SNAA %q", snaaID))
				}
				return nil, err
			}
		}
		if _, ok, err := tx.People().PersonByEmail(email); err != nil || ok {
			if err == nil {
				err = refuse(ErrConflict, email+" is already a person of this node")
			}
			return nil, err
		}
		if _, err := tx.People().DeleteInvitations(func(x *registry.Invitation) bool { return !now.Before(x.Expires) }); err != nil {
			return nil, err
		}
		after := struct {
			Email   string    `json:"email"`
			Role    string    `json:"role"`
			Expires time.Time `json:"expires"`
		}{email, role, in.Expires}
		return []access.Change{{Action: registry.ActPersonInvite, Target: target(snaaID, email), After: &after}}, tx.People().PutInvitation(access.TokenHash(tok), &in)
	})
	if err != nil {
		return "", registry.Invitation{}, err
	}
	return tok, in, nil
}

// Invitation returns the open invitation of token; ErrNotFound if there is
// none (never was, used, or expired).
func (s *Service) Invitation(token string) (registry.Invitation, error) {
	var in registry.Invitation
	var ok bool
	if token == "" || len(token) > 100 {
		return in, refuse(ErrNotFound, "this invitation link is not valid")
	}
	err := s.reg.View(func(tx registry.Tx) (err error) {
		in, ok, err = tx.People().Invitation(access.TokenHash(token))
		return err
	})
	if err != nil {
		return in, err
	}
	if !ok || !s.now().Before(in.Expires) {
		return in, refuse(ErrNotFound, "this invitation link is not valid: it was used, has expired, or never was")
	}
	return in, nil
}

// Acceptance is how an invitee accepts: a password, or the OpenID Connect
// subject it signed in as (Subject, verified by the caller through OIDC);
// TOTP asks for a second factor (with a password only).
type Acceptance struct {
	Password string
	Subject  string
	TOTP     bool
}

// Joined is an accepted invitation: the new person and, if asked, its TOTP
// secret, shown to the person once and never again.
type Joined struct {
	Person     registry.PersonView
	TOTPSecret string
}

// Accept turns the invitation of token into a person, deleting the
// invitation in the same transaction (single use). It refuses an invalid
// invitation (ErrNotFound), a password out of MinPassword..MaxPassword
// characters (*model.ValidationError), and a subject or address that is
// already a person's (ErrConflict).
func (s *Service) Accept(token string, a Acceptance) (*Joined, error) {
	in, err := s.Invitation(token)
	if err != nil {
		return nil, err
	}
	p := registry.Person{SNAAID: in.SNAAID, Email: in.Email, Role: in.Role, Created: s.now().UTC(), Subject: a.Subject}
	if p.ID, err = access.NewID(s.rnd, "person_"); err != nil {
		return nil, err
	}
	j := &Joined{}
	if a.Subject == "" {
		if n := utf8.RuneCountInString(a.Password); n < MinPassword || n > MaxPassword {
			return nil, &model.ValidationError{Errors: []model.FieldError{{Field: "password", Message: fmt.Sprintf("must have %d to %d characters", MinPassword, MaxPassword)}}}
		}
		if p.PasswordHash, err = hashPassword(s.rnd, s.argon, a.Password); err != nil {
			return nil, err
		}
		if a.TOTP {
			if p.TOTPSecret, err = newTOTPSecret(s.rnd); err != nil {
				return nil, err
			}
			j.TOTPSecret = p.TOTPSecret
		}
	}
	hash := access.TokenHash(token)
	actor := registry.PersonActor(p.SNAAID, p.ID)
	err = s.keys.Update(actor, nil, func(tx registry.Tx) ([]access.Change, error) {
		cur, ok, err := tx.People().Invitation(hash)
		if err != nil {
			return nil, err
		}
		if !ok || !s.now().Before(cur.Expires) {
			return nil, refuse(ErrNotFound, "this invitation link is not valid: it was used, has expired, or never was")
		}
		if _, ok, err := tx.People().PersonByEmail(p.Email); err != nil || ok {
			if err == nil {
				err = refuse(ErrConflict, p.Email+" is already a person of this node")
			}
			return nil, err
		}
		if _, ok, err := tx.People().PersonBySubject(p.Subject); err != nil || ok {
			if err == nil {
				err = refuse(ErrConflict, "this institutional account is already another person's")
			}
			return nil, err
		}
		if err := tx.People().DeleteInvitation(hash); err != nil {
			return nil, err
		}
		v := p.View()
		return []access.Change{{Action: registry.ActPersonJoin, Target: target(p.SNAAID, p.ID), After: &v}}, tx.People().Put(&p)
	})
	if err != nil {
		return nil, err
	}
	j.Person = p.View()
	return j, nil
}

// SignIn checks email's password and, if the person enrolled one, the TOTP
// code. Every failure is the one ErrDenied (an unknown address costs the
// same argon2id work as a known one); the failures of an address within
// Config.LockFor lock it (ErrLocked with RetryAfter) after Config.LockAfter.
// A TOTP code is accepted once.
func (s *Service) SignIn(email, password, code string) (registry.PersonView, error) {
	addr := strings.ToLower(strings.TrimSpace(email))
	now := s.now()
	if d := s.lock.locked(addr, now); d > 0 {
		s.signIns[2].Add(1)
		return registry.PersonView{}, &Error{Kind: ErrLocked, Detail: "this account is locked after repeated failed sign-ins; try again later", RetryAfter: d}
	}
	var p registry.Person
	var ok bool
	if len(addr) <= 254 {
		if err := s.reg.View(func(tx registry.Tx) (err error) {
			p, ok, err = tx.People().PersonByEmail(addr)
			return err
		}); err != nil {
			return registry.PersonView{}, err
		}
	}
	stored := p.PasswordHash
	if !ok || stored == "" {
		stored = s.dummy
	}
	if len(password) > 4*MaxPassword {
		password = password[:4*MaxPassword]
	}
	good := checkPassword(stored, password) && ok && p.PasswordHash != ""
	var step uint64
	if good && p.TOTPSecret != "" {
		step, good = checkTOTP(p.TOTPSecret, strings.TrimSpace(code), now)
	}
	if good && !s.lock.succeed(addr, step) {
		good = false
	}
	if !good {
		s.signIns[1].Add(1)
		if s.lock.fail(addr, now) {
			s.lockouts.Add(1)
			s.log.Warn("account locked after failed sign-ins", "email", addr)
		}
		return registry.PersonView{}, refuse(ErrDenied, "the e-mail address, password or code is wrong")
	}
	s.signIns[0].Add(1)
	return p.View(), nil
}

// SignInSubject returns the person bound to OpenID Connect subject sub (a
// subject the caller has verified through OIDC); ErrDenied if it is
// nobody's.
func (s *Service) SignInSubject(sub string) (registry.PersonView, error) {
	var p registry.Person
	var ok bool
	if err := s.reg.View(func(tx registry.Tx) (err error) {
		p, ok, err = tx.People().PersonBySubject(sub)
		return err
	}); err != nil {
		return registry.PersonView{}, err
	}
	if !ok {
		s.signIns[1].Add(1)
		return registry.PersonView{}, refuse(ErrDenied, "your institutional account is not a person of this node; ask your SNAA's admin for an invitation")
	}
	s.signIns[0].Add(1)
	return p.View(), nil
}

// OpenInvitation is an invitation not yet accepted, as the people page
// shows it: ID is the SHA-256 of its token (from which the token cannot be
// had), by which Withdraw takes it back.
type OpenInvitation struct {
	ID      string
	Email   string
	Role    string
	Expires time.Time
}

// Invitations returns the open (unexpired) invitations of SNAA snaaID
// ("": the operator's).
func (s *Service) Invitations(snaaID string) ([]OpenInvitation, error) {
	var hashes []string
	var ins []registry.Invitation
	if err := s.reg.View(func(tx registry.Tx) (err error) {
		hashes, ins, err = tx.People().Invitations(snaaID)
		return err
	}); err != nil {
		return nil, err
	}
	now := s.now()
	var out []OpenInvitation
	for i, in := range ins {
		if now.Before(in.Expires) {
			out = append(out, OpenInvitation{ID: hashes[i], Email: in.Email, Role: in.Role, Expires: in.Expires})
		}
	}
	return out, nil
}

// Withdraw takes back SNAA snaaID's invitation id (OpenInvitation.ID),
// audited as actor: its link stops working. An unknown one (or another
// SNAA's) is ErrNotFound.
func (s *Service) Withdraw(actor Actor, snaaID, id string) error {
	return s.keys.Update(actor, nil, func(tx registry.Tx) ([]access.Change, error) {
		in, ok, err := tx.People().Invitation(id)
		if err != nil {
			return nil, err
		}
		if !ok || in.SNAAID != snaaID {
			return nil, refuse(ErrNotFound, "no such invitation")
		}
		before := struct {
			Email string `json:"email"`
			Role  string `json:"role"`
		}{in.Email, in.Role}
		return []access.Change{{Action: registry.ActPersonWithdraw, Target: target(snaaID, in.Email), Before: &before}}, tx.People().DeleteInvitation(id)
	})
}

// Present reports whether person id of SNAA snaaID exists and the SNAA is
// not suspended (a long-lived stream of a person's session checks it again
// on every change and heartbeat).
func (s *Service) Present(id, snaaID string) bool {
	ok := false
	err := s.reg.View(func(tx registry.Tx) error {
		p, found, err := tx.People().Person(id)
		if err != nil || !found || p.SNAAID != snaaID {
			return err
		}
		sn, found, err := tx.SNAA(snaaID)
		ok = found && !sn.Suspended
		return err
	})
	return err == nil && ok
}

// List returns the people of SNAA snaaID ("": the operator's).
func (s *Service) List(snaaID string) ([]registry.PersonView, error) {
	var ps []registry.Person
	if err := s.reg.View(func(tx registry.Tx) (err error) {
		ps, err = tx.People().Of(snaaID)
		return err
	}); err != nil {
		return nil, err
	}
	out := make([]registry.PersonView, len(ps))
	for i := range ps {
		out[i] = ps[i].View()
	}
	return out, nil
}

// change reads person id of snaaID and hands it to fn, in one write of
// access.Keys.Update; an unknown person (or another SNAA's) is ErrNotFound.
func (s *Service) change(actor Actor, snaaID, id string, fn func(tx registry.Tx, p *registry.Person) ([]access.Change, error)) error {
	return s.keys.Update(actor, nil, func(tx registry.Tx) ([]access.Change, error) {
		p, ok, err := tx.People().Person(id)
		if err != nil {
			return nil, err
		}
		if !ok || p.SNAAID != snaaID {
			return nil, refuse(ErrNotFound, fmt.Sprintf("no person %q", id))
		}
		return fn(tx, &p)
	})
}

// SetRole gives person id of snaaID role, audited as actor.
func (s *Service) SetRole(actor Actor, snaaID, id, role string) error {
	if err := checkRole(role); err != nil {
		return err
	}
	return s.change(actor, snaaID, id, func(tx registry.Tx, p *registry.Person) ([]access.Change, error) {
		before := p.View()
		p.Role = role
		after := p.View()
		return []access.Change{{Action: registry.ActPersonRole, Target: target(snaaID, id), Before: &before, After: &after}}, tx.People().Put(p)
	})
}

// Remove removes person id of snaaID, audited as actor, and deletes its
// sessions in the same transaction: they end on every node as the write
// applies there.
func (s *Service) Remove(actor Actor, snaaID, id string) error {
	return s.change(actor, snaaID, id, func(tx registry.Tx, p *registry.Person) ([]access.Change, error) {
		before := p.View()
		return []access.Change{{Action: registry.ActPersonRemove, Target: target(snaaID, id), Before: &before}}, tx.People().Delete(p)
	})
}

// KeyOnly is what NeedRole answers for a request no person may make: the
// backup, a copy of the whole database with every password hash and TOTP
// secret in it, is the operator key's alone.
const KeyOnly = "the operator key"

// NeedRole is the least role a request of a person needs, the one rule of
// the console and the API: reading (GET, HEAD) is a viewer's; writing keys,
// people or webhooks, and every write on the operator's routes, an
// admin's; other writes (identifiers) an editor's; the backup no person's
// (KeyOnly). Routes are told apart by whole path segments, so that an
// identifier or namespace named like one ("keystone-7") is not mistaken
// for it.
func NeedRole(method, path string, operator bool) string {
	seg := strings.Split(strings.Trim(path, "/"), "/")
	at := func(i int, name string) bool { return i < len(seg) && seg[i] == name }
	if at(0, "ops") && at(1, "v1") && at(2, "backup") {
		return KeyOnly
	}
	if method == "GET" || method == "HEAD" {
		return registry.RoleViewer
	}
	manages := (at(0, "console") && (at(1, "keys") || at(1, "people"))) || // the console's pages
		(at(1, "v2") && at(2, "keys")) || // the API's /{pid}/v2/keys…
		(at(1, "v2") && at(2, "handles") && at(5, "webhooks")) // …/handles/{prefix}/{ns}/webhooks…
	if operator || manages {
		return registry.RoleAdmin
	}
	return registry.RoleEditor
}

// Allows reports whether a person of role may make a request that needs
// need (NeedRole); KeyOnly, or anything not a role, allows nobody.
func Allows(role, need string) bool {
	n := registry.RoleRank(need)
	return n > 0 && registry.RoleRank(role) >= n
}
