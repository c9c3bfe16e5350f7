package admin

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"pidnode/access"
	"pidnode/registry"
)

// The console (docs/product.md §4.2): an SNAA or the operator signs in with
// its key, which is exchanged for a server-side session. The key never
// reaches a page, a URL or the browser's storage; the session token lives in
// one HttpOnly, SameSite=Strict cookie (Secure on TLS) and only its SHA-256
// is stored, in the replicated sessions bucket, written through the Writer
// like every other write, so a session started on one node of a cluster is
// valid on all of them.
//
// Every request of a session looks its key up again (through the same
// cache as the API, which every key change invalidates), so that a revoked
// key's sessions end on the next request. Idle expiry is checked against the
// later of the stored last-seen time, written at most once per
// sessionRefresh, and this node's own memory of the session's last request:
// a session costs one write per minute of use, not one per request, and the
// idle limit is exact to within sessionRefresh across nodes.

const (
	// DefaultSessionIdle and DefaultSessionMax are the idle and absolute
	// session lifetimes.
	DefaultSessionIdle = 30 * time.Minute
	DefaultSessionMax  = 12 * time.Hour
	// sessionRefresh is how often a session's last-seen time is written.
	sessionRefresh = time.Minute
	// signinPerHour bounds sign-in attempts (and status look-ups) per address.
	signinPerHour = 60
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

// sessionMemory is this node's memory of the sessions it served: when each
// was last used (by token hash).
type sessionMemory struct {
	idle, max time.Duration
	mu        sync.Mutex
	seen      map[string]time.Time
}

func (m *sessionMemory) init(idle, max time.Duration) {
	if idle <= 0 {
		idle = DefaultSessionIdle
	}
	if max <= 0 {
		max = DefaultSessionMax
	}
	m.idle, m.max, m.seen = idle, max, map[string]time.Time{}
}

func (m *sessionMemory) lastSeen(hash string) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seen[hash]
}

func (m *sessionMemory) touch(hash string, t time.Time) {
	m.mu.Lock()
	if len(m.seen) > 100000 {
		m.seen = map[string]time.Time{}
	}
	m.seen[hash] = t
	m.mu.Unlock()
}

func (m *sessionMemory) forget(hash string) {
	m.mu.Lock()
	delete(m.seen, hash)
	m.mu.Unlock()
}

// consoleUser is the principal of a console request.
type consoleUser struct {
	Operator bool
	// SNAA and Key are the SNAA's records (not for the operator).
	SNAA SNAA
	Key  Key
	// p is the API's principal of the same SNAA key.
	p     *principal
	hash  string // the session token's hash
	token string // the session token, for the CSRF token
}

// Name is how the page header names the signed-in principal.
func (u *consoleUser) Name() string {
	if u.Operator {
		return "operator"
	}
	return u.SNAA.Organisation + " (" + u.SNAA.Namespace + ", key " + u.Key.Name + ")"
}

