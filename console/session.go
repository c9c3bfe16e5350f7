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
	"pidnode/registry"
	"pidnode/write"
)

// The console (docs/product.md §4.2): an SNAA or the operator signs in with
// its key, which is exchanged for a server-side session (package access:
// stored, replicated, looked up again with its key on every request). The
// key never reaches a page, a URL or the browser's storage; the session
// token lives in one HttpOnly, SameSite=Strict cookie (Secure on TLS).

const (
	// SignInPerHour bounds sign-in attempts (and status look-ups) per address.
	SignInPerHour = 60
	// consoleMaxBody bounds a console form (a bulk upload included).
	consoleMaxBody = 4 << 20
)

// Cookie names: with TLS the __Host- prefix pins the cookie to this host,
// path / and Secure.
const (
	cookieTLS     = "__Host-pidnode-session"
	cookiePlain   = "pidnode-session"
	preCookieTLS  = "__Host-pidnode-signin"
	preCookiePlan = "pidnode-signin"
)

func sessionCookieName(r *http.Request) string {
	if r.TLS != nil {
		return cookieTLS
	}
	return cookiePlain
}

func preCookieName(r *http.Request) string {
	if r.TLS != nil {
		return preCookieTLS
	}
	return preCookiePlan
}

// SessionToken is the console session token r's cookie carries ("" if
// none), for the API, which accepts a console session too.
func SessionToken(r *http.Request) string {
	c, err := r.Cookie(sessionCookieName(r))
	if err != nil || len(c.Value) > 100 {
		return ""
	}
	return c.Value
}

// consoleUser is the principal of a console request.
type consoleUser struct {
	Operator bool
	// SNAA and Key are the SNAA's records (not for the operator).
	SNAA registry.SNAA
	Key  registry.Key
	// Person is the signed-in person (people.go); nil for a key.
	Person *registry.PersonView
	token  string // the session token, for the CSRF token
}

// writer is u as the write service's Actor.
func (u *consoleUser) writer() *write.Actor {
	return &write.Actor{SNAA: u.SNAA, Key: u.Key, Person: u.Person}
}

// actor is u in the audit log, as the API writes an SNAA key's writes.
func (u *consoleUser) actor() string {
	if u.Person != nil {
		return registry.PersonActor(u.Person.SNAAID, u.Person.ID)
	}
	if u.Operator {
		return registry.ActorOperator
	}
	return "snaa:" + u.SNAA.ID + " key:" + u.Key.ID
}

// Name is how the page header names the signed-in principal.
func (u *consoleUser) Name() string {
	if u.Person != nil {
		return personName(u)
	}
	if u.Operator {
		return "operator"
	}
	return u.SNAA.Organisation + " (" + u.SNAA.Namespace + ", key " + u.Key.Name + ")"
}

// sameOrigin refuses a state-changing request that a browser marks as sent
// from another site, before any token is looked at.
func sameOrigin(r *http.Request) error {
	if sfs := r.Header.Get("Sec-Fetch-Site"); sfs != "" && sfs != "same-origin" && sfs != "none" {
		return problem(http.StatusForbidden, "cross-site form posts are refused")
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return problem(http.StatusForbidden, "cross-site form posts are refused (Origin %s)", o)
		}
	}
	return nil
}

// errSignIn makes the console send the browser to the sign-in page.
type errSignIn struct{ why string }

func (e *errSignIn) Error() string { return "console: sign in: " + e.why }

// sessionOf returns the signed-in principal of r, or *errSignIn.
func (s *Server) sessionOf(r *http.Request) (*consoleUser, error) {
	c, err := r.Cookie(sessionCookieName(r))
	if err != nil || c.Value == "" || len(c.Value) > 100 {
		return nil, &errSignIn{""}
	}
	sess, err := s.lookup(r, c.Value)
	if err != nil {
		return nil, sessionError(err)
	}
	return &consoleUser{Operator: sess.Operator, SNAA: sess.SNAA, Key: sess.Key, Person: sess.Person, token: sess.Token}, nil
}

