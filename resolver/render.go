package resolver

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/internal/ascii"
	"pidnode/resolver/page"
)

// view is what Render builds once per found cache entry, from the entry's
// public view (cache.Entry.Public, handlev.NewPublic): the values, status,
// target and alias are decided there, once, for every front; the view only
// pre-renders them for HTTP. Render itself, which runs on every cache miss,
// builds only what a plain redirect sends (the target, its body, the handle's
// path form); the costlier parts — the ?noredirect page, the tombstone or
// reserved page — are built by the first request that needs them (valuesPage,
// statusPage), once per view, and then sent as they are by every later
// request. Everything is immutable once built; the view is shared by all
// requests.
type view struct {
	handle     string          // canonical display handle (Record.Handle, else the key)
	values     []handlev.Value // Public.Values: the values with public read, in record order
	handlePath []byte          // handle percent-encoded for a URL path
	status     handlev.Status  // Public.Status
	entry      *cache.Entry    // for the public values' JSON (JSONBytes)

	// target is the Location of the default redirect (no ?index, ?type or
	// ?urlappend), nil when the record has no value the resolver redirects to.
	target       []byte
	targetTTL    handlev.TTLType
	targetTTLVal int32
	redirectBody []byte

	alias []byte // Public.Alias: the handle an HS_ALIAS value names, nil if none

	bufCap int // capacity of the buffer handlePath starts, for bytes

	// Built on first use, each by one sync.Once (concurrent first requests
	// wait for that build): a miss that only redirects never pays for them.
	valuesOnce, statusOnce sync.Once
	valuesHTML             page.Page // ?noredirect page, all public values
	statusHTML             page.Page // 410 tombstone or 404 reserved page, per status

	// The locations, negotiable representations, links and headers
	// (extras.go, view.ext) and the ?action=showurls page (view.urlsPage),
	// each built by the first request that needs it and published once.
	xp   atomic.Pointer[extras]
	urls atomic.Pointer[page.Page]
}

// Render builds the resolver's view of a cache entry: the default redirect
// target and its page now (every miss pays for that), and the ?noredirect
// page and the tombstone or reserved page for status-driven records on their
// first use. It returns nil for a not-found entry. cmd passes it as
// cache.Config.Render; the handler renders on the fly (allocating) for
// entries without a view.
//
// Only the entry's public view is rendered: every request to this listener is
// anonymous (docs/handle-protocol.md §1.4 publicOnly).
func Render(e *cache.Entry) any {
	if e == nil || !e.Found {
		return nil
	}
	v := render(e)
	e.Charge(v.bytes())
	return v
}

// viewStruct is the heap size of a view.
var viewStruct = cache.AllocSize(int(unsafe.Sizeof(view{})))

// bytes is what render allocated for v: the view and the buffer its path form,
// target and redirect page share, or, for a part that outgrew that buffer,
// its own memory.
func (v *view) bytes() int64 {
	n := viewStruct + cache.AllocSize(v.bufCap)
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(v.handlePath)))
	for _, p := range [][]byte{v.target, v.redirectBody} {
		if len(p) == 0 {
			continue
		}
		a := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
		if a < lo || a+uintptr(len(p)) > lo+uintptr(v.bufCap) {
			n += cache.AllocSize(len(p))
		}
	}
	return n
}

// charge adds n bytes of a part built on first use to the entry, if v is the
// entry's own view (not one rendered for a single request by viewOf).
func (v *view) charge(n int64) {
	if v.entry.View == any(v) {
		v.entry.Charge(n)
	}
}

// pageBytes is the memory of a page built on first use.
func pageBytes(p page.Page) int64 { return cache.SliceSize(p.Title) + cache.SliceSize(p.Main) }

func render(e *cache.Entry) *view {
	pub := &e.Public
	v := &view{handle: e.Record.Handle, status: pub.Status, entry: e, values: pub.Values, alias: pub.Alias}
	if v.handle == "" {
		v.handle = e.Key
	}

	// The path form, the target and the redirect page share one allocation
	// sized for the usual case (nothing to escape); each part is capped, so a
	// part that outgrows the estimate moves to its own memory and never
	// overwrites another.
	tv := pub.TargetValue()
	est := len(v.handle) + 16
	if tv != nil {
		est += 3*len(tv.Data) + page.RedirectLen + 32
	}
	buf := make([]byte, 0, est)
	v.bufCap = cap(buf)
	buf = appendPathEscaped(buf, v.handle)
	v.handlePath = buf[:len(buf):len(buf)]
	if tv != nil {
		buf = buf[len(buf):]
		if loc, ok := appendLocation(buf, tv.Data); ok {
			v.target = loc[:len(loc):len(loc)]
			v.targetTTL, v.targetTTLVal = tv.TTLType, tv.TTL
			buf = loc[len(loc):]
			body := page.AppendRedirect(buf, v.target)
			v.redirectBody = body[:len(body):len(body)]
		}
	}
	return v
}

