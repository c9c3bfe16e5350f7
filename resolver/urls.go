package resolver

import (
	"strconv"
	"strings"
	"unsafe"

	"pidnode/cache"

	"pidnode/handlev"
)

// urlsPage returns the ?action=showurls page, built on first use and
// published once (like view.ext).
func (v *view) urlsPage() page {
	if p := v.urls.Load(); p != nil {
		return *p
	}
	p := new(page)
	*p = compactPage(appendURLsPage(nil, v))
	if v.urls.CompareAndSwap(nil, p) {
		v.charge(pageStruct + p.bytes())
		return *p
	}
	return *v.urls.Load()
}

var pageStruct = cache.AllocSize(int(unsafe.Sizeof(page{})))

// appendURLsPage writes the ?action=showurls page (docs/handle-protocol.md
// §2.1): the locations the resolver selects among, in order, with their
// weight and attributes, read from the public values. A location whose
// target the resolver would not redirect to is shown as text, marked
// unusable; a malformed 10320/loc value is named with the reason it is
// ignored.
func appendURLsPage(dst []byte, v *view) []byte {
	dst = appendPageStart(dst, "Locations for: "+v.handle)
	dst = append(dst, "<h1>Locations for: "...)
	dst = appendText(dst, v.handle)
	dst = append(dst, "</h1>\n"...)
	var list handlev.LocList
	hasLoc := false
	if i := firstIndex(v.values, handlev.TypeLoc); i >= 0 {
		var err error
		if list, err = handlev.ParseLocations(v.values[i].Data); err != nil {
			dst = append(dst, "<p>The 10320/loc value is malformed, so the resolver ignores it and redirects to the first URL value (then URL.*): "...)
			reason := err.Error()
			if le, ok := err.(*handlev.LocError); ok {
				reason = le.Reason
			}
			dst = appendText(dst, reason)
			dst = append(dst, ".</p>\n"...)
		} else {
			hasLoc = true
			dst = append(dst, "<p class=\"muted\">chooseby: <code>"...)
			if c, ok := list.Attr("chooseby"); ok {
				dst = appendText(dst, c)
			} else {
				dst = append(dst, "locatt,country,score,weighted"...)
			}
			dst = append(dst, "</code></p>\n"...)
		}
	} else {
		dst = append(dst, "<p class=\"muted\">No 10320/loc value: the resolver redirects to the first URL value (then URL.*).</p>\n"...)
	}
	dst = append(dst, "<table>\n<thead><tr><th>#</th><th>Location</th><th>Weight</th><th>Attributes</th></tr></thead>\n<tbody>\n"...)
	n := 0
	var tmp []byte
	row := func(href []byte, weight string, attrs []handlev.LocAttr) {
		n++
		dst = append(dst, "<tr><td class=\"n\">"...)
		dst = strconv.AppendInt(dst, int64(n), 10)
		dst = append(dst, "</td><td class=\"d\" dir=\"ltr\">"...)
		if loc, ok := appendLocation(nil, href); ok {
			dst = append(dst, "<a href=\""...)
			dst = appendHTML(dst, loc)
			dst = append(dst, "\">"...)
			dst = appendShown(dst, href)
			dst = append(dst, "</a>"...)
		} else {
			dst = appendShown(dst, href)
			dst = append(dst, " <span class=\"muted\">(not a URL the resolver redirects to)</span>"...)
		}
		dst = append(dst, "</td><td class=\"n\">"...)
		dst = appendText(dst, weight)
		dst = append(dst, "</td><td class=\"d\" dir=\"ltr\">"...)
		for j, a := range attrs {
			if j > 0 {
				dst = append(dst, '\n')
			}
			dst = appendShown(dst, a.Name)
			dst = append(dst, "=\""...)
			dst = appendShown(dst, a.Value)
			dst = append(dst, '"')
		}
		dst = append(dst, "</td></tr>\n"...)
	}
	for i := range list.Locs {
		l := &list.Locs[i]
		if t, ok := l.Attr("href_template"); ok {
			tmp = handlev.AppendHrefTemplate(tmp[:0], t, v.handle)
		} else {
			h, _ := l.Attr("href")
			tmp = append(tmp[:0], h...)
		}
		w := "1"
		if s, ok := l.Attr("weight"); ok {
			w = strconv.FormatFloat(parseWeight(s), 'g', -1, 64)
		}
		row(tmp, w, l.Attrs)
	}
	for i := range v.values {
		if val := &v.values[i]; handlev.IsURLType(val.Type) {
			w := "0"
			if !hasLoc && len(val.Type) == len(handlev.TypeURL) {
				w = "1"
			}
			row(val.Data, w, []handlev.LocAttr{{Name: "type", Value: strings.Clone(val.Type)}})
		}
	}
	if n == 0 {
		dst = append(dst, "<tr><td colspan=\"4\" class=\"muted\">No locations.</td></tr>\n"...)
	}
	dst = append(dst, "</tbody>\n</table>\n<p class=\"muted\"><a href=\"/"...)
	dst = appendHTML(dst, v.handlePath)
	dst = append(dst, "?noredirect\">All values</a></p>\n"...)
	return appendPageEnd(dst)
}