// sessionLookup finds the console session of a request, for the pages
// (Server.sessionOf) and for the API (APISession); Server embeds it.
type sessionLookup struct{ s *Server }

// lookup returns the session of token tok after the syncs: the registry's
// before the look-up, and the shard of the session's namespace once its
// SNAA is known (the pages and the API read the namespace). Its errors are
// access.Sessions.Lookup's and Config.SyncAuth's.
func (l sessionLookup) lookup(r *http.Request, tok string) (*access.Session, error) {
	if err := l.s.syncBeforeAuth(r, ""); err != nil {
		return nil, err
	}
	sess, err := l.s.cfg.Sessions.Lookup(tok)
	if err != nil {
		return nil, err
	}
	if ns := sess.SNAA.Namespace; !sess.Operator && ns != "" {
		if err := l.s.syncBeforeAuth(r, ns); err != nil {
			return nil, err
		}
	}
	return sess, nil
}

// sessionError is the error of a session look-up: *errSignIn with the
// reason the session ended, or err.
func sessionError(err error) error {
	switch {
	case errors.Is(err, access.ErrSessionUnknown):
		return &errSignIn{"Your session has ended. Sign in again."}
	case errors.Is(err, access.ErrSessionExpired):
		return &errSignIn{"Your session has expired. Sign in again."}
	case errors.Is(err, access.ErrSessionIdle):
		return &errSignIn{"Your session ended after a time without use. Sign in again."}
	case errors.Is(err, access.ErrSessionOperatorChanged):
		return &errSignIn{"The operator key has changed. Sign in again."}
	case errors.Is(err, access.ErrSessionPersonRemoved):
		return &errSignIn{"Your account was removed from this node."}
	case errors.Is(err, access.ErrSessionKeyRevoked):
		return &errSignIn{"The key this session was started with was revoked. Sign in with another key."}
	}
	return err
}

// startSession stores a new session for sess and sets its cookie.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, sess registry.Session) error {
	tok, err := s.cfg.Sessions.Start(sess)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookieName(r), Value: tok, Path: "/", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	return nil
}

func clearCookie(w http.ResponseWriter, r *http.Request, name string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
}

// consoleHandler is a console page's handler: u is the signed-in principal.
type consoleHandler func(w http.ResponseWriter, r *http.Request, u *consoleUser, d *pageData) error

// console wraps a page: a session is required (otherwise the browser goes
// to the sign-in page), of the operator if operator is true, of an SNAA
// otherwise; a POST must come from this origin and carry the session's
// CSRF token. Errors are shown as an error page.
func (s *Server) console(operator bool, h consoleHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		htmlHeaders(w.Header())
		d := &pageData{}
		if r.Method == http.MethodPost {
			if err := sameOrigin(r); err != nil {
				s.renderProblem(w, r, d, err)
				return
			}
		}
		u, err := s.sessionOf(r)
		if err != nil {
			var si *errSignIn
			if errors.As(err, &si) {
				clearCookie(w, r, sessionCookieName(r))
				s.signInPage(w, r, http.StatusUnauthorized, si.why, nil)
				return
			}
			s.renderProblem(w, r, d, err)
			return
		}
		d.User, d.CSRF = u, access.CSRFToken(u.token)
		if u.Operator != operator {
			if operator {
				s.renderProblem(w, r, d, problem(http.StatusForbidden, "this page is the operator's; you are signed in as an SNAA"))
			} else {
				s.renderProblem(w, r, d, problem(http.StatusForbidden, "this page is an SNAA's; you are signed in as the operator"))
			}
			return
		}
		if err := roleAllows(u, r); err != nil {
			s.renderProblem(w, r, d, err)
			return
		}
		if r.Method == http.MethodPost {
			if err := readForm(w, r, consoleMaxBody); err != nil {
				s.renderProblem(w, r, d, err)
				return
			}
			got := r.PostForm.Get("csrf")
			if subtle.ConstantTimeCompare([]byte(got), []byte(d.CSRF)) != 1 {
				s.renderProblem(w, r, d, problem(http.StatusForbidden, "the form's CSRF token is missing or wrong; reload the page and try again"))
				return
			}
		}
		if err := h(w, r, u, d); err != nil {
			s.renderProblem(w, r, d, err)
		}
	}
}

