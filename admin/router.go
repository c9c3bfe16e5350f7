package admin

import (
	"log/slog"
	"maps"
	"net/http"
	"slices"
)

// router is the one mux of the admin listener and what it documents: every
// API route is registered through handle or handleDocs with its OpenAPI
// operation (routeInfo), which /openapi.json is built from, and every
// handler's error becomes a problem+json reply in writeError. Server embeds
// it; the route sets (opsAPI, snaaAPI) are handed it to register theirs.
type router struct {
	mux    *http.ServeMux
	routes []routeInfo
	log    *slog.Logger // hears of unexpected errors and 5xx replies
}

// routeInfo is a registered operation: what /openapi.json documents.
type routeInfo struct {
	Method, Pattern string
	doc             op
}

// handlerFunc is a route handler; a returned error becomes a problem reply.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle registers h for "METHOD /pattern" with its OpenAPI operation.
func (rt *router) handle(method, pattern string, h handlerFunc, doc op) {
	rt.handleDocs(method, pattern, h, map[string]op{pattern: doc})
}

// handleDocs registers h for "METHOD /pattern", a pattern that serves
// several documented paths: docs maps each path to its operation.
func (rt *router) handleDocs(method, pattern string, h handlerFunc, docs map[string]op) {
	for _, d := range slices.Sorted(maps.Keys(docs)) {
		rt.routes = append(rt.routes, routeInfo{Method: method, Pattern: d, doc: docs[d]})
	}
	rt.mux.HandleFunc(method+" "+pattern, func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			rt.writeError(w, r, err)
		}
	})
}

// methodFallback answers 405 problem+json for other methods on a path.
func (rt *router) methodFallback(pattern string, allow string) {
	rt.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		rt.writeError(w, r, problem(http.StatusMethodNotAllowed, "%s is not allowed here; allowed: %s", r.Method, allow).with("Allow", allow))
	})
}

// writeError is the one place that maps errors to problem+json replies.
func (rt *router) writeError(w http.ResponseWriter, r *http.Request, err error) {
	p, ok := problemOf(err)
	switch {
	case !ok:
		// Unexpected errors (database, encoding) are logged, never shown.
		rt.log.Error("admin request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	case p.Status >= 500:
		rt.log.Error("admin request failed", "method", r.Method, "path", r.URL.Path, "status", p.Status, "detail", p.Detail)
	}
	for k, v := range p.header {
		w.Header().Set(k, v)
	}
	b, _ := marshal(p)
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	w.Write(b)
}
