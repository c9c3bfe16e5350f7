package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"hash/maphash"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"pidnode/access"
	"pidnode/internal/tokenbucket"
	"pidnode/model"
	"pidnode/registry"
)

// The public application form and route (docs/product.md §4.2): an
// organisation applies without a key. Both the form (POST /apply) and the
// JSON route (POST /apply/v1/applications) end in submitApplicationAs, the
// path of the operator's route, with the abuse limits of the policy.

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

// applyMaxBody bounds the body of an application (form or JSON).
const applyMaxBody = 64 << 10

// DefaultPolicy returns the built-in policy, used when Config.Policy is nil.
func DefaultPolicy() *Policy {
	b, err := consoleFS.ReadFile("assets/policy.txt")
	if err != nil {
		panic(err)
	}
	return &Policy{Version: "1", Title: "Policy for Sub-Name Assigning Authorities", Text: string(b),
		Contact: "the operator of this node", MaxOpenPerEmail: 3, PerHour: 10}
}

// CheckPolicy checks a policy (cmd/pidnode reads it from --policy-file) and
// fills in the defaults of its limits and contact: version, title and text
// are required.
func CheckPolicy(p *Policy) error {
	switch {
	case strings.TrimSpace(p.Version) == "", strings.TrimSpace(p.Title) == "", strings.TrimSpace(p.Text) == "":
		return fmt.Errorf("%w: policy: version, title and text are required", ErrConfig)
	case len(p.Version) > 50 || model.HasControl(p.Version):
		return fmt.Errorf("%w: policy: version must be at most 50 printable characters", ErrConfig)
	case p.MaxOpenPerEmail < 0 || p.PerHour < 0 || math.IsNaN(p.PerHour) || math.IsInf(p.PerHour, 0):
		return fmt.Errorf("%w: policy: limits must not be negative", ErrConfig)
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

// applyLimiter is the per-address limit of the public routes (applications,
// sign-in attempts).
type applyLimiter struct{ t *tokenbucket.Table[string] }

func newApplyLimiter(perHour float64) *applyLimiter {
	return &applyLimiter{t: tokenbucket.New(tokenbucket.Config{Rate: perHour / 3600, Burst: math.Max(perHour, 1), Size: rateTableSize},
		func(k string) uint64 { return maphash.String(rateSeed, k) })}
}

// clientAddr is the address a request came from (the proxy's, behind one).
func clientAddr(r *http.Request) string {
	h, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return h
}

// limitAddr charges one request of the client's address to l.
func (s *Server) limitAddr(l *applyLimiter, r *http.Request, what string) error {
	res := l.t.Take(clientAddr(r), s.now().UnixNano())
	if res.OK {
		return nil
	}
	secs := int(math.Ceil(res.Wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	s.metrics.rateLimited.Add(1)
	return problem(http.StatusTooManyRequests, "too many %s from your address; retry in %d s", what, secs).with("Retry-After", strconv.Itoa(secs))
}

// applyRoutes registers the public application routes and the index page.
func (s *Server) applyRoutes() {
	// "/" itself is a page for a person who opens the admin address in a
	// browser; every other unknown path stays a problem+json 404.
	s.mux.HandleFunc("GET /{$}", s.indexPage)
	s.mux.HandleFunc("GET /apply", s.applyForm)
	s.mux.HandleFunc("POST /apply", s.applyPost)
	s.mux.HandleFunc("GET /apply/status", s.applyStatusForm)
	s.mux.HandleFunc("POST /apply/status", s.applyStatusPost)
	s.handle("POST", "/apply/v1/applications", s.applyJSON,
		op{summary: "Apply to become an SNAA, without a key (the public form's route): 201 with the application id and a status token, shown only this once. Limited per client address, per contact e-mail (open applications) and to 64 KiB; policy_version must be the node's current policy version (GET /apply shows the policy)", auth: "", request: "ApplicationRequest", ok: 201, okSchema: "ApplicationReceipt", okHeads: []string{"Location"}, errs: []int{409, 429}, tag: "apply"})
	s.methodFallback("/apply/v1/applications", "POST")
	s.handle("GET", "/apply/v1/applications/{id}", s.applyStatusJSON,
		op{summary: "An application's state (SUBMITTED, APPROVED, REJECTED with the reason), with its status token as the bearer token; any mismatch is 404", auth: "statusToken", ok: 200, okSchema: "ApplicationStatus", errs: []int{401}, tag: "apply"})
	s.methodFallback("/apply/v1/applications/{id}", "GET")
}

// indexPage is the admin listener's "/": links to the console, the
// application form, the API description and the metrics.
func (s *Server) indexPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, "index", &pageData{Title: "Admin", D: s.public})
}

// ApplicationReceipt is the reply to a public application: its id and the
// status token, shown this once.
type ApplicationReceipt struct {
	ID          string `json:"id"`
	State       string `json:"state"`
	StatusToken string `json:"status_token"`
	StatusURL   string `json:"status_url"`
}

// ApplicationStatus is what an applicant sees of its application.
type ApplicationStatus struct {
	ID        string `json:"id"`
	State     string `json:"state"`
	Submitted string `json:"submitted"`
	Decided   string `json:"decided,omitempty"`
	// Reason is the operator's note of a rejection.
	Reason string `json:"reason,omitempty"`
	// Contact is who to contact for the key, once approved.
	Contact string `json:"contact,omitempty"`
}

// submitPublic is the one path of a public application (form and JSON):
// the per-address limit, the policy version, then submitApplicationAs with
// a fresh status token and the policy's limit per contact e-mail.
func (s *Server) submitPublic(r *http.Request, req ApplicationRequest) (*ApplicationReceipt, error) {
	if err := s.limitAddr(s.applyRL, r, "applications"); err != nil {
		return nil, err
	}
	tok, err := access.NewSecret(s.rnd)
	if err != nil {
		return nil, err
	}
	tok = "ast_" + strings.TrimPrefix(tok, KeyPrefix)
	sum := sha256.Sum256([]byte(tok))
	app, err := s.submitApplicationAs("applicant:"+clientAddr(r), req, hex.EncodeToString(sum[:]), s.policy.Version, s.policy.MaxOpenPerEmail)
	if err != nil {
		return nil, err
	}
	s.log.Info("application submitted", "application", app.ID, "from", clientAddr(r))
	return &ApplicationReceipt{ID: app.ID, State: app.State, StatusToken: tok, StatusURL: "/apply/v1/applications/" + app.ID}, nil
}

func (s *Server) applyJSON(w http.ResponseWriter, r *http.Request) error {
	req, err := readJSON[ApplicationRequest](w, r, applyMaxBody)
	if err != nil {
		return err
	}
	rc, err := s.submitPublic(r, req)
	if err != nil {
		return err
	}
	w.Header().Set("Location", rc.StatusURL)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, rc)
	return nil
}

// applicationStatus returns the state of application id if tok is its
// status token; any mismatch is the same 404, so that ids cannot be probed.
func (s *Server) applicationStatus(id, tok string) (*ApplicationStatus, error) {
	notFound := problem(http.StatusNotFound, "no application with this id and status token")
	var a Application
	var ok bool
	err := s.reg.View(func(tx registry.Tx) (err error) {
		a, ok, err = tx.Application(id)
		return err
	})
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(tok))
	want, _ := hex.DecodeString(a.StatusHash)
	if !ok || len(want) != len(sum) || subtle.ConstantTimeCompare(want, sum[:]) != 1 {
		return nil, notFound
	}
	st := &ApplicationStatus{ID: a.ID, State: a.State, Submitted: a.Submitted.UTC().Format(timeFormat)}
	if a.Decided != nil {
		st.Decided = a.Decided.UTC().Format(timeFormat)
	}
	switch a.State {
	case StateRejected:
		st.Reason = a.Note
	case StateApproved:
		st.Contact = s.policy.Contact
	}
	return st, nil
}