func (s *Server) consoleRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /console/assets/console.css", serveAsset)
	mux.HandleFunc("GET /console/sign-in", func(w http.ResponseWriter, r *http.Request) {
		s.signInPage(w, r, http.StatusOK, "", nil)
	})
	mux.HandleFunc("POST /console/sign-in", s.signIn)
	mux.HandleFunc("POST /console/sign-out", s.signOut)
	mux.HandleFunc("GET /console/{$}", func(w http.ResponseWriter, r *http.Request) {
		u, err := s.sessionOf(r)
		switch {
		case err != nil:
			htmlHeaders(w.Header())
			var si *errSignIn
			if errors.As(err, &si) {
				s.signInPage(w, r, http.StatusOK, si.why, nil)
				return
			}
			s.renderProblem(w, r, nil, err)
		case u.Operator:
			http.Redirect(w, r, "/console/ops/applications", http.StatusSeeOther)
		default:
			http.Redirect(w, r, "/console/ids", http.StatusSeeOther)
		}
	})
	s.snaaConsoleRoutes(mux)
	s.opsConsoleRoutes(mux)
	peoplePages{s}.routes(mux)
	mux.HandleFunc("/console/", func(w http.ResponseWriter, r *http.Request) {
		s.renderProblem(w, r, nil, problem(http.StatusNotFound, "no console page %s", r.URL.Path))
	})
}

// signInPage shows the sign-in form with a fresh pre-session token (the
// form's CSRF token, double-submitted in a cookie).
func (s *Server) signInPage(w http.ResponseWriter, r *http.Request, status int, flash string, p *httperr.Problem) {
	pre, err := preSession(w, r, s.rnd)
	if err != nil {
		s.renderProblem(w, r, nil, err)
		return
	}
	s.render(w, status, "signin", &pageData{Title: "Sign in", CSRF: pre, Flash: flash, Problem: p, D: signInOptions(&s.cfg)})
}

// preSession sets a fresh pre-session token (from rnd) in its cookie and
// returns it: the CSRF token of a form posted without a session (sign-in,
// joining), double-submitted.
func preSession(w http.ResponseWriter, r *http.Request, rnd io.Reader) (string, error) {
	var b [24]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", err
	}
	pre := base64.RawURLEncoding.EncodeToString(b[:])
	http.SetCookie(w, &http.Cookie{Name: preCookieName(r), Value: pre, Path: "/", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode, MaxAge: 3600})
	return pre, nil
}

// checkPreSession reports whether the form's csrf is the pre-session
// cookie's token.
func checkPreSession(r *http.Request) bool {
	pre, err := r.Cookie(preCookieName(r))
	return err == nil && pre.Value != "" && subtle.ConstantTimeCompare([]byte(pre.Value), []byte(r.PostForm.Get("csrf"))) == 1
}

// sessionForm starts a sign-in or sign-out post: the console's headers, a
// request from this origin, and its small form read; false when it answered
// the request itself with the problem.
func (s *Server) sessionForm(w http.ResponseWriter, r *http.Request) bool {
	htmlHeaders(w.Header())
	if err := sameOrigin(r); err != nil {
		s.renderProblem(w, r, nil, err)
		return false
	}
	if err := readForm(w, r, 4096); err != nil {
		s.renderProblem(w, r, nil, err)
		return false
	}
	return true
}