// csrfToken is the CSRF token of the session whose token is tok: derived
// from the token, which only the browser holding the cookie knows, so that
// no node needs to store it.
func csrfToken(tok string) string {
	m := hmac.New(sha256.New, []byte(tok))
	io.WriteString(m, "pidnode console csrf")
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func tokenHash(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
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
	if err := s.syncBeforeAuth(r); err != nil {
		return nil, err
	}
	hash := tokenHash(c.Value)
	var sess registry.Session
	var ok bool
	err = s.reg.View(func(tx registry.Tx) (err error) {
		sess, ok, err = tx.Session(hash)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &errSignIn{"Your session has ended. Sign in again."}
	}
	now := s.now()
	last := sess.Seen
	if m := s.sessions.lastSeen(hash); m.After(last) {
		last = m
	}
	end := func(why string) (*consoleUser, error) {
		s.endSession(hash)
		return nil, &errSignIn{why}
	}
	switch {
	case !now.Before(sess.Expires):
		return end("Your session has expired. Sign in again.")
	case now.Sub(last) >= s.sessions.idle:
		return end("Your session ended after a time without use. Sign in again.")
	}
	u := &consoleUser{Operator: sess.Operator, hash: hash, token: c.Value}
	if sess.Operator {
		if !s.keys.IsOperatorHash(sess.KeyHash) {
			return end("The operator key has changed. Sign in again.")
		}
	} else {
		sum, err := hex.DecodeString(sess.KeyHash)
		if err != nil || len(sum) != 32 {
			return end("Your session has ended. Sign in again.")
		}
		k, sn, err := s.keys.LookupSum([32]byte(sum))
		if err != nil {
			if errors.Is(err, access.ErrUnknownKey) || errors.Is(err, access.ErrRevokedKey) {
				return end("The key this session was started with was revoked. Sign in with another key.")
			}
			return nil, err
		}
		u.SNAA, u.Key = sn, k
		u.p = &principal{snaa: sn, key: k}
	}
	s.sessions.touch(hash, now)
	if now.Sub(sess.Seen) >= sessionRefresh {
		sess.Seen = now.UTC()
		err := s.w.Update(func(tx registry.Tx) error {
			cur, ok, err := tx.Session(hash)
			if err != nil || !ok || !cur.Seen.Before(sess.Seen) {
				return err
			}
			cur.Seen = sess.Seen
			return tx.PutSession(hash, &cur)
		})
		if err != nil {
			// The session goes on; the next request tries again.
			s.log.Warn("recording a console session's last use", "err", err)
		}
	}
	return u, nil
}

// endSession deletes a session (best effort: an ended session that stays
// stored is refused all the same by its expiry or its key).
func (s *Server) endSession(hash string) {
	s.sessions.forget(hash)
	if err := s.w.Update(func(tx registry.Tx) error { return tx.DeleteSession(hash) }); err != nil {
		s.log.Warn("deleting a console session", "err", err)
	}
}

// startSession stores a new session for sess and sets its cookie. Sessions
// that have expired are deleted in the same transaction.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, sess registry.Session) error {
	var b [32]byte
	if _, err := io.ReadFull(s.rnd, b[:]); err != nil {
		return err
	}
	tok := base64.RawURLEncoding.EncodeToString(b[:])
	hash := tokenHash(tok)
	now := s.now().UTC()
	sess.Created, sess.Seen, sess.Expires = now, now, now.Add(s.sessions.max)
	idle := s.sessions.idle
	err := s.w.Update(func(tx registry.Tx) error {
		if _, err := tx.DeleteSessions(100, func(_ string, x *registry.Session) bool {
			return !now.Before(x.Expires) || now.Sub(x.Seen) >= idle+sessionRefresh
		}); err != nil {
			return err
		}
		return tx.PutSession(hash, &sess)
	})
	if err != nil {
		return err
	}
	s.sessions.touch(hash, now)
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
		d.User, d.CSRF = u, csrfToken(u.token)
		if u.Operator != operator {
			if operator {
				s.renderProblem(w, r, d, problem(http.StatusForbidden, "this page is the operator's; you are signed in as an SNAA"))
			} else {
				s.renderProblem(w, r, d, problem(http.StatusForbidden, "this page is an SNAA's; you are signed in as the operator"))
			}
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

func (s *Server) consoleRoutes() {
	s.mux.HandleFunc("GET /console/assets/console.css", serveAsset)
	s.mux.HandleFunc("GET /console/sign-in", func(w http.ResponseWriter, r *http.Request) {
		s.signInPage(w, r, http.StatusOK, "", nil)
	})
	s.mux.HandleFunc("POST /console/sign-in", s.signIn)
	s.mux.HandleFunc("POST /console/sign-out", s.signOut)
	s.mux.HandleFunc("GET /console/{$}", func(w http.ResponseWriter, r *http.Request) {
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
	s.snaaConsoleRoutes()
	s.opsConsoleRoutes()
	s.mux.HandleFunc("/console/", func(w http.ResponseWriter, r *http.Request) {
		s.renderProblem(w, r, nil, problem(http.StatusNotFound, "no console page %s", r.URL.Path))
	})
}

// signInPage shows the sign-in form with a fresh pre-session token (the
// form's CSRF token, double-submitted in a cookie).
func (s *Server) signInPage(w http.ResponseWriter, r *http.Request, status int, flash string, p *Problem) {
	var b [24]byte
	if _, err := io.ReadFull(s.rnd, b[:]); err != nil {
		s.renderProblem(w, r, nil, err)
		return
	}
	pre := base64.RawURLEncoding.EncodeToString(b[:])
	http.SetCookie(w, &http.Cookie{Name: preCookieName(r), Value: pre, Path: "/", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode, MaxAge: 3600})
	s.render(w, status, "signin", &pageData{Title: "Sign in", CSRF: pre, Flash: flash, Problem: p})
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

func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	if !s.sessionForm(w, r) {
		return
	}
	fail := func(p *Problem) { s.signInPage(w, r, p.Status, "", p) }
	pre, err := r.Cookie(preCookieName(r))
	if err != nil || pre.Value == "" || subtle.ConstantTimeCompare([]byte(pre.Value), []byte(r.PostForm.Get("csrf"))) != 1 {
		fail(problem(http.StatusForbidden, "the sign-in form expired or was not sent from this site; try again"))
		return
	}
	if s.refuseKeys && r.TLS == nil {
		fail(problem(http.StatusForbidden, "this admin listener is plain HTTP on a network address: it refuses keys, which would cross the network in clear text; use the node's HTTPS admin address"))
		return
	}
	if err := s.limitAddr(s.signinRL, r, "sign-in attempts"); err != nil {
		p, _ := problemOf(err)
		fail(p)
		return
	}
	key := strings.TrimSpace(r.PostForm.Get("key"))
	var sess registry.Session
	switch {
	case key == "":
		fail(&Problem{Status: http.StatusUnprocessableEntity, Title: problemTitles[422], Errors: []FieldError{{Field: "key", Message: "is required"}}})
		return
	case s.keys.IsOperator(key):
		sess = registry.Session{Operator: true, KeyHash: s.keys.OperatorHash()}
	case !access.WellFormed(key):
		fail(&Problem{Status: http.StatusUnauthorized, Title: problemTitles[401], Errors: []FieldError{{Field: "key", Message: "is not an API key of this node"}}})
		return
	default:
		if err := s.syncBeforeAuth(r); err != nil {
			s.renderProblem(w, r, nil, err)
			return
		}
		k, sn, err := s.keys.Lookup(key)
		if err != nil {
			if p, ok := problemOf(err); ok && p.Status == http.StatusUnauthorized {
				fail(&Problem{Status: http.StatusUnauthorized, Title: problemTitles[401], Errors: []FieldError{{Field: "key", Message: "is unknown or revoked"}}})
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
		s.endSession(tokenHash(c.Value))
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
		if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(csrfToken(c.Value))) != 1 {
			s.renderProblem(w, r, nil, problem(http.StatusForbidden, "the form's CSRF token is missing or wrong; reload the page and try again"))
			return
		}
		s.endSession(tokenHash(c.Value))
	}
	clearCookie(w, r, sessionCookieName(r))
	s.signInPage(w, r, http.StatusOK, "You are signed out.", nil)
}
