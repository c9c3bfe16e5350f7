package resolver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
	"unicode/utf8"

	"pidnode/handlev"
	"pidnode/internal/ascii"
)

// Pages are XHTML-compatible HTML5 (void elements self-closed, every element
// closed, only the five XML entities) so that tests can check them with a
// strict XML parser. Every string that comes from a request or a record goes
// through appendHTML (attribute values) or appendText (text content).

const pageStyle = `body{margin:0;background:#f6f8fa;color:#1f2328;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}` +
	`main{max-width:68rem;margin:2rem auto;padding:1.5rem 2rem;background:#fff;border:1px solid #d0d7de;border-radius:6px}` +
	`h1{font-size:1.35rem;margin:0 0 1rem;overflow-wrap:anywhere}h2{font-size:1.1rem;margin:1.5rem 0 .5rem}` +
	`table{border-collapse:collapse;width:100%}th,td{border:1px solid #d0d7de;padding:.35rem .6rem;text-align:left;vertical-align:top}` +
	`th{background:#f6f8fa}td.n{white-space:nowrap}td.t,td.d,.v{unicode-bidi:isolate}.esc{color:#82071e;background:#ffebe9;font-family:ui-monospace,monospace}td.d,.v{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9rem;white-space:pre-wrap;overflow-wrap:anywhere}` +
	`dl{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem}dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}` +
	`a{color:#0969da}.muted{color:#57606a;font-size:.9rem}.status{display:inline-block;padding:0 .5rem;border-radius:1rem;background:#ffebe9;color:#82071e;font-weight:600}` +
	`form{display:flex;gap:.5rem;flex-wrap:wrap}input[type=text]{flex:1;min-width:16rem;padding:.45rem .6rem;font:inherit;border:1px solid #d0d7de;border-radius:6px}` +
	`button{padding:.45rem 1rem;font:inherit;border:1px solid #1f883d;border-radius:6px;background:#1f883d;color:#fff;cursor:pointer}`

// stylePath is where the resolver serves pageStyle (serveStyle): named by
// its content, so that a browser may keep it for good and a new version
// never meets an old copy. The pages link to it instead of carrying it: 1.3
// KB less in every page, and a Content-Security-Policy with no inline style.
var stylePath = func() string {
	sum := sha256.Sum256([]byte(pageStyle))
	return "/style-" + hex.EncodeToString(sum[:6]) + ".css"
}()

// Every page is pageHeadA + escaped title + pageHeadB + main + pageTail.
var (
	pageHeadA = []byte("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n" +
		"<meta name=\"robots\" content=\"noindex\" />\n<title>")
	pageHeadB = []byte("</title>\n<link rel=\"stylesheet\" href=\"" + stylePath + "\" />\n</head>\n<body>\n<main>\n")
	pageTail  = []byte("</main>\n</body>\n</html>\n")
	styleBody = []byte(pageStyle)
)

// appendPageStart writes the document head and opens <main>. title is escaped.
func appendPageStart[T ~string | ~[]byte](dst []byte, title T) []byte {
	dst = append(dst, pageHeadA...)
	dst = appendText(dst, title)
	return append(dst, pageHeadB...)
}

func appendPageEnd(dst []byte) []byte {
	return append(dst, pageTail...)
}

// page is a pre-rendered page without the parts every page shares (head,
// style sheet, tail), so that a cache entry does not hold its own copy of
// them: only the escaped title and the content of <main>. The zero page is
// "no page".
type page struct {
	title, main []byte
}

// compactPage cuts a page written by appendPageStart … appendPageEnd into a
// page, copying the two variable parts into right-sized memory.
func compactPage(full []byte) page {
	rest := full[len(pageHeadA):]
	t := bytes.Index(rest, pageHeadB) // the title is escaped: it holds no '<'
	main := rest[t+len(pageHeadB) : len(rest)-len(pageTail)]
	return page{
		title: append(make([]byte, 0, t), rest[:t]...),
		main:  append(make([]byte, 0, len(main)), main...),
	}
}