// refusesSecrets is the problem a form that sends secrets (what: keys,
// passwords) answers on a listener that refuses them over plain HTTP
// (refuse: Config.RefuseKeys), nil where they may be sent.
func refusesSecrets(refuse bool, r *http.Request, what string) *httperr.Problem {
	if !refuse || r.TLS != nil {
		return nil
	}
	return problem(http.StatusForbidden, "this admin listener is plain HTTP on a network address: it refuses %s, which would cross the network in clear text; use the node's HTTPS admin address", what)
}

func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	if !s.sessionForm(w, r) {
		return
	}
	fail := func(p *httperr.Problem) { s.signInPage(w, r, p.Status, "", p) }
	if !checkPreSession(r) {
		fail(problem(http.StatusForbidden, "the sign-in form expired or was not sent from this site; try again"))
		return
	}
	if p := refusesSecrets(s.cfg.RefuseKeys, r, "keys"); p != nil {
		fail(p)
		return
	}
	if err := limitAddr(s.cfg.SignInLimit, r, "sign-in attempts"); err != nil {
		p, _ := problemOf(err)
		fail(p)
		return
	}
	key := strings.TrimSpace(r.PostForm.Get("key"))
	var sess registry.Session
	switch {
	case key == "":
		fail(&httperr.Problem{Status: http.StatusUnprocessableEntity, Title: httperr.Titles[422], Errors: []model.FieldError{{Field: "key", Message: "is required"}}})
		return
	case s.cfg.Keys.IsOperator(key):
		sess = registry.Session{Operator: true, KeyHash: s.cfg.Keys.OperatorHash()}
	case !access.WellFormed(key):
		fail(&httperr.Problem{Status: http.StatusUnauthorized, Title: httperr.Titles[401], Errors: []model.FieldError{{Field: "key", Message: "is not an API key of this node"}}})
		return
	default:
		if err := s.syncBeforeAuth(r, ""); err != nil {
			s.renderProblem(w, r, nil, err)
			return
		}
		k, sn, err := s.cfg.Keys.Lookup(key)
		if err != nil {
			if p, ok := problemOf(err); ok && p.Status == http.StatusUnauthorized {
				fail(&httperr.Problem{Status: http.StatusUnauthorized, Title: httperr.Titles[401], Errors: []model.FieldError{{Field: "key", Message: "is unknown or revoked"}}})
				return
			}
			s.renderProblem(w, r, nil, err)
			return
		}
		if sn.Suspended {
			fail(problem(http.StatusForbidden, "SNAA %s is suspended; contact the operator", sn.ID))
			return
		}
		sess = registry.Session{SNAAID: sn.ID, KeyID: k.ID, KeyHash: k.Hash}
	}
	// Whatever session cookie the browser had, it gets a new one: a token
	// is only ever issued here, never taken from a request (no fixation).
	if c, err := r.Cookie(sessionCookieName(r)); err == nil && c.Value != "" && len(c.Value) <= 100 {
		s.cfg.Sessions.End(access.TokenHash(c.Value))
	}
	if err := s.startSession(w, r, sess); err != nil {
		s.renderProblem(w, r, nil, err)
		return
	}
	clearCookie(w, r, preCookieName(r))
	who := "operator"
	if !sess.Operator {
		who = sess.SNAAID + " key " + sess.KeyID
	}
	s.log.Info("console sign-in", "who", who, "from", clientAddr(r))
	http.Redirect(w, r, "/console/", http.StatusSeeOther)
}

func (s *Server) signOut(w http.ResponseWriter, r *http.Request) {
	if !s.sessionForm(w, r) {
		return
	}
	c, err := r.Cookie(sessionCookieName(r))
	if err == nil && c.Value != "" && len(c.Value) <= 100 {
		if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(access.CSRFToken(c.Value))) != 1 {
			s.renderProblem(w, r, nil, problem(http.StatusForbidden, "the form's CSRF token is missing or wrong; reload the page and try again"))
			return
		}
		s.cfg.Sessions.End(access.TokenHash(c.Value))
	}
	clearCookie(w, r, sessionCookieName(r))
	s.signInPage(w, r, http.StatusOK, "You are signed out.", nil)
}
