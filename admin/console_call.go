package admin

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
)

// The console has no write or read path of its own. It reads identifiers
// (one, a namespace's page, the history) through package read and creates,
// updates and bulk-writes them through the write service, admitted and checked as the
// API admits the same request (consoleTarget), issues, revokes and lists
// keys through package access, and every other
// action runs the API route's handler in-process, with the session's
// principal where the API has the bearer key's, and reads the reply the
// API would have sent (docs/product.md §4.2). The checks, the problem
// details and the writes are therefore the API's, whichever way a request
// comes.

// apiRecorder is the http.ResponseWriter an in-process call writes into.
type apiRecorder struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (w *apiRecorder) Header() http.Header { return w.h }
func (w *apiRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *apiRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}

// apiCall is one in-process request to an API route.
type apiCall struct {
	method, path string
	pathValues   map[string]string
	query        url.Values
	body         []byte
}

// apiReply is what the route answered.
type apiReply struct {
	status int
	header http.Header
	body   []byte
}

// problem returns the reply's problem details, nil for a success.
func (a *apiReply) problem() *Problem {
	if a.status < 400 {
		return nil
	}
	var p Problem
	if err := json.Unmarshal(a.body, &p); err != nil || p.Status == 0 {
		return problem(a.status, "%s", bytes.TrimSpace(a.body))
	}
	return &p
}

// decode decodes a successful reply into v, or returns its problem.
func (a *apiReply) decode(v any) error {
	if p := a.problem(); p != nil {
		return p
	}
	if err := json.Unmarshal(a.body, v); err != nil {
		return err
	}
	return nil
}

// request builds the http.Request of c, in the context of the console
// request r (its client address too, for the logs).
func (c *apiCall) request(r *http.Request) (*http.Request, error) {
	u := c.path
	if len(c.query) > 0 {
		u += "?" + c.query.Encode()
	}
	req, err := http.NewRequestWithContext(r.Context(), c.method, u, bytes.NewReader(c.body))
	if err != nil {
		return nil, err
	}
	req.RemoteAddr = r.RemoteAddr
	req.Host = r.Host
	if c.body != nil {
		req.ContentLength = int64(len(c.body))
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.pathValues {
		req.SetPathValue(k, v)
	}
	return req, nil
}

// snaaCall runs h, an SNAA route's handler on base b, for the console user
// u: admitted as the API admits a bearer key (admit: suspension, rate
// limit, maintenance mode), then h with u's principal.
func (s *Server) snaaCall(r *http.Request, u *consoleUser, b *base, c apiCall, h func(w http.ResponseWriter, r *http.Request, b *base) error) *apiReply {
	rec := &apiRecorder{h: http.Header{}}
	req, err := c.request(r)
	if err == nil {
		var ctx = req.Context()
		if ctx, err = s.admit(req, u.Key, u.SNAA); err == nil {
			err = h(rec, req.WithContext(ctx), b)
		}
	}
	if err != nil {
		s.writeError(rec, req, err)
	}
	return &apiReply{status: rec.status, header: rec.h, body: rec.body.Bytes()}
}

// opCall runs h, an operator route's handler, for the operator's session.
func (s *Server) opCall(r *http.Request, c apiCall, h handlerFunc) *apiReply {
	rec := &apiRecorder{h: http.Header{}}
	req, err := c.request(r)
	if err == nil {
		err = h(rec, req)
	}
	if err != nil {
		s.writeError(rec, req, err)
	}
	return &apiReply{status: rec.status, header: rec.h, body: rec.body.Bytes()}
}

// collection is the API path of u's namespace on base b, and the path
// values its handlers read.
func collection(b *base, u *consoleUser, id string) (string, map[string]string) {
	p := b.path + "/handles/" + url.PathEscape(b.prefix) + "/" + url.PathEscape(u.SNAA.Namespace) + "/" + pathEscape(id)
	return p, map[string]string{"prefix": b.prefix, "ns": u.SNAA.Namespace, "id": id}
}
