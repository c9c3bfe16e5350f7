package admin

import (
	"encoding/hex"
	"errors"
	"net/http"
	"slices"
	"strings"

	"pidnode/internal/route"
)

// The routes under an SNAA's namespace collection (…/handles/{prefix}/{ns}/)
// other than the identifiers themselves come from one table, nsTable,
// built from each feature's rows (bulkRoute, historyRoute, the rows of the
// features in packages of their own (Config.Routes: route.Route, such as
// stats.Service.Routes, linkcheck.Routes, webhook.Routes)), which also
// yields the custom ids they reserve (reserved) and their
// OpenAPI operations (ops). A new route of a namespace feature is one row
// in its package (or file).
//
// ServeMux cannot serve them by pattern, so one pattern per method takes
// everything under the collection and routeFor dispatches by the table:
// an id may hold '/', and a pattern can have nothing after {id...}, so the
// identifier routes (…/{id}/history) cannot be patterns; "{ns}/{$}" cannot
// sit beside "{ns}/{id...}" for other methods; and the collection routes'
// names match in any case, which a pattern's literal does not.

// nsHandler serves a namespace route: id is the identifier (a suffix route)
// or the path after the collection (a collection route).
type nsHandler func(w http.ResponseWriter, r *http.Request, p *principal, t target, id string) error

// nsRoute is one row of the table; each feature's file builds its own.
type nsRoute struct {
	// name is a collection route's path after the collection ("stats");
	// suffix an identifier route's last segment after the id ("history").
	// One of them is set.
	name, suffix string
	// tree: the route also owns every path under name/, for every method
	// (its handler answers 404 and 405 itself).
	tree bool
	// ops are its operations: the methods it serves (the others reach the
	// identifier handlers) and their OpenAPI documentation.
	ops []nsOp
	h   nsHandler
}

// nsOp is one operation of a namespace route: path is after the
// collection (name routes) or after {id} (suffix routes).
type nsOp struct {
	method, path string
	doc          op
}

// serves reports whether the route has an operation of method.
func (rt *nsRoute) serves(method string) bool {
	return slices.ContainsFunc(rt.ops, func(o nsOp) bool { return o.method == method })
}

// nsTable is the table of namespace routes.
type nsTable []nsRoute

// newNSTable builds s's table from the features' rows: admin's own, and
// after bulk and history those of features in packages of their own. Their
// order is the order in which reservedMsg names the reserved ids.
func newNSTable(s *snaaAPI, features []route.Route) nsTable {
	var tb nsTable
	tb = append(tb, bulkRoute(s), historyRoute(s))
	for _, f := range features {
		tb = append(tb, featureRoute(s, f))
	}
	return tb
}

// featureRoute is a feature's row in the table: its handler gets the
// checked target; its operations' documentation becomes the API's.
func featureRoute(s *snaaAPI, f route.Route) nsRoute {
	rt := nsRoute{name: f.Name, suffix: f.Suffix, tree: f.Tree,
		h: func(w http.ResponseWriter, r *http.Request, p *principal, t target, id string) error {
			err := f.H(w, r, route.Target{Prefix: t.prefix, Namespace: t.ns, Call: s.callOf(w, r, p)}, id)
			var re *route.Error
			if errors.As(err, &re) && re.Limit != "" {
				if i := slices.Index(refusedNames[:], re.Limit); i >= 0 {
					s.metrics.refused(i)
				}
			}
			return err
		}}
	for _, o := range f.Ops {
		d := o.Doc
		doc := op{summary: d.Summary, auth: d.Auth, request: d.Request, ok: d.OK, okSchema: d.OKSchema, okHeads: d.OKHeads, errs: d.Errs, tag: d.Tag}
		for _, q := range d.Query {
			doc.query = append(doc.query, param{q.Name, q.Desc})
		}
		for _, h := range d.Headers {
			doc.headers = append(doc.headers, param{h.Name, h.Desc})
		}
		for _, a := range d.Alt {
			doc.alt = append(doc.alt, param{a.Name, a.Desc})
		}
		rt.ops = append(rt.ops, nsOp{o.Method, o.Path, doc})
	}
	return rt
}

