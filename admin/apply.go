package admin

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"pidnode/access"
	"pidnode/model"
	"pidnode/operator"
)

// The public application form and route (docs/product.md §4.2): an
// organisation applies without a key. Both the form (POST /apply) and the
// JSON route (POST /apply/v1/applications) end in submitApplicationAs, the
// path of the operator's route, with the abuse limits of the policy.

// Policy is the application policy (--policy-file), package operator's.
type Policy = operator.Policy

// DefaultPolicy returns the built-in policy, used when Config.Policy is nil.
func DefaultPolicy() *Policy { return operator.DefaultPolicy() }

// CheckPolicy checks a policy and fills in its defaults (operator.CheckPolicy).
func CheckPolicy(p *Policy) error { return operator.CheckPolicy(p) }

// applyMaxBody bounds the body of an application (form or JSON).
const applyMaxBody = 64 << 10

// clientAddr is the address a request came from (the proxy's, behind one).
func clientAddr(r *http.Request) string {
	h, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return h
}

// limitAddr charges one request of the client's address to l.
func (s *Server) limitAddr(l *access.AddrLimit, r *http.Request, what string) error {
	return l.Take(clientAddr(r), what)
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

// ApplicationReceipt and ApplicationStatus are the public route's replies.
type (
	ApplicationReceipt = operator.ApplicationReceipt
	ApplicationStatus  = operator.ApplicationStatus
)

// submitPublic is the one path of a public application (form and JSON):
// the per-address limit, the policy version, then submitApplicationAs with
// a fresh status token and the policy's limit per contact e-mail.
func (s *Server) submitPublic(r *http.Request, req ApplicationRequest) (*ApplicationReceipt, error) {
	if err := s.limitAddr(s.applyRL, r, "applications"); err != nil {
		return nil, err
	}
	return s.ops.SubmitPublic(clientAddr(r), req)
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
// status token (operator.Service.Status).
func (s *Server) applicationStatus(id, tok string) (*ApplicationStatus, error) {
	return s.ops.Status(id, tok)
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

func (s *Server) servedPrefixes() []string { return s.ops.Prefixes() }

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
