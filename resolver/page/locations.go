package page

import (
	"strconv"
	"strings"

	"pidnode/handlev"
)

// AppendLocations writes the ?action=showurls page (docs/handle-protocol.md
// §2.1): the locations the resolver selects among, in order, with their
// weight (read from a weight attribute by weight, the resolver's own rule)
// and attributes, read from r's values. A location whose target the resolver
// would not redirect to is shown as text, marked unusable; a malformed
// 10320/loc value is named with the reason it is ignored.
func AppendLocations(dst []byte, r *Record, weight func(attr string) float64) []byte {
	dst = appendStart(dst, "Locations for: "+r.Handle)
	dst = append(dst, "<h1>Locations for: "...)
	dst = AppendText(dst, r.Handle)
	dst = append(dst, "</h1>\n"...)
	var list handlev.LocList
	hasLoc := false
	if i := firstIndex(r.Values, handlev.TypeLoc); i >= 0 {
		var err error
		if list, err = handlev.ParseLocations(r.Values[i].Data); err != nil {
			dst = append(dst, "<p>The 10320/loc value is malformed, so the resolver ignores it and redirects to the first URL value (then URL.*): "...)
			reason := err.Error()
			if le, ok := err.(*handlev.LocError); ok {
				reason = le.Reason
			}
			dst = AppendText(dst, reason)
			dst = append(dst, ".</p>\n"...)
		} else {
			hasLoc = true
			dst = append(dst, "<p class=\"muted\">chooseby: <code>"...)
			if c, ok := list.Attr("chooseby"); ok {
				dst = AppendText(dst, c)
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
	row := func(href []byte, w string, attrs []handlev.LocAttr) {
		n++
		dst = append(dst, "<tr><td class=\"n\">"...)
		dst = strconv.AppendInt(dst, int64(n), 10)
		dst = append(dst, "</td><td class=\"d\" dir=\"ltr\">"...)
		if loc, err := handlev.AppendTargetURL(nil, href); err == nil {
			dst = append(dst, "<a href=\""...)
			dst = AppendHTML(dst, loc)
			dst = append(dst, "\">"...)
			dst = appendShown(dst, href)
			dst = append(dst, "</a>"...)
		} else {
			dst = appendShown(dst, href)
			dst = append(dst, " <span class=\"muted\">(not a URL the resolver redirects to)</span>"...)
		}
		dst = append(dst, "</td><td class=\"n\">"...)
		dst = AppendText(dst, w)
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
			tmp = handlev.AppendHrefTemplate(tmp[:0], t, r.Handle)
		} else {
			h, _ := l.Attr("href")
			tmp = append(tmp[:0], h...)
		}
		w := "1"
		if s, ok := l.Attr("weight"); ok {
			w = strconv.FormatFloat(weight(s), 'g', -1, 64)
		}
		row(tmp, w, l.Attrs)
	}
	for i := range r.Values {
		if val := &r.Values[i]; handlev.IsURLType(val.Type) {
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
	dst = AppendHTML(dst, r.Path)
	dst = append(dst, "?noredirect\">All values</a></p>\n"...)
	return appendEnd(dst)
}