// json returns the Handle JSON array of the public values
// (cache.Entry.JSONBytes), built once per entry on first use.
func (v *view) json() []byte { return v.entry.JSONBytes() }

// valuesPage returns the ?noredirect page of all public values, built on
// first use.
func (v *view) valuesPage() page.Page {
	v.valuesOnce.Do(v.buildValuesPage)
	return v.valuesHTML
}

func (v *view) buildValuesPage() {
	v.valuesHTML = page.Compact(page.AppendValues(nil, v.record(), nil))
	v.charge(pageBytes(v.valuesHTML))
}

// urlsPage returns the ?action=showurls page, built on first use and
// published once (like view.ext).
func (v *view) urlsPage() page.Page {
	if p := v.urls.Load(); p != nil {
		return *p
	}
	p := new(page.Page)
	*p = page.Compact(page.AppendLocations(nil, v.record(), parseWeight))
	if v.urls.CompareAndSwap(nil, p) {
		v.charge(pageStruct + pageBytes(*p))
		return *p
	}
	return *v.urls.Load()
}

var pageStruct = cache.AllocSize(int(unsafe.Sizeof(page.Page{})))

// record is what the pages show of the view's record.
func (v *view) record() *page.Record {
	return &page.Record{Handle: v.handle, Path: v.handlePath, Status: v.status, Values: v.values}
}

// reserved reports whether the record is SUBMITTED (handlev.Public.Hidden):
// reserved, not yet public, so every route answers with the reserved page
// (statusPage).
func (v *view) reserved() bool { return v.status == handlev.StatusSubmitted }

// gone reports whether the record is OBSOLETED or DEPRECATED
// (handlev.Public.Gone): a redirect answers with the 410 tombstone
// (statusPage).
func (v *view) gone() bool { return v.status.Tombstoned() }

// statusPage returns the page the record's status calls for, built on first
// use: the 404 reserved page if reserved, the 410 tombstone if gone, else the
// zero page.
func (v *view) statusPage() page.Page {
	v.statusOnce.Do(v.buildStatusPage)
	return v.statusHTML
}

func (v *view) buildStatusPage() {
	switch {
	case v.reserved():
		v.statusHTML = page.Compact(page.AppendReserved(nil, v.handle))
	case v.gone():
		v.statusHTML = page.Compact(page.AppendGone(nil, v.record()))
	}
	v.charge(pageBytes(v.statusHTML))
}

// chooseTarget returns the index in vs of the value a redirect goes to among
// the values p matches (handlev.ChooseTarget, the one rule), -1 if none.
func chooseTarget(vs []handlev.Value, p *params) int {
	if p == nil || !p.filtered() {
		return handlev.ChooseTarget(vs, nil)
	}
	return handlev.ChooseTarget(vs, p.match)
}

// match reports whether v passes the ?type/?index filter: with no filter every
// value does; otherwise v's index is listed OR its type is (the union,
// docs/handle-protocol.md §1.4). A listed type ending in '.' also matches its
// subtypes ("URL." matches URL and URL.*); types compare ASCII case-insensitively.
func (p *params) match(v *handlev.Value) bool {
	if !p.filtered() {
		return true
	}
	for _, i := range p.indexes {
		if v.Index == i {
			return true
		}
	}
	for _, t := range p.types {
		if typeMatches(v.Type, t) {
			return true
		}
	}
	return false
}

func typeMatches(typ string, filter []byte) bool {
	if n := len(filter); n > 0 && filter[n-1] == '.' {
		base := filter[:n-1]
		if len(typ) == len(base) {
			return ascii.EqualFold(base, typ)
		}
		return len(typ) > len(base) && typ[len(base)] == '.' && ascii.EqualFold(base, typ[:len(base)])
	}
	return ascii.EqualFold(filter, typ)
}

// viewOf returns e's view, rendering it now if the cache was built without
// Render (then the hit path allocates).
func viewOf(e *cache.Entry) *view {
	if v, ok := e.View.(*view); ok {
		return v
	}
	return render(e)
}
