package people

import (
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"pidnode/access"
	"pidnode/internal/storetest"
	"pidnode/registry"
)

// cheap keeps the tests fast; the timing test uses the default costs.
var cheap = Argon2Params{Memory: 64, Time: 1, Threads: 1}

func newService(t testing.TB, now *time.Time, p Argon2Params) (*Service, *registry.Registry, *access.Keys) {
	t.Helper()
	db, namer := storetest.Open(t)
	reg, err := registry.New(registry.Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := access.New(access.Config{Registry: reg, OperatorKey: "op"})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Update(func(tx registry.Tx) error { return tx.PutSNAA(&registry.SNAA{ID: "s1", Namespace: "NS"}) }); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Registry: reg, Keys: keys, Argon2: p, Now: func() time.Time { return *now }, LockAfter: 3, LockFor: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return s, reg, keys
}

// TestTOTPVectors: the codes of RFC 6238 Appendix B (SHA-1), last six digits.
func TestTOTPVectors(t *testing.T) {
	secret := b32.EncodeToString([]byte("12345678901234567890"))
	for _, c := range []struct {
		unix int64
		want string
	}{{59, "287082"}, {1111111109, "081804"}, {1111111111, "050471"}, {1234567890, "005924"}, {2000000000, "279037"}, {20000000000, "353130"}} {
		got, err := TOTPCode(secret, time.Unix(c.unix, 0))
		if err != nil || got != c.want {
			t.Errorf("TOTPCode(%d) = %q, %v, want %q", c.unix, got, err, c.want)
		}
	}
}

func TestPasswordHash(t *testing.T) {
	h, err := hashPassword(rand.Reader, cheap, "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Errorf("hash = %q, not argon2id PHC", h)
	}
	if !checkPassword(h, "correct horse battery") || checkPassword(h, "correct horse batterY") {
		t.Error("checkPassword does not tell the password from another")
	}
	for _, bad := range []string{"", "$argon2i$v=19$m=64,t=1,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAA",
		"$argon2id$v=19$m=99999999,t=1,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAA",
		"$argon2id$v=19$m=64,t=0,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAA", h + "$"} {
		if _, err := parsePHC(bad); err == nil {
			t.Errorf("parsePHC(%q) accepted", bad)
		}
	}
}

// FuzzParsePHC: a stored hash is parsed without panic, and what parses is
// what hashPassword would write.
func FuzzParsePHC(f *testing.F) {
	h, _ := hashPassword(rand.Reader, cheap, "seed password")
	f.Add(h)
	f.Add("$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA")
	f.Add("$argon2id$v=19$m=,t=2$$")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parsePHC(s)
		if err != nil {
			return
		}
		if p.p.Memory > maxArgonMemory || p.p.Time > maxArgonTime || p.p.Threads == 0 || len(p.salt) < 8 {
			t.Fatalf("parsePHC(%q) = %+v beyond its bounds", s, p.p)
		}
	})
}

