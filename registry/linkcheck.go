package registry

import (
	"time"

	"pidnode/handlev"
)

// Link check results (docs/product.md §4.4): the types that the audit log,
// the change feed and the console share with package linkcheck, which owns
// their storage in store.BucketLinkcheck (its store.go has the key layout).

// Link check states.
const (
	LinkOK         = "ok"
	LinkFailing    = "failing"
	LinkBroken     = "broken"
	LinkRecovering = "recovering"
)

// Audit actions and actor of the link checker's state changes, which the
// namespace's change feed shows (docs/product.md §4.3).
const (
	ActLinkBroken    = "linkcheck.broken"
	ActLinkRecovered = "linkcheck.recovered"
	ActorLinkcheck   = "linkcheck"
)

// LinkResult is the last check of one URL of an identifier.
type LinkResult struct {
	Handle string `json:"handle"`
	URL    string `json:"url"`
	// Kind is "target" (the landing page) or "variant" (a representation
	// variant's URL).
	Kind  string `json:"kind"`
	State string `json:"state"`
	// Status is the final HTTP status (after redirects), 0 if none came.
	Status   int    `json:"status,omitempty"`
	FinalURL string `json:"final_url,omitempty"`
	// Error is the failure's class: dns, connect, tls, timeout, denied,
	// redirects, scheme, http (a status other than 2xx) or other.
	Error      string    `json:"error,omitempty"`
	Checked    time.Time `json:"checked"`
	DurationMS int64     `json:"duration_ms"`
	// Since is when the URL entered State.
	Since        time.Time  `json:"since"`
	FirstFailure *time.Time `json:"first_failure,omitempty"`
	Failures     int        `json:"failures"`
	// Due, if set, is when the URL is checked again ahead of the sweep.
	Due *time.Time `json:"due,omitempty"`
}

// LinkCheck is what an audit entry of a link check's state change (and so
// the change feed) shows of the check, before and after: the result
// without its handle, URL and bookkeeping.
type LinkCheck struct {
	State        string     `json:"state"`
	Kind         string     `json:"kind,omitempty"`
	Status       int        `json:"status,omitempty"`
	Error        string     `json:"error,omitempty"`
	FinalURL     string     `json:"final_url,omitempty"`
	Checked      time.Time  `json:"checked"`
	Failures     int        `json:"failures"`
	FirstFailure *time.Time `json:"first_failure,omitempty"`
}

// Check is the result as an audit entry shows it.
func (r *LinkResult) Check() LinkCheck {
	return LinkCheck{State: r.State, Kind: r.Kind, Status: r.Status, Error: r.Error, FinalURL: r.FinalURL,
		Checked: r.Checked, Failures: r.Failures, FirstFailure: r.FirstFailure}
}

// Listed reports whether the result is in its namespace's listing.
func (r *LinkResult) Listed() bool { return r.State != LinkOK && r.State != "" }

// NamespaceOf returns the namespace key prefix of the storage key
// ("21.12345/SVC/NS/"), "" if the key is not of a namespace (not full form
// under the production or test prefix).
func (r *Registry) NamespaceOf(key string) string {
	return string(r.namer.NamespaceOf([]byte(key)))
}

// Namer returns the namer the registry's keys are made by.
func (r *Registry) Namer() *handlev.Namer { return r.namer }
