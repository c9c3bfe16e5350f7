package resolver

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"unsafe"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/internal/ascii"
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
	valuesHTML             page // ?noredirect page, all public values
	statusHTML             page // 410 tombstone or 404 reserved page, per status

	// The locations, negotiable representations, links and headers
	// (extras.go, view.ext) and the ?action=showurls page (view.urlsPage),
	// each built by the first request that needs it and published once.
	xp   atomic.Pointer[extras]
	urls atomic.Pointer[page]
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

func (p page) bytes() int64 { return cache.SliceSize(p.title) + cache.SliceSize(p.main) }

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
		est += 3*len(tv.Data) + redirectBodyLen + 32
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
			body := appendRedirectBody(buf, v.target)
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
func (v *view) valuesPage() page {
	v.valuesOnce.Do(v.buildValuesPage)
	return v.valuesHTML
}

func (v *view) buildValuesPage() {
	v.valuesHTML = compactPage(appendValuesPage(nil, v.handle, v.values, nil))
	v.charge(v.valuesHTML.bytes())
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
func (v *view) statusPage() page {
	v.statusOnce.Do(v.buildStatusPage)
	return v.statusHTML
}

func (v *view) buildStatusPage() {
	switch {
	case v.reserved():
		v.statusHTML = compactPage(appendReservedPage(nil, v.handle))
	case v.gone():
		v.statusHTML = compactPage(appendGonePage(nil, v))
	}
	v.charge(v.statusHTML.bytes())
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

// relatedItem is the part of the RELATED JSON text (docs/metadata-model.md)
// the tombstone shows; of the RESOURCE text it shows what
// handlev.ReadResource reads.
type relatedItem struct {
	RelationType      string `json:"relation_type"`
	RelatedIdentifier struct {
		Type         string `json:"type"`
		Identifier   string `json:"identifier"`
		ResolvingURL string `json:"resolving_url"`
	} `json:"related_identifier"`
}

func firstOfType(vs []handlev.Value, typ string) []byte {
	for i := range vs {
		if ascii.EqualFold(vs[i].Type, typ) {
			return vs[i].Data
		}
	}
	return nil
}

// appendGonePage writes the 410 tombstone (docs/product.md §5): identifier, status, label
// and description, the last landing page as text, related identifiers (links
// only to http/https), the curation contact.
func appendGonePage(dst []byte, v *view) []byte {
	var info handlev.Resource
	if b := firstOfType(v.values, "RESOURCE"); b != nil {
		info, _, _ = handlev.ReadResource(b, nil) // a malformed RESOURCE text just shows nothing
	}
	var related []relatedItem
	if b := firstOfType(v.values, handlev.TypeRelated); b != nil {
		_ = json.Unmarshal(b, &related)
	}
	status := v.status.String()
	dst = appendPageStart(dst, "Gone: "+v.handle)
	dst = append(dst, "<h1>"...)
	dst = appendText(dst, v.handle)
	dst = append(dst, "</h1>\n<p><span class=\"status\">"...)
	dst = append(dst, status...)
	dst = append(dst, "</span></p>\n<p>"...)
	if v.status == handlev.StatusObsoleted {
		dst = append(dst, "This identifier is obsolete: the resource it named has been withdrawn or replaced. "...)
	} else {
		dst = append(dst, "This identifier is deprecated: it should no longer be used or cited. "...)
	}
	dst = append(dst, "Its record is kept so that existing citations stay meaningful.</p>\n<dl>\n<dt>Identifier</dt><dd>"...)
	dst = appendText(dst, v.handle)
	dst = append(dst, "</dd>\n<dt>Status</dt><dd>"...)
	dst = append(dst, status...)
	dst = append(dst, "</dd>\n"...)
	if ts := statusSince(v.values); ts > 0 {
		if v.status == handlev.StatusObsoleted {
			dst = append(dst, "<dt>Withdrawn on</dt><dd>"...)
		} else {
			dst = append(dst, "<dt>Deprecated on</dt><dd>"...)
		}
		dst = appendTimestamp(dst, ts)
		dst = append(dst, "</dd>\n"...)
	}
	if len(info.Label) != 0 {
		dst = append(dst, "<dt>Label</dt><dd>"...)
		dst = appendText(dst, info.Label)
		dst = append(dst, "</dd>\n"...)
	}
	if len(info.Description) != 0 {
		dst = append(dst, "<dt>Description</dt><dd>"...)
		dst = appendText(dst, info.Description)
		dst = append(dst, "</dd>\n"...)
	}
	if i := chooseTarget(v.values, nil); i >= 0 {
		dst = append(dst, "<dt>Last landing page</dt><dd class=\"v\" dir=\"ltr\">"...)
		dst = appendShown(dst, v.values[i].Data)
		dst = append(dst, "</dd>\n"...)
	}
	if b := firstOfType(v.values, handlev.TypeEmail); b != nil {
		dst = append(dst, "<dt>Curation contact</dt><dd>"...)
		dst = appendLinkedText(dst, b)
		dst = append(dst, "</dd>\n"...)
	}
	dst = append(dst, "</dl>\n"...)
	if len(related) > 0 {
		dst = append(dst, "<h2>Related identifiers</h2>\n<ul>\n"...)
		for _, r := range related {
			id := r.RelatedIdentifier
			dst = append(dst, "<li>"...)
			if r.RelationType != "" {
				dst = appendText(dst, r.RelationType)
				dst = append(dst, ": "...)
			}
			text := id.Identifier
			if text == "" {
				text = id.ResolvingURL
			}
			href := []byte(nil)
			for _, u := range []string{id.ResolvingURL, id.Identifier} {
				if loc, ok := appendLocation(nil, []byte(u)); ok {
					href = loc
					break
				}
			}
			dst = append(dst, "<bdi dir=\"ltr\">"...)
			if href != nil {
				dst = append(dst, "<a href=\""...)
				dst = appendHTML(dst, href)
				dst = append(dst, "\">"...)
				dst = appendShown(dst, text)
				dst = append(dst, "</a>"...)
			} else {
				dst = appendShown(dst, text)
			}
			dst = append(dst, "</bdi>"...)
			if id.Type != "" {
				dst = append(dst, " <span class=\"muted\">("...)
				dst = appendText(dst, id.Type)
				dst = append(dst, ")</span>"...)
			}
			dst = append(dst, "</li>\n"...)
		}
		dst = append(dst, "</ul>\n"...)
	}
	dst = append(dst, "<p class=\"muted\"><a href=\"/"...)
	dst = appendHTML(dst, v.handlePath)
	dst = append(dst, "?noredirect\">Full record</a> · <a href=\"/api/handles/"...)
	dst = appendHTML(dst, v.handlePath)
	dst = append(dst, "\">Handle JSON</a></p>\n"...)
	return appendPageEnd(dst)
}

// statusSince is the time the record took its current status: the
// timestamp of its first public STATUS value, which a write renews only when
// the status changes (model.Build keeps an unchanged value's timestamp); 0
// when there is none (a STATUS without public read is not on public pages).
func statusSince(vs []handlev.Value) int64 {
	for i := range vs {
		if ascii.EqualFold(vs[i].Type, handlev.TypeStatus) {
			return vs[i].Timestamp
		}
	}
	return 0
}

// appendReservedPage writes the 404 page of a SUBMITTED identifier.
func appendReservedPage(dst []byte, handle string) []byte {
	return appendMessagePage(dst, "Reserved, not yet public", "The identifier <strong>", []byte(handle),
		"</strong> is reserved, not yet public. Its maintainer has registered it but not yet published it.")
}