// callOf is what a feature's handler gets of the API for the request r of
// the caller p.
func (s *snaaAPI) callOf(w http.ResponseWriter, r *http.Request, p *principal) *route.Call {
	return &route.Call{SNAA: p.snaa.ID, KeyID: p.key.ID, Actor: p.actor(), Writable: s.checkWritable,
		DecodeJSON: func(max int64, v any) error {
			body, err := readBody(w, r, max)
			if err != nil {
				return err
			}
			return decodeStrict(body, v)
		},
		KeyValid:   func() error { return s.keyValid(p) },
		KeyChanges: s.keys.Changes,
		Stream: func() func() {
			s.metrics.eventStreams.Add(1)
			return func() { s.metrics.eventStreams.Add(-1) }
		}}
}

// keyValid looks the key p called with up again (by bearer key or console
// session): nil while it is valid and its SNAA not suspended, or, for a
// person's session, while the person is not removed. A look-up after a
// change of keys or SNAAs reads the store once per key; the others hit the
// auth cache.
func (g *gate) keyValid(p *principal) error {
	if p.person != nil {
		if g.people.Present(p.person.ID, p.snaa.ID) {
			return nil
		}
		return invalidToken("this person was removed, or their SNAA suspended, as the stream opened")
	}
	var sum [32]byte
	if n, err := hex.Decode(sum[:], []byte(p.key.Hash)); err == nil && n == len(sum) {
		if _, sn, err := g.keys.LookupSum(sum); err == nil && !sn.Suspended {
			return nil
		}
	}
	return invalidToken("this API key was revoked, or its SNAA suspended, as the stream opened")
}

// firstSegment and lastSegment cut a path id at its first and last '/'.
func firstSegment(id string) string {
	first, _, _ := strings.Cut(id, "/")
	return first
}

func lastSegment(id string) string { return id[strings.LastIndexByte(id, '/')+1:] }

// routeFor finds the route of method on the path id after the
// collection, and the id its handler gets: for a suffix route, the
// identifier's. Tree routes come first: every path under them is theirs.
func (tb nsTable) routeFor(method, id string) (nsHandler, string, bool) {
	for _, rt := range tb {
		if rt.tree && strings.EqualFold(firstSegment(id), rt.name) {
			return rt.h, id, true
		}
	}
	for _, rt := range tb {
		if rt.tree || !rt.serves(method) {
			continue
		}
		if rt.name != "" && strings.EqualFold(id, rt.name) {
			return rt.h, id, true
		}
		if rt.suffix != "" && strings.HasSuffix(id, "/"+rt.suffix) {
			return rt.h, strings.TrimSuffix(id, "/"+rt.suffix), true
		}
	}
	return nil, "", false
}

// reserved reports whether a custom id would collide with a route: a
// collection route's name, a path under a tree route, or an id whose last
// segment is a suffix route's.
func (tb nsTable) reserved(id string) bool {
	for _, rt := range tb {
		switch {
		case rt.name != "" && strings.EqualFold(id, rt.name),
			rt.tree && strings.EqualFold(firstSegment(id), rt.name),
			rt.suffix != "" && strings.EqualFold(lastSegment(id), rt.suffix):
			return true
		}
	}
	return false
}

// reservedMsg is the refusal of a reserved custom id, naming what the
// table reserves: the collection routes' names in the table's order, the
// tree routes' after the others.
func (tb nsTable) reservedMsg() string {
	var names, treeNames, trees, suffixes []string
	for _, rt := range tb {
		switch {
		case rt.tree:
			treeNames = append(treeNames, `"`+rt.name+`"`)
			trees = append(trees, `"`+rt.name+`/"`)
		case rt.name != "":
			names = append(names, `"`+rt.name+`"`)
		case rt.suffix != "":
			suffixes = append(suffixes, `"/`+rt.suffix+`"`)
		}
	}
	return strings.Join(append(names, treeNames...), ", ") + " and ids starting with " + orList(trees) + " or ending in " + orList(suffixes) + " are reserved by the API"
}

// orList joins "a", "b" and "c" as `a, b or c`.
func orList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// ops are the OpenAPI operations of method's namespace routes, keyed by
// their paths under the collection path coll and the identifier path item.
func (tb nsTable) ops(method, coll, item string) map[string]op {
	out := map[string]op{}
	for _, rt := range tb {
		for _, o := range rt.ops {
			if o.method == method {
				out[rt.docPath(o, coll, item)] = o.doc
			}
		}
	}
	return out
}

func (rt *nsRoute) docPath(o nsOp, coll, item string) string {
	if rt.suffix != "" {
		return item + "/" + o.path
	}
	return coll + o.path
}