// appendHTML appends s escaped for an HTML attribute value (and so for text
// too): & < > " ' become entities. Control characters other than tab, LF and
// CR, C1 controls, U+FFFE/U+FFFF and invalid UTF-8 become U+FFFD, so the
// output is always valid UTF-8 and valid XML character data.
func appendHTML[T ~string | ~[]byte](dst []byte, s T) []byte { return appendEscaped(dst, s, escAttr) }

// appendText is appendHTML for text content: quotes stay as they are, which
// keeps JSON text in values readable.
func appendText[T ~string | ~[]byte](dst []byte, s T) []byte { return appendEscaped(dst, s, escText) }

// appendShown is appendText for record data shown to a reader (the values
// table, a tombstone's landing page and related identifiers): every character
// that is invisible or reorders the text around it (handlev.IsHiddenRune: the
// bidirectional overrides and isolates, zero-width characters, …) is written
// visibly as <span class="esc">\uXXXX</span> (\U00XXXXXX beyond the BMP), so that U+202E cannot make
// "https://evil.example/gro.elgoog" read as a trusted URL, nor U+200D hide in
// a host name. Only for element content that may hold markup (not <title>).
func appendShown[T ~string | ~[]byte](dst []byte, s T) []byte { return appendEscaped(dst, s, escShown) }

const (
	escText  = iota // text content
	escAttr         // attribute value
	escShown        // text content, hidden characters made visible
)

// plainText and plainAttr mark the ASCII bytes appendEscaped copies as they
// are, for text content and attribute values.
var plainText, plainAttr = func() (text, attr [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		text[c] = c != '&' && c != '<' && c != '>' && c != 0x7f
		attr[c] = text[c] && c != '"' && c != '\''
	}
	for _, c := range "\t\n\r" {
		text[c], attr[c] = true, true
	}
	return text, attr
}()