func (s *Server) applyStatusJSON(w http.ResponseWriter, r *http.Request) error {
	tok, p := bearer(r)
	if p != nil {
		return p
	}
	st, err := s.applicationStatus(r.PathValue("id"), tok)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, st)
	return nil
}

// applyPage is the data of the application form.
type applyPage struct {
	Policy   *Policy
	Prefixes []string // the prefixes the node serves
	Form     url.Values
	Receipt  *ApplicationReceipt
}

func (s *Server) servedPrefixes() []string {
	var out []string
	for _, b := range s.bases {
		if b.prefix != "" {
			out = append(out, b.prefix)
		}
	}
	return out
}

func (s *Server) applyForm(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, "apply", &pageData{Title: "Apply to become a Sub-Name Assigning Authority",
		D: &applyPage{Policy: s.policy, Prefixes: s.servedPrefixes(), Form: url.Values{}}})
}

// readForm parses an urlencoded (or multipart) form of at most max bytes.
func readForm(w http.ResponseWriter, r *http.Request, max int64) error {
	r.Body = http.MaxBytesReader(w, r.Body, max)
	ct := r.Header.Get("Content-Type")
	var err error
	if strings.HasPrefix(ct, "multipart/form-data") {
		err = r.ParseMultipartForm(max)
	} else {
		err = r.ParseForm()
	}
	if err != nil {
		if strings.Contains(err.Error(), "too large") {
			return problem(http.StatusRequestEntityTooLarge, "the form is larger than %d bytes", max)
		}
		return problem(http.StatusBadRequest, "the form could not be read: %v", err)
	}
	return nil
}

