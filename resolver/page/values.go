package page

import (
	"bytes"
	"strconv"
	"time"

	"pidnode/handlev"
	"pidnode/internal/ascii"
)

// Record is what a page shows of one identifier. A page function reads it
// and keeps nothing of it.
type Record struct {
	Handle string          // the handle as shown (Record.Handle, else the key)
	Path   []byte          // Handle percent-encoded for a URL path
	Status handlev.Status  // the record's status
	Values []handlev.Value // the values with public read, in record order
}

// appendTimestamp writes unix seconds as "yyyy-MM-dd HH:mm:ssZ" in UTC (the
// proxy's values page, docs/handle-protocol.md §2); 0 writes nothing.
func appendTimestamp(dst []byte, unix int64) []byte {
	if unix == 0 {
		return dst
	}
	return time.Unix(unix, 0).UTC().AppendFormat(dst, "2006-01-02 15:04:05Z")
}

// AppendValues writes the ?noredirect page: "Handle Values for: <handle>"
// and a table Index | Type | Timestamp | Data of r's values in record order,
// keeping only the values keep reports (keep nil: all).
func AppendValues(dst []byte, r *Record, keep func(*handlev.Value) bool) []byte {
	dst = appendStart(dst, "Handle Values for: "+r.Handle)
	dst = append(dst, "<h1>Handle Values for: "...)
	dst = AppendText(dst, r.Handle)
	dst = append(dst, "</h1>\n<table>\n<thead><tr><th>Index</th><th>Type</th><th>Timestamp</th><th>Data</th></tr></thead>\n<tbody>\n"...)
	rows := 0
	for i := range r.Values {
		v := &r.Values[i]
		if keep != nil && !keep(v) {
			continue
		}
		rows++
		dst = append(dst, "<tr><td class=\"n\">"...)
		dst = strconv.AppendInt(dst, int64(v.Index), 10)
		// Type and data cells are isolated left-to-right: right-to-left
		// text in one cannot reorder its neighbours (CSS unicode-bidi).
		dst = append(dst, "</td><td class=\"t\" dir=\"ltr\">"...)
		dst = appendShown(dst, v.Type)
		dst = append(dst, "</td><td class=\"n\">"...)
		dst = appendTimestamp(dst, v.Timestamp)
		dst = append(dst, "</td><td class=\"d\" dir=\"ltr\">"...)
		dst = appendValueData(dst, v)
		dst = append(dst, "</td></tr>\n"...)
	}
	if rows == 0 {
		dst = append(dst, "<tr><td colspan=\"4\" class=\"muted\">No values.</td></tr>\n"...)
	}
	dst = append(dst, "</tbody>\n</table>\n<p class=\"muted\">Handle JSON: <a href=\"/api/handles/"...)
	dst = AppendHTML(dst, r.Path)
	dst = append(dst, "\">/api/handles/"...)
	dst = AppendText(dst, r.Handle)
	dst = append(dst, "</a></p>\n"...)
	return appendEnd(dst)
}

// adminPermNames are the HS_ADMIN permission bits in the order the reference
// proxy lists them.
var adminPermNames = [...]struct {
	bit  uint16
	name string
}{
	{handlev.AdminAddHandle, "add_handle"},
	{handlev.AdminDeleteHandle, "delete_handle"},
	{handlev.AdminAddNA, "add_NA"},
	{handlev.AdminDeleteNA, "delete_NA"},
	{handlev.AdminModifyValue, "modify_value"},
	{handlev.AdminRemoveValue, "remove_value"},
	{handlev.AdminAddValue, "add_value"},
	{handlev.AdminModifyAdmin, "modify_admin"},
	{handlev.AdminRemoveAdmin, "remove_admin"},
	{handlev.AdminAddAdmin, "add_admin"},
	{handlev.AdminReadValue, "read_value"},
	{handlev.AdminListHandles, "list_handles"},
}

// appendValueData writes the Data cell of one value: HS_ADMIN and HS_VLIST
// decoded, text as text with http/https URLs and e-mail addresses as links,
// anything binary as upper-case hex.
func appendValueData(dst []byte, v *handlev.Value) []byte {
	switch {
	case ascii.EqualFold(v.Type, "hs_admin"):
		if a, err := handlev.DecodeAdmin(v.Data); err == nil {
			dst = append(dst, "handle="...)
			dst = appendShown(dst, a.Handle)
			dst = append(dst, "; index="...)
			dst = strconv.AppendInt(dst, int64(a.Index), 10)
			dst = append(dst, "; ["...)
			first := true
			for _, p := range adminPermNames {
				if a.Mask&p.bit != 0 {
					if !first {
						dst = append(dst, ", "...)
					}
					first = false
					dst = append(dst, p.name...)
				}
			}
			return append(dst, ']')
		}
	case ascii.EqualFold(v.Type, "hs_vlist"):
		if refs, err := handlev.DecodeVList(v.Data); err == nil {
			for i, r := range refs {
				if i > 0 {
					dst = append(dst, '\n')
				}
				dst = append(dst, "handle="...)
				dst = appendShown(dst, r.Handle)
				dst = append(dst, "; index="...)
				dst = strconv.AppendInt(dst, int64(r.Index), 10)
			}
			return dst
		}
	}
	if handlev.LooksBinary(v.Data) {
		return appendUpperHex(dst, v.Data)
	}
	return appendLinkedText(dst, v.Data)
}

func appendUpperHex(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, upperHex[c>>4], upperHex[c&15])
	}
	return dst
}

// appendLinkedText writes text, as a link when the whole text is an http or
// https URL the resolver would redirect to, a mailto: URL or an e-mail
// address. Other schemes are never links.
func appendLinkedText(dst, text []byte) []byte {
	t := handlev.TrimURLSpace(text)
	var href []byte
	var buf [1024]byte
	switch {
	case ascii.HasPrefixFold(t, "http://"), ascii.HasPrefixFold(t, "https://"):
		if loc, err := handlev.AppendTargetURL(buf[:0], t); err == nil {
			href = loc
		}
	case ascii.HasPrefixFold(t, "mailto:"):
		if looksEmail(t[len("mailto:"):]) {
			href = handlev.AppendURLEscaped(append(buf[:0], "mailto:"...), t[len("mailto:"):], true)
		}
	case looksEmail(t):
		href = handlev.AppendURLEscaped(append(buf[:0], "mailto:"...), t, true)
	}
	if href == nil {
		return appendShown(dst, text)
	}
	dst = append(dst, "<a href=\""...)
	dst = AppendHTML(dst, href)
	dst = append(dst, "\">"...)
	dst = appendShown(dst, text)
	return append(dst, "</a>"...)
}

// looksEmail: one '@' with something before it, a dot in the part after it
// that is neither first nor last, and no space, control or '<>"' anywhere.
func looksEmail(b []byte) bool {
	at := bytes.IndexByte(b, '@')
	if at <= 0 || bytes.IndexByte(b[at+1:], '@') >= 0 || len(b) > 254 {
		return false
	}
	for _, c := range b {
		if c <= ' ' || c == 0x7f || c == '<' || c == '>' || c == '"' || c == '\\' {
			return false
		}
	}
	domain := b[at+1:]
	dot := bytes.IndexByte(domain, '.')
	return dot > 0 && dot < len(domain)-1
}