func appendEscaped[T ~string | ~[]byte](dst []byte, s T, mode int) []byte {
	attr := mode == escAttr
	plain := &plainText
	if attr {
		plain = &plainAttr
	}
	for i := 0; i < len(s); {
		// Copy a run of bytes that need no escaping in one append (URLs and
		// handles are nearly all such bytes).
		j := i
		for j < len(s) && plain[s[j]] {
			j++
		}
		if j > i {
			dst = append(dst, s[i:j]...)
			if i = j; i == len(s) {
				break
			}
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '&':
				dst = append(dst, "&amp;"...)
			case c == '<':
				dst = append(dst, "&lt;"...)
			case c == '>':
				dst = append(dst, "&gt;"...)
			case c == '"' && attr:
				dst = append(dst, "&#34;"...)
			case c == '\'' && attr:
				dst = append(dst, "&#39;"...)
			case c < 0x20 && c != '\t' && c != '\n' && c != '\r', c == 0x7f:
				dst = append(dst, "\uFFFD"...)
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		var buf [utf8.UTFMax]byte
		n := copy(buf[:], s[i:min(i+utf8.UTFMax, len(s))])
		r, size := utf8.DecodeRune(buf[:n])
		if r == utf8.RuneError && size <= 1 || r >= 0x80 && r <= 0x9f || r == 0xfffe || r == 0xffff {
			dst = append(dst, "\uFFFD"...)
		} else if mode == escShown && handlev.IsHiddenRune(r) {
			dst = append(dst, `<span class="esc">\`...)
			if r > 0xffff { // Go's \U00XXXXXX form beyond the BMP
				dst = append(dst, 'U', '0', '0', upperHex[r>>20&15], upperHex[r>>16&15])
			} else {
				dst = append(dst, 'u')
			}
			dst = append(dst, upperHex[r>>12&15], upperHex[r>>8&15], upperHex[r>>4&15], upperHex[r&15])
			dst = append(dst, "</span>"...)
		} else {
			dst = append(dst, buf[:size]...)
		}
		i += size
	}
	return dst
}

// appendTimestamp writes unix seconds as "yyyy-MM-dd HH:mm:ssZ" in UTC (the
// proxy's values page, docs/handle-protocol.md §2); 0 writes nothing.
func appendTimestamp(dst []byte, unix int64) []byte {
	if unix == 0 {
		return dst
	}
	return time.Unix(unix, 0).UTC().AppendFormat(dst, "2006-01-02 15:04:05Z")
}

// appendValuesPage writes the ?noredirect page: "Handle Values for: <handle>"
// and a table Index | Type | Timestamp | Data of vs in record order, keeping
// only values p matches (p nil: all).
func appendValuesPage(dst []byte, handle string, vs []handlev.Value, p *params) []byte {
	dst = appendPageStart(dst, "Handle Values for: "+handle)
	dst = append(dst, "<h1>Handle Values for: "...)
	dst = appendText(dst, handle)
	dst = append(dst, "</h1>\n<table>\n<thead><tr><th>Index</th><th>Type</th><th>Timestamp</th><th>Data</th></tr></thead>\n<tbody>\n"...)
	rows := 0
	for i := range vs {
		v := &vs[i]
		if p != nil && !p.match(v) {
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
	dst = appendHTMLPath(dst, handle)
	dst = append(dst, "\">/api/handles/"...)
	dst = appendText(dst, handle)
	dst = append(dst, "</a></p>\n"...)
	return appendPageEnd(dst)
}

// appendHTMLPath writes h path-escaped and then HTML-escaped (for href).
func appendHTMLPath(dst []byte, h string) []byte {
	var buf [512]byte
	return appendHTML(dst, appendPathEscaped(buf[:0], h))
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
		if loc, ok := appendLocation(buf[:0], t); ok {
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
	dst = appendHTML(dst, href)
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

// appendRedirectBody writes the tiny page sent with a redirect.
func appendRedirectBody(dst, loc []byte) []byte {
	dst = append(dst, redirectBodyA...)
	dst = appendHTML(dst, loc)
	dst = append(dst, redirectBodyB...)
	dst = appendText(dst, loc)
	return append(dst, redirectBodyC...)
}

const (
	redirectBodyA = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n<title>Handle Redirect</title>\n</head>\n<body>\n<p><a href=\""
	redirectBodyB = "\">"
	redirectBodyC = "</a></p>\n</body>\n</html>\n"

	// redirectBodyLen is the redirect page without its two copies of the
	// target.
	redirectBodyLen = len(redirectBodyA) + len(redirectBodyB) + len(redirectBodyC)
)

// appendMessagePage writes a page with a heading and one paragraph made of
// before + escaped(subject) + after. before and after are trusted HTML.
func appendMessagePage(dst []byte, title, before string, subject []byte, after string) []byte {
	dst = appendPageStart(dst, title)
	dst = append(dst, "<h1>"...)
	dst = appendText(dst, title)
	dst = append(dst, "</h1>\n<p>"...)
	dst = append(dst, before...)
	dst = appendText(dst, subject)
	dst = append(dst, after...)
	dst = append(dst, "</p>\n"...)
	dst = appendLookupForm(dst, nil)
	return appendPageEnd(dst)
}

// appendLookupForm writes the lookup form (GET /lookup?h=…), no JavaScript.
func appendLookupForm(dst, value []byte) []byte {
	dst = append(dst, "<form method=\"get\" action=\"/lookup\">\n<label for=\"h\" class=\"muted\">Identifier</label>\n"+
		"<input type=\"text\" id=\"h\" name=\"h\" placeholder=\"prefix/namespace/id\" autocomplete=\"off\" value=\""...)
	dst = appendHTML(dst, value)
	return append(dst, "\" />\n<button type=\"submit\">Resolve</button>\n</form>\n"...)
}

// homePage is the page served on "/".
func homePage(prefixes []string) []byte {
	dst := appendPageStart(nil, "Identifier resolver")
	dst = append(dst, "<h1>Identifier resolver</h1>\n<p>Enter a persistent identifier to go to the resource it names. "+
		"Add <code>?noredirect</code> to an identifier URL to see the record instead.</p>\n"...)
	dst = appendLookupForm(dst, nil)
	if len(prefixes) > 0 {
		dst = append(dst, "<p class=\"muted\">Prefixes served here: "...)
		for i, p := range prefixes {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = append(dst, "<code>"...)
			dst = appendHTML(dst, p)
			dst = append(dst, "</code>"...)
		}
		dst = append(dst, ".</p>\n"...)
	}
	dst = append(dst, "<p class=\"muted\">Machine access: <code>/api/handles/{identifier}</code> returns the record as Handle JSON.</p>\n"...)
	return appendPageEnd(dst)
}
