package operator

import (
	_ "embed"
	"math"
	"strings"

	"pidnode/model"
)

// Policy is the policy file (--policy-file, TOML): the text an applying
// organisation agrees to, its version, who an approved applicant contacts,
// and the limits of the public application route.
type Policy struct {
	Version string `toml:"version"`
	Title   string `toml:"title"`
	Text    string `toml:"text"`
	// Contact is who an approved applicant contacts for its key.
	Contact string `toml:"contact"`
	// MaxOpenPerEmail bounds the applications waiting for a decision that
	// name one contact e-mail address (0: DefaultPolicy's).
	MaxOpenPerEmail int `toml:"max_open_per_email"`
	// PerHour is how many applications one client address may send per
	// hour (0: DefaultPolicy's).
	PerHour float64 `toml:"applications_per_hour"`
}

//go:embed policy.txt
var policyText string

// DefaultPolicy returns the built-in policy, used when no policy is given.
func DefaultPolicy() *Policy {
	return &Policy{Version: "1", Title: "Policy for Sub-Name Assigning Authorities", Text: policyText,
		Contact: "the operator of this node", MaxOpenPerEmail: 3, PerHour: 10}
}

// PolicyError is a policy CheckPolicy refuses: Reason says why.
type PolicyError struct{ Reason string }

func (e *PolicyError) Error() string { return "policy: " + e.Reason }

// CheckPolicy checks a policy (cmd/pidnode reads it from --policy-file) and
// fills in the defaults of its limits and contact: version, title and text
// are required. A refusal is a *PolicyError.
func CheckPolicy(p *Policy) error {
	switch {
	case strings.TrimSpace(p.Version) == "", strings.TrimSpace(p.Title) == "", strings.TrimSpace(p.Text) == "":
		return &PolicyError{"version, title and text are required"}
	case len(p.Version) > 50 || model.HasControl(p.Version):
		return &PolicyError{"version must be at most 50 printable characters"}
	case p.MaxOpenPerEmail < 0 || p.PerHour < 0 || math.IsNaN(p.PerHour) || math.IsInf(p.PerHour, 0):
		return &PolicyError{"limits must not be negative"}
	}
	if p.MaxOpenPerEmail == 0 {
		p.MaxOpenPerEmail = 3
	}
	if p.PerHour == 0 {
		p.PerHour = 10
	}
	if p.Contact == "" {
		p.Contact = "the operator of this node"
	}
	return nil
}
