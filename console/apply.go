package console

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"pidnode/internal/httperr"
	"pidnode/model"
	"pidnode/operator"
	"pidnode/registry"
)

// The public application form (docs/product.md §4.2): an organisation
// applies without a key. The form (POST /apply) ends in
// operator.Service.SubmitPublic, as the API's JSON route does, after the
// same per-address limit (Config.ApplyLimit, shared with that route).

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
func limitAddr(l interface{ Take(addr, what string) error }, r *http.Request, what string) error {
	return l.Take(clientAddr(r), what)
}

// indexPage is the admin listener's "/": links to the console, the
// application form, the API description and the metrics.
func (s *Server) indexPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, "index", &pageData{Title: "Admin", D: s.cfg.PublicURL})
}

// applyPage is the data of the application form.
type applyPage struct {
	Policy   *operator.Policy
	Prefixes []string // the prefixes the node serves
	Form     url.Values
	Receipt  *operator.ApplicationReceipt
}

func (s *Server) applyForm(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, "apply", &pageData{Title: "Apply to become a Sub-Name Assigning Authority",
		D: &applyPage{Policy: s.cfg.Operator.Policy(), Prefixes: s.cfg.Operator.Prefixes(), Form: url.Values{}}})
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
	pg := &applyPage{Policy: s.cfg.Operator.Policy(), Prefixes: s.cfg.Operator.Prefixes(), Form: f}
	d.D = pg
	var err error
	if f.Get(honeypot) != "" {
		err = &model.ValidationError{Errors: []model.FieldError{{Field: honeypot, Message: "must be left empty"}}}
	} else {
		req := operator.ApplicationRequest{
			Organisation:          f.Get("organisation"),
			TechnicalContact:      registry.Contact{Name: f.Get("technical_contact.name"), Email: strings.TrimSpace(f.Get("technical_contact.email"))},
			AdministrativeContact: registry.Contact{Name: f.Get("administrative_contact.name"), Email: strings.TrimSpace(f.Get("administrative_contact.email"))},
			PolicyVersion:         f.Get("policy_version"),
			MaintenanceStatement:  f.Get("maintenance_statement"),
			Prefixes:              f["prefixes"],
			CustomIDs:             f.Get("custom_ids") == "true",
		}
		var rc *operator.ApplicationReceipt
		if err = limitAddr(s.cfg.ApplyLimit, r, "applications"); err == nil {
			if rc, err = s.cfg.Operator.SubmitPublic(clientAddr(r), req); err == nil {
				pg.Receipt = rc
				d.Title = "Application received"
				s.render(w, http.StatusCreated, "apply_done", d)
				return
			}
		}
	}
	p, _ := problemOf(err)
	if p.Status >= 500 {
		s.renderProblem(w, r, d, err)
		return
	}
	for k, v := range p.Header {
		w.Header().Set(k, v)
	}
	d.Problem = p
	s.render(w, p.Status, "apply", d)
}

// statusForm is the data of the application status form.
type statusForm struct {
	ID     string
	Status *operator.ApplicationStatus
}

func (s *Server) applyStatusForm(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, "apply_status", &pageData{Title: "Application status", D: &statusForm{}})
}

func (s *Server) applyStatusPost(w http.ResponseWriter, r *http.Request) {
	d := &pageData{Title: "Application status"}
	if err := readForm(w, r, 4096); err != nil {
		s.renderProblem(w, r, d, err)
		return
	}
	id := strings.TrimSpace(r.PostForm.Get("id"))
	v := &statusForm{ID: id}
	d.D = v
	if err := limitAddr(s.cfg.SignInLimit, r, "attempts"); err != nil {
		s.renderProblem(w, r, d, err)
		return
	}
	st, err := s.cfg.Operator.Status(id, strings.TrimSpace(r.PostForm.Get("token")))
	if err != nil {
		var p *httperr.Problem
		p, _ = problemOf(err)
		d.Problem = p
		s.render(w, p.Status, "apply_status", d)
		return
	}
	v.Status = st
	s.render(w, http.StatusOK, "apply_status", d)
}
