package console

import (
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"

	"pidnode/access"
	"pidnode/internal/httperr"
	"pidnode/model"
	"pidnode/people"
	"pidnode/registry"
)

// The people of an SNAA and of the operator (docs/product.md §4.6): the
// people page and its invitations, joining through an invitation link,
// signing in with an e-mail address and password (and TOTP code) or
// through the OpenID Connect provider, and each person's role on every
// page. Keys keep the whole of their SNAA's (or the operator's) rights.

// roleAllows refuses a person a request its role does not allow (403).
func roleAllows(u *consoleUser, r *http.Request) error {
	if u.Person == nil {
		return nil
	}
	if need := people.NeedRole(r.Method, r.URL.Path, u.Operator); !people.Allows(u.Person.Role, need) {
		return problem(http.StatusForbidden, "your role is %s; this needs %s", u.Person.Role, need)
	}
	return nil
}

// CSRFHeader carries a console session's CSRF token on an API request.
const CSRFHeader = "X-CSRF-Token"

// APISession returns the console session of an API request that has no
// Authorization header (nil, nil without a session cookie), so that a
// person's browser (and the console's scripts) use the API without a key:
// refused if it ended (401), if a write lacks the session's CSRF token in
// CSRFHeader (403), if it is not of the kind the route serves (operator or
// SNAA, 403), or if the person's role does not allow the request (403).
func (l sessionLookup) APISession(r *http.Request, operator bool) (*access.Session, error) {
	tok := SessionToken(r)
	if r.Header.Get("Authorization") != "" || tok == "" {
		return nil, nil
	}
	sess, err := l.lookup(r, tok)
	if err != nil {
		var si *errSignIn
		if errors.As(sessionError(err), &si) {
			return nil, problem(http.StatusUnauthorized, "the console session has ended; sign in again")
		}
		return nil, err
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead &&
		subtle.ConstantTimeCompare([]byte(r.Header.Get(CSRFHeader)), []byte(sess.CSRF())) != 1 {
		return nil, problem(http.StatusForbidden, "a console session's write must carry its CSRF token in %s", CSRFHeader)
	}
	if sess.Operator != operator {
		return nil, problem(http.StatusForbidden, "this route is not for the session's principal (the operator's routes need the operator, the others an SNAA)")
	}
	if sess.Person != nil {
		if need := people.NeedRole(r.Method, r.URL.Path, operator); !people.Allows(sess.Person.Role, need) {
			return nil, problem(http.StatusForbidden, "your role is %s; this needs %s", sess.Person.Role, need)
		}
	}
	return sess, nil
}

func personName(u *consoleUser) string {
	if u.Operator {
		return u.Person.Email + " (operator, " + u.Person.Role + ")"
	}
	return u.Person.Email + " (" + u.SNAA.Namespace + ", " + u.Person.Role + ")"
}

// signInChoice is what the sign-in page offers besides keys.
type signInChoice struct {
	People bool // people sign in with a password
	OIDC   bool // people sign in through the OpenID Connect provider
}

func signInOptions(cfg *Config) *signInChoice {
	return &signInChoice{People: cfg.People != nil && cfg.OIDC == nil, OIDC: cfg.People != nil && cfg.OIDC != nil}
}

// peoplePages serves the pages of people and their sign-in.
type peoplePages struct{ *Server }

func (s peoplePages) routes(mux *http.ServeMux) {
	if s.cfg.People == nil {
		return
	}
	mux.HandleFunc("GET /console/people", s.console(false, s.pagePeople))
	mux.HandleFunc("POST /console/people", s.console(false, s.pagePeople))
	mux.HandleFunc("POST /console/people/change", s.console(false, s.pagePeopleChange))
	mux.HandleFunc("GET /console/ops/people", s.console(true, s.pagePeople))
	mux.HandleFunc("POST /console/ops/people", s.console(true, s.pagePeople))
	mux.HandleFunc("POST /console/ops/people/change", s.console(true, s.pagePeopleChange))
	mux.HandleFunc("GET /console/join", s.joinPage)
	mux.HandleFunc("POST /console/join", s.joinPost)
	mux.HandleFunc("POST /console/sign-in/person", s.personSignIn)
	if s.cfg.OIDC != nil {
		mux.HandleFunc("POST /console/oidc/start", s.oidcStart)
		mux.HandleFunc("GET /console/oidc/callback", s.oidcCallback)
	}
}

// peoplePage is the people page's data.
type peoplePage struct {
	Action string // the form's path
	People []registry.PersonView
	// Open are the invitations not yet accepted.
	Open  []people.OpenInvitation
	Me    string // the signed-in person's id
	Roles []string
	// Invited is the invitation just made: its address and link, shown
	// to the inviter once.
	Invited        *invited
	Email, Role    string
	ManagesPeople  bool
	OperatorPeople bool
}

type invited struct{ Email, Link string }

// pagePeople lists the people of the signed-in SNAA (or of the operator)
// and, posted, invites one.
func (s peoplePages) pagePeople(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	snaaID, action := u.SNAA.ID, "/console/people"
	if u.Operator {
		snaaID, action = "", "/console/ops/people"
	}
	pg := &peoplePage{Action: action, Roles: []string{registry.RoleViewer, registry.RoleEditor, registry.RoleAdmin},
		Role: registry.RoleEditor, OperatorPeople: u.Operator,
		ManagesPeople: u.Person == nil || u.Person.Role == registry.RoleAdmin}
	if u.Person != nil {
		pg.Me = u.Person.ID
	}
	status := http.StatusOK
	if r.Method == http.MethodPost {
		pg.Email, pg.Role = r.PostForm.Get("email"), r.PostForm.Get("role")
		tok, in, err := s.cfg.People.Invite(u.actor(), snaaID, pg.Email, pg.Role)
		if err != nil {
			p, ok := problemOf(err)
			if !ok {
				return err
			}
			d.Problem, status = p, p.Status
		} else {
			pg.Invited, pg.Email = &invited{Email: in.Email, Link: joinLink(r, tok)}, ""
		}
	}
	var err error
	if pg.People, err = s.cfg.People.List(snaaID); err != nil {
		return err
	}
	if pg.Open, err = s.cfg.People.Invitations(snaaID); err != nil {
		return err
	}
	switch r.URL.Query().Get("done") {
	case "removed":
		d.Flash = "The person was removed; their sessions have ended."
	case "role":
		d.Flash = "The role was changed."
	case "withdrawn":
		d.Flash = "The invitation was withdrawn; its link no longer works."
	}
	d.Title, d.D = "People", pg
	s.render(w, status, "people", d)
	return nil
}

// joinLink is the invitation link of tok on this admin listener.
func joinLink(r *http.Request, tok string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/console/join?token=" + url.QueryEscape(tok)
}

// pagePeopleChange removes a person, changes its role, or withdraws an
// invitation.
func (s peoplePages) pagePeopleChange(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error {
	snaaID, back := u.SNAA.ID, "/console/people"
	if u.Operator {
		snaaID, back = "", "/console/ops/people"
	}
	id := r.PostForm.Get("id")
	if inv := r.PostForm.Get("invitation"); inv != "" {
		if err := s.cfg.People.Withdraw(u.actor(), snaaID, inv); err != nil {
			return err
		}
		http.Redirect(w, r, back+"?done=withdrawn", http.StatusSeeOther)
		return nil
	}
	if r.PostForm.Get("remove") != "" {
		if err := s.cfg.People.Remove(u.actor(), snaaID, id); err != nil {
			return err
		}
		http.Redirect(w, r, back+"?done=removed", http.StatusSeeOther)
		return nil
	}
	if err := s.cfg.People.SetRole(u.actor(), snaaID, id, r.PostForm.Get("role")); err != nil {
		return err
	}
	http.Redirect(w, r, back+"?done=role", http.StatusSeeOther)
	return nil
}

// joinData is the join page's data.
type joinData struct {
	Token string
	In    registry.Invitation
	OIDC  bool
	// Secret and URI are the TOTP enrolment, shown once after joining.
	Secret, URI string
	Joined      bool
}

func (s peoplePages) joinPage(w http.ResponseWriter, r *http.Request) {
	htmlHeaders(w.Header())
	w.Header().Set("Referrer-Policy", "no-referrer") // the token is in this page's URL
	tok := r.URL.Query().Get("token")
	in, err := s.invitation(r, tok)
	if err != nil {
		s.renderProblem(w, r, nil, err)
		return
	}
	pre, err := preSession(w, r, s.rnd)
	if err != nil {
		s.renderProblem(w, r, nil, err)
		return
	}
	s.render(w, http.StatusOK, "join", &pageData{Title: "Join " + orgOf(in), CSRF: pre, D: &joinData{Token: tok, In: in, OIDC: s.cfg.OIDC != nil}})
}

// invitation is the open invitation of tok, read after this node has
// caught up (Config.SyncAuth): it may have been made through another node.
func (s peoplePages) invitation(r *http.Request, tok string) (registry.Invitation, error) {
	if err := s.syncBeforeAuth(r, ""); err != nil {
		return registry.Invitation{}, err
	}
	return s.cfg.People.Invitation(tok)
}

func orgOf(in registry.Invitation) string {
	if in.SNAAID == "" {
		return "the operator's people"
	}
	return "SNAA " + in.SNAAID
}

func (s peoplePages) joinPost(w http.ResponseWriter, r *http.Request) {
	if !s.sessionForm(w, r) {
		return
	}
	w.Header().Set("Referrer-Policy", "no-referrer")
	tok := r.PostForm.Get("token")
	in, err := s.invitation(r, tok)
	if err != nil {
		s.renderProblem(w, r, nil, err)
		return
	}
	again := func(p *httperr.Problem) {
		pre, err := preSession(w, r, s.rnd)
		if err != nil {
			s.renderProblem(w, r, nil, err)
			return
		}
		s.render(w, p.Status, "join", &pageData{Title: "Join " + orgOf(in), CSRF: pre, Problem: p, D: &joinData{Token: tok, In: in, OIDC: s.cfg.OIDC != nil}})
	}
	if !checkPreSession(r) {
		again(problem(http.StatusForbidden, "the form expired or was not sent from this site; try again"))
		return
	}
	if s.cfg.OIDC != nil {
		again(problem(http.StatusConflict, "this node signs people in through their institution; use the button below"))
		return
	}
	if p := refusesSecrets(s.cfg.RefuseKeys, r, "passwords"); p != nil {
		again(p)
		return
	}
	pw := r.PostForm.Get("password")
	if pw != r.PostForm.Get("password2") {
		again(&httperr.Problem{Status: http.StatusUnprocessableEntity, Title: httperr.Titles[422], Errors: []model.FieldError{{Field: "password2", Message: "is not the same password"}}})
		return
	}
	j, err := s.cfg.People.Accept(tok, people.Acceptance{Password: pw, TOTP: r.PostForm.Get("totp") != ""})
	if err != nil {
		p, ok := problemOf(err)
		if !ok {
			s.renderProblem(w, r, nil, err)
			return
		}
		again(p)
		return
	}
	clearCookie(w, r, preCookieName(r))
	s.log.Info("person joined", "person", j.Person.ID, "snaa", j.Person.SNAAID, "from", clientAddr(r))
	if j.TOTPSecret == "" {
		s.signInPage(w, r, http.StatusOK, "Welcome, "+j.Person.Email+". Sign in with your e-mail address and password.", nil)
		return
	}
	s.render(w, http.StatusOK, "join", &pageData{Title: "Your second factor", D: &joinData{In: in, Joined: true,
		Secret: j.TOTPSecret, URI: people.TOTPURI("pidnode "+r.Host, j.Person.Email, j.TOTPSecret)}})
}

// personSignIn signs a person in with an e-mail address, a password and,
// if enrolled, a TOTP code.
func (s peoplePages) personSignIn(w http.ResponseWriter, r *http.Request) {
	if !s.sessionForm(w, r) {
		return
	}
	fail := func(p *httperr.Problem) { s.signInPage(w, r, p.Status, "", p) }
	if !checkPreSession(r) {
		fail(problem(http.StatusForbidden, "the sign-in form expired or was not sent from this site; try again"))
		return
	}
	if s.cfg.OIDC != nil {
		fail(problem(http.StatusConflict, "this node signs people in through their institution"))
		return
	}
	if p := refusesSecrets(s.cfg.RefuseKeys, r, "passwords"); p != nil {
		fail(p)
		return
	}
	if err := limitAddr(s.cfg.SignInLimit, r, "sign-in attempts"); err != nil {
		p, _ := problemOf(err)
		fail(p)
		return
	}
	if err := s.syncBeforeAuth(r, ""); err != nil {
		s.renderProblem(w, r, nil, err)
		return
	}
	p, err := s.cfg.People.SignIn(r.PostForm.Get("email"), r.PostForm.Get("password"), r.PostForm.Get("code"))
	if err != nil {
		pr, ok := problemOf(err)
		if !ok {
			s.renderProblem(w, r, nil, err)
			return
		}
		fail(pr)
		return
	}
	if err := s.startPersonSession(w, r, p); err != nil {
		s.renderProblem(w, r, nil, err)
		return
	}
	http.Redirect(w, r, "/console/", http.StatusSeeOther)
}

// startPersonSession ends the browser's session, if any, and starts one
// for p (never a token taken from a request: no fixation).
func (s peoplePages) startPersonSession(w http.ResponseWriter, r *http.Request, p registry.PersonView) error {
	if c, err := r.Cookie(sessionCookieName(r)); err == nil && c.Value != "" && len(c.Value) <= 100 {
		s.cfg.Sessions.End(access.TokenHash(c.Value))
	}
	if err := s.startSession(w, r, registry.Session{SNAAID: p.SNAAID, PersonID: p.ID}); err != nil {
		return err
	}
	clearCookie(w, r, preCookieName(r))
	s.log.Info("console sign-in", "who", "person "+p.ID, "snaa", p.SNAAID, "from", clientAddr(r))
	return nil
}

// The OpenID Connect sign-in: a state and a nonce in a cookie of this
// browser (SameSite=Lax, since the provider's redirect back is a
// cross-site navigation), with the invitation token when joining.

const oidcCookie = "pidnode-oidc"

func (s peoplePages) oidcStart(w http.ResponseWriter, r *http.Request) {
	if !s.sessionForm(w, r) {
		return
	}
	if !checkPreSession(r) {
		s.signInPage(w, r, http.StatusForbidden, "", problem(http.StatusForbidden, "the form expired or was not sent from this site; try again"))
		return
	}
	invite := r.PostForm.Get("token")
	if invite != "" {
		if _, err := s.invitation(r, invite); err != nil {
			s.renderProblem(w, r, nil, err)
			return
		}
	}
	var b [48]byte
	if _, err := io.ReadFull(s.rnd, b[:]); err != nil {
		s.renderProblem(w, r, nil, err)
		return
	}
	state, nonce := base64.RawURLEncoding.EncodeToString(b[:24]), base64.RawURLEncoding.EncodeToString(b[24:])
	http.SetCookie(w, &http.Cookie{Name: oidcCookie, Value: state + "." + nonce + "." + invite, Path: "/console/oidc/",
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode, MaxAge: 600})
	http.Redirect(w, r, s.cfg.OIDC.AuthURL(state, nonce), http.StatusSeeOther)
}

func (s peoplePages) oidcCallback(w http.ResponseWriter, r *http.Request) {
	htmlHeaders(w.Header())
	c, err := r.Cookie(oidcCookie)
	http.SetCookie(w, &http.Cookie{Name: oidcCookie, Value: "", Path: "/console/oidc/", MaxAge: -1, HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode})
	q := r.URL.Query()
	parts := []string{"", "", ""}
	if err == nil {
		parts = strings.SplitN(c.Value, ".", 3)
	}
	if len(parts) != 3 || parts[0] == "" || subtle.ConstantTimeCompare([]byte(parts[0]), []byte(q.Get("state"))) != 1 {
		s.signInPage(w, r, http.StatusForbidden, "", problem(http.StatusForbidden, "the sign-in through your institution was not started in this browser, or took too long; try again"))
		return
	}
	if e := q.Get("error"); e != "" {
		s.signInPage(w, r, http.StatusUnauthorized, "", problem(http.StatusUnauthorized, "your institution refused the sign-in (%s)", e))
		return
	}
	if err := limitAddr(s.cfg.SignInLimit, r, "sign-in attempts"); err != nil {
		p, _ := problemOf(err)
		s.signInPage(w, r, p.Status, "", p)
		return
	}
	if err := s.syncBeforeAuth(r, ""); err != nil {
		s.renderProblem(w, r, nil, err)
		return
	}
	sub, err := s.cfg.OIDC.Exchange(r.Context(), q.Get("code"), parts[1])
	if err == nil && parts[2] != "" {
		_, err = s.cfg.People.Accept(parts[2], people.Acceptance{Subject: sub})
	}
	var p registry.PersonView
	if err == nil {
		p, err = s.cfg.People.SignInSubject(sub)
	}
	if err != nil {
		pr, ok := problemOf(err)
		if !ok {
			s.renderProblem(w, r, nil, err)
			return
		}
		s.signInPage(w, r, pr.Status, "", pr)
		return
	}
	if err := s.startPersonSession(w, r, p); err != nil {
		s.renderProblem(w, r, nil, err)
		return
	}
	// A page, not a redirect: the navigation began on the provider's
	// site, and a browser withholds the SameSite=Strict session cookie
	// from the rest of a cross-site redirect chain.
	s.render(w, http.StatusOK, "signedin", &pageData{Title: "Signed in", Flash: "You are signed in as " + p.Email + "."})
}