// TestInviteAcceptSignIn: an invitation is single use and expires; the
// person signs in with the password and the TOTP code, once per code.
func TestInviteAcceptSignIn(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s, reg, _ := newService(t, &now, cheap)
	if _, _, err := s.Invite("snaa:s1 key:k1", "s1", "not an address", registry.RoleEditor); err == nil {
		t.Error("Invite accepted a malformed address")
	}
	if _, _, err := s.Invite("snaa:s1 key:k1", "s9", "a@example.org", registry.RoleEditor); !errors.Is(err, ErrNotFound) {
		t.Errorf("Invite to an unknown SNAA = %v, want ErrNotFound", err)
	}
	tok, in, err := s.Invite("snaa:s1 key:k1", "s1", " Ada@Example.org ", registry.RoleEditor)
	if err != nil || in.Email != "ada@example.org" {
		t.Fatalf("Invite = %+v, %v", in, err)
	}
	if _, err := s.Accept(tok, Acceptance{Password: "short"}); err == nil {
		t.Error("Accept took a short password")
	}
	j, err := s.Accept(tok, Acceptance{Password: "a long enough secret", TOTP: true})
	if err != nil || j.TOTPSecret == "" || j.Person.Role != registry.RoleEditor || !j.Person.TOTP {
		t.Fatalf("Accept = %+v, %v", j, err)
	}
	if _, err := s.Accept(tok, Acceptance{Password: "a long enough secret"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Accept = %v, want ErrNotFound (single use)", err)
	}
	if _, _, err := s.Invite("op", "s1", "ada@example.org", registry.RoleViewer); !errors.Is(err, ErrConflict) {
		t.Errorf("inviting a person again = %v, want ErrConflict", err)
	}
	code, _ := TOTPCode(j.TOTPSecret, now)
	if _, err := s.SignIn("ada@example.org", "a long enough secret", ""); !errors.Is(err, ErrDenied) {
		t.Errorf("SignIn without the code = %v, want ErrDenied", err)
	}
	p, err := s.SignIn("ADA@example.org", "a long enough secret", code)
	if err != nil || p.ID != j.Person.ID {
		t.Fatalf("SignIn = %+v, %v", p, err)
	}
	if _, err := s.SignIn("ada@example.org", "a long enough secret", code); !errors.Is(err, ErrDenied) {
		t.Errorf("SignIn replaying a code = %v, want ErrDenied", err)
	}
	// The hash and the secret stay in the record; no view has them.
	err = reg.View(func(tx registry.Tx) error {
		got, ok, err := tx.People().Person(j.Person.ID)
		if err != nil || !ok || !strings.HasPrefix(got.PasswordHash, "$argon2id$") || got.TOTPSecret != j.TOTPSecret {
			t.Errorf("stored person = %+v, %v, %v", got, ok, err)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// An invitation expires.
	tok2, _, err := s.Invite("op", "s1", "bob@example.org", registry.RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(DefaultInviteTTL)
	if _, err := s.Accept(tok2, Acceptance{Password: "a long enough secret"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Accept of an expired invitation = %v, want ErrNotFound", err)
	}
}

// TestLockout: repeated failures lock an address, known or not, for
// LockFor; the right password is refused meanwhile; the counters show it.
func TestLockout(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s, _, _ := newService(t, &now, cheap)
	tok, _, err := s.Invite("op", "s1", "ada@example.org", registry.RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Accept(tok, Acceptance{Password: "the right password"}); err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{"ada@example.org", "nobody@example.org"} {
		for i := range 3 {
			if _, err := s.SignIn(addr, "wrong password", ""); !errors.Is(err, ErrDenied) {
				t.Fatalf("%s: failure %d = %v, want ErrDenied", addr, i, err)
			}
		}
		_, err := s.SignIn(addr, "the right password", "")
		var e *Error
		if !errors.As(err, &e) || e.Kind != ErrLocked || e.RetryAfter != time.Minute {
			t.Fatalf("%s: SignIn when locked = %v, want ErrLocked for a minute", addr, err)
		}
	}
	now = now.Add(time.Minute)
	if _, err := s.SignIn("ada@example.org", "the right password", ""); err != nil {
		t.Errorf("SignIn after the lock = %v", err)
	}
	m := string(s.AppendMetrics(nil))
	for _, want := range []string{`pidnode_people_lockouts_total 2`, `pidnode_people_signins_total{result="locked"} 2`, `pidnode_people_signins_total{result="denied"} 6`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
}

// TestNoAccountOracle: an unknown address is checked against a hash of the
// same costs as a person's (so it takes the same work: compare with
// BenchmarkSignIn), and refused with the same error as a wrong password.
func TestNoAccountOracle(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s, reg, _ := newService(t, &now, Argon2Params{})
	tok, _, err := s.Invite("op", "s1", "ada@example.org", registry.RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	j, err := s.Accept(tok, Acceptance{Password: "the right password"})
	if err != nil {
		t.Fatal(err)
	}
	var stored string
	reg.View(func(tx registry.Tx) error {
		p, _, err := tx.People().Person(j.Person.ID)
		stored = p.PasswordHash
		return err
	})
	real, err1 := parsePHC(stored)
	dummy, err2 := parsePHC(s.dummy)
	if err1 != nil || err2 != nil || real.p != dummy.p || real.p != DefaultArgon2 || len(real.hash) != len(dummy.hash) {
		t.Fatalf("dummy hash costs %+v, a person's %+v (%v, %v)", dummy.p, real.p, err1, err2)
	}
	_, e1 := s.SignIn("ada@example.org", "wrong password", "")
	_, e2 := s.SignIn("nobody@example.org", "wrong password", "")
	if e1 == nil || e2 == nil || e1.Error() != e2.Error() {
		t.Errorf("refusals differ: %v / %v", e1, e2)
	}
}

// BenchmarkSignIn: a wrong password for a known address and for an
// unknown one, with the default costs; the two should take the same time.
func BenchmarkSignIn(b *testing.B) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s, _, _ := newService(b, &now, Argon2Params{})
	tok, _, _ := s.Invite("op", "s1", "ada@example.org", registry.RoleViewer)
	s.Accept(tok, Acceptance{Password: "the right password"})
	s.lock.after = 1 << 30
	for _, addr := range []string{"ada@example.org", "nobody@example.org"} {
		b.Run(strings.Split(addr, "@")[0], func(b *testing.B) {
			for b.Loop() {
				s.SignIn(addr, "wrong password", "")
			}
		})
	}
}

// TestRemoveEndsSessions: removing a person deletes its sessions in the
// same transaction, and a session whose person is gone is refused.
func TestRemoveEndsSessions(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s, reg, keys := newService(t, &now, cheap)
	tok, _, err := s.Invite("op", "s1", "ada@example.org", registry.RoleEditor)
	if err != nil {
		t.Fatal(err)
	}
	j, err := s.Accept(tok, Acceptance{Password: "the right password"})
	if err != nil {
		t.Fatal(err)
	}
	ss, err := access.NewSessions(access.SessionsConfig{Registry: reg, Keys: keys, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	st, err := ss.Start(registry.Session{SNAAID: "s1", PersonID: j.Person.ID})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ss.Lookup(st)
	if err != nil || got.Person == nil || got.Person.Role != registry.RoleEditor || got.SNAA.ID != "s1" || got.Key.ID != j.Person.ID {
		t.Fatalf("Lookup = %+v, %v", got, err)
	}
	if err := s.SetRole("op", "s2", j.Person.ID, registry.RoleViewer); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetRole through another SNAA = %v, want ErrNotFound", err)
	}
	if err := s.SetRole("op", "s1", j.Person.ID, registry.RoleViewer); err != nil {
		t.Fatal(err)
	}
	if got, err := ss.Lookup(st); err != nil || got.Person.Role != registry.RoleViewer {
		t.Fatalf("Lookup after SetRole = %+v, %v", got, err)
	}
	if err := s.Remove("op", "s1", j.Person.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ss.Lookup(st); !errors.Is(err, access.ErrSessionUnknown) {
		t.Errorf("Lookup after Remove = %v, want ErrSessionUnknown (deleted with the person)", err)
	}
	// A session left behind (another node's, not yet deleted) is refused
	// by its person's absence.
	st2, err := ss.Start(registry.Session{SNAAID: "s1", PersonID: j.Person.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.Lookup(st2); !errors.Is(err, access.ErrSessionPersonRemoved) {
		t.Errorf("Lookup of a removed person's session = %v, want ErrSessionPersonRemoved", err)
	}
}

func TestNeedRole(t *testing.T) {
	for _, c := range []struct {
		method, path string
		operator     bool
		role         string
		ok           bool
	}{
		{"GET", "/pid/v2/handles/21.T/NS/X", false, registry.RoleViewer, true},
		{"PUT", "/pid/v2/handles/21.T/NS/", false, registry.RoleViewer, false},
		{"PUT", "/pid/v2/handles/21.T/NS/", false, registry.RoleEditor, true},
		{"POST", "/pid/v2/keys", false, registry.RoleEditor, false},
		{"POST", "/console/people", false, registry.RoleEditor, false},
		{"POST", "/console/people", false, registry.RoleAdmin, true},
		{"POST", "/pid/v2/handles/21.T/NS/webhooks", false, registry.RoleEditor, false},
		{"POST", "/console/ops/approve", true, registry.RoleEditor, false},
		{"POST", "/ops/v1/applications/a/approve", true, registry.RoleAdmin, true},
		{"GET", "/ops/v1/backup", true, registry.RoleAdmin, false},
		{"DELETE", "/testpid/v2/keys/k1", false, registry.RoleEditor, false},
		{"POST", "/console/keys/revoke", false, registry.RoleEditor, false},
		{"POST", "/console/people/change", false, registry.RoleEditor, false},
		{"DELETE", "/pid/v2/handles/21.T/NS/webhooks/w1", false, registry.RoleEditor, false},
		// Identifiers and namespaces whose names only begin like those
		// routes are an editor's to write and a viewer's to read.
		{"PUT", "/pid/v2/handles/21.T/NS/keystone-7", false, registry.RoleEditor, true},
		{"PUT", "/pid/v2/handles/21.T/NS/people-archive", false, registry.RoleEditor, true},
		{"PUT", "/pid/v2/handles/21.T/keys/X", false, registry.RoleEditor, true},
		{"PUT", "/pid/v2/handles/21.T/NS/webhooks2", false, registry.RoleEditor, true},
		{"GET", "/pid/v2/handles/21.T/NS/backup", false, registry.RoleViewer, true},
	} {
		if got := Allows(c.role, NeedRole(c.method, c.path, c.operator)); got != c.ok {
			t.Errorf("Allows(%s, NeedRole(%s %s, %v)) = %v, want %v", c.role, c.method, c.path, c.operator, got, c.ok)
		}
	}
}

// TestWithdraw: open invitations are listed per SNAA and withdrawn only
// through their own SNAA.
func TestWithdraw(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s, _, _ := newService(t, &now, cheap)
	tok, _, err := s.Invite("op", "s1", "ada@example.org", registry.RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	open, err := s.Invitations("s1")
	if err != nil || len(open) != 1 || open[0].Email != "ada@example.org" || open[0].ID != access.TokenHash(tok) {
		t.Fatalf("Invitations = %+v, %v", open, err)
	}
	if others, _ := s.Invitations(""); len(others) != 0 {
		t.Errorf("the operator's invitations hold the SNAA's: %+v", others)
	}
	if err := s.Withdraw("op", "", open[0].ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Withdraw through another owner = %v, want ErrNotFound", err)
	}
	if err := s.Withdraw("op", "s1", open[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Accept(tok, Acceptance{Password: "a long enough secret"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Accept of a withdrawn invitation = %v, want ErrNotFound", err)
	}
}