// honeypot is the name of the form field people do not see and bots fill in.
const honeypot = "website"

func (s *Server) applyPost(w http.ResponseWriter, r *http.Request) {
	d := &pageData{Title: "Apply to become a Sub-Name Assigning Authority"}
	if err := readForm(w, r, applyMaxBody); err != nil {
		s.renderProblem(w, r, d, err)
		return
	}
	f := r.PostForm
	pg := &applyPage{Policy: s.policy, Prefixes: s.servedPrefixes(), Form: f}
	d.D = pg
	var err error
	if f.Get(honeypot) != "" {
		err = &model.ValidationError{Errors: []FieldError{{Field: honeypot, Message: "must be left empty"}}}
	} else {
		req := ApplicationRequest{
			Organisation:          f.Get("organisation"),
			TechnicalContact:      Contact{Name: f.Get("technical_contact.name"), Email: strings.TrimSpace(f.Get("technical_contact.email"))},
			AdministrativeContact: Contact{Name: f.Get("administrative_contact.name"), Email: strings.TrimSpace(f.Get("administrative_contact.email"))},
			PolicyVersion:         f.Get("policy_version"),
			MaintenanceStatement:  f.Get("maintenance_statement"),
			Prefixes:              f["prefixes"],
			CustomIDs:             f.Get("custom_ids") == "true",
		}
		var rc *ApplicationReceipt
		if rc, err = s.submitPublic(r, req); err == nil {
			pg.Receipt = rc
			d.Title = "Application received"
			s.render(w, http.StatusCreated, "apply_done", d)
			return
		}
	}
	p, _ := problemOf(err)
	if p.Status >= 500 {
		s.renderProblem(w, r, d, err)
		return
	}
	for k, v := range p.header {
		w.Header().Set(k, v)
	}
	d.Problem = p
	s.render(w, p.Status, "apply", d)
}

func (s *Server) applyStatusForm(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, "apply_status", &pageData{Title: "Application status", D: &struct {
		ID     string
		Status *ApplicationStatus
	}{}})
}

func (s *Server) applyStatusPost(w http.ResponseWriter, r *http.Request) {
	d := &pageData{Title: "Application status"}
	if err := readForm(w, r, 4096); err != nil {
		s.renderProblem(w, r, d, err)
		return
	}
	id := strings.TrimSpace(r.PostForm.Get("id"))
	v := &struct {
		ID     string
		Status *ApplicationStatus
	}{ID: id}
	d.D = v
	if err := s.limitAddr(s.signinRL, r, "attempts"); err != nil {
		s.renderProblem(w, r, d, err)
		return
	}
	st, err := s.applicationStatus(id, strings.TrimSpace(r.PostForm.Get("token")))
	if err != nil {
		p, _ := problemOf(err)
		d.Problem = p
		s.render(w, p.Status, "apply_status", d)
		return
	}
	v.Status = st
	s.render(w, http.StatusOK, "apply_status", d)
}
