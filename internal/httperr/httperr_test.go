package httperr

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"pidnode/access"
	"pidnode/internal/refusal"
	"pidnode/model"
	"pidnode/operator"
	"pidnode/read"
	"pidnode/write"
)

type full struct{}

func (full) Error() string     { return "etcd: mvcc: database space exceeded" }
func (full) StorageFull() bool { return true }

type down struct{}

func (down) Error() string             { return "etcd: no leader" }
func (down) RetryAfter() time.Duration { return 1500 * time.Millisecond }

func TestOf(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		status int
		header string // Retry-After or WWW-Authenticate, if any
		ok     bool
	}{
		{"write exists", &refusal.Error{Kind: write.ErrExists, Detail: "taken"}, 409, "", true},
		{"read not found", fmt.Errorf("wrapped: %w", &refusal.Error{Kind: read.ErrNotFound, Detail: "no"}), 404, "", true},
		{"operator conflict", &refusal.Error{Kind: operator.ErrConflict, Detail: "decided"}, 409, "", true},
		{"rate limited", &refusal.Error{Kind: access.ErrRateLimited, Detail: "slow down", RetryAfter: 2 * time.Second}, 429, "2", true},
		{"maintenance", &refusal.Error{Kind: access.ErrMaintenance, Detail: "later", RetryAfter: time.Minute}, 503, "60", true},
		{"suspended", &refusal.Error{Kind: access.ErrSuspended, Detail: "suspended"}, 403, "", true},
		{"unknown key", access.ErrUnknownKey, 401, `Bearer realm="pidnode", error="invalid_token"`, true},
		{"validation", &model.ValidationError{Errors: []model.FieldError{{Field: "url", Message: "is required"}}}, 422, "", true},
		{"syntax", &model.SyntaxError{Msg: "line 2: bad"}, 400, "", true},
		{"unavailable", down{}, 503, "2", true},
		{"storage full", full{}, 507, "", true},
		{"unexpected", errors.New("disk on fire"), 500, "", false},
	}
	for _, c := range cases {
		p, ok := Of(c.err)
		h := p.Header["Retry-After"] + p.Header["WWW-Authenticate"]
		if p.Status != c.status || ok != c.ok || h != c.header || p.Title != Titles[c.status] && c.status != 409 {
			t.Errorf("%s: Of(%v) = %d %q (header %q), %v; want %d, header %q, %v", c.name, c.err, p.Status, p.Title, h, ok, c.status, c.header, c.ok)
		}
	}
	if p, _ := Of(&refusal.Error{Kind: access.ErrKeyLimit, Detail: "revoke a key"}); p.Type != KeyLimitType || p.Status != 409 {
		t.Errorf("key limit: %+v, want type %s", p, KeyLimitType)
	}
	if p, _ := Of(errors.New("secret path /var/db")); p.Detail != "internal error; the operator's log has details" {
		t.Errorf("an unexpected error's detail leaks: %q", p.Detail)
	}
}
