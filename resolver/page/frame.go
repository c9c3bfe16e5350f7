package page

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
)

// Pages are XHTML-compatible HTML5 (void elements self-closed, every element
// closed, only the five XML entities) so that tests can check them with a
// strict XML parser. Every string that comes from a request or a record goes
// through AppendHTML (attribute values), AppendText or appendShown (text
// content).

const style = `body{margin:0;background:#f6f8fa;color:#1f2328;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}` +
	`main{max-width:68rem;margin:2rem auto;padding:1.5rem 2rem;background:#fff;border:1px solid #d0d7de;border-radius:6px}` +
	`h1{font-size:1.35rem;margin:0 0 1rem;overflow-wrap:anywhere}h2{font-size:1.1rem;margin:1.5rem 0 .5rem}` +
	`table{border-collapse:collapse;width:100%}th,td{border:1px solid #d0d7de;padding:.35rem .6rem;text-align:left;vertical-align:top}` +
	`th{background:#f6f8fa}td.n{white-space:nowrap}td.t,td.d,.v{unicode-bidi:isolate}.esc{color:#82071e;background:#ffebe9;font-family:ui-monospace,monospace}td.d,.v{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9rem;white-space:pre-wrap;overflow-wrap:anywhere}` +
	`dl{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem}dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}` +
	`a{color:#0969da}.muted{color:#57606a;font-size:.9rem}.status{display:inline-block;padding:0 .5rem;border-radius:1rem;background:#ffebe9;color:#82071e;font-weight:600}` +
	`form{display:flex;gap:.5rem;flex-wrap:wrap}input[type=text]{flex:1;min-width:16rem;padding:.45rem .6rem;font:inherit;border:1px solid #d0d7de;border-radius:6px}` +
	`button{padding:.45rem 1rem;font:inherit;border:1px solid #1f883d;border-radius:6px;background:#1f883d;color:#fff;cursor:pointer}`

// StylePath is where the resolver serves Style: named by its content, so
// that a browser may keep it for good and a new version never meets an old
// copy. The pages link to it instead of carrying it, so that no page repeats
// it and the Content-Security-Policy allows no inline style.
var StylePath = func() string {
	sum := sha256.Sum256([]byte(style))
	return "/style-" + hex.EncodeToString(sum[:6]) + ".css"
}()

// Style is the style sheet every page links (StylePath). It is shared: never
// modify it.
var Style = []byte(style)

// Every page is headA + escaped title + headB + main + tail.
var (
	headA = []byte("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n" +
		"<meta name=\"robots\" content=\"noindex\" />\n<title>")
	headB = []byte("</title>\n<link rel=\"stylesheet\" href=\"" + StylePath + "\" />\n</head>\n<body>\n<main>\n")
	tail  = []byte("</main>\n</body>\n</html>\n")
)

// appendStart writes the document head and opens <main>. title is escaped.
func appendStart[T ~string | ~[]byte](dst []byte, title T) []byte {
	dst = append(dst, headA...)
	dst = AppendText(dst, title)
	return append(dst, headB...)
}

func appendEnd(dst []byte) []byte {
	return append(dst, tail...)
}

// Page is a pre-rendered page without the parts every page shares (head,
// style sheet link, tail), so that a cache entry does not hold its own copy
// of them: only the escaped Title and the content of <main>. The zero Page is
// "no page". Its bytes are immutable once built and may be shared by any
// number of requests.
type Page struct {
	Title, Main []byte
}

// Compact cuts a whole page written by this package into a Page, copying the
// two variable parts into right-sized memory.
func Compact(full []byte) Page {
	rest := full[len(headA):]
	t := bytes.Index(rest, headB) // the title is escaped: it holds no '<'
	main := rest[t+len(headB) : len(rest)-len(tail)]
	return Page{
		Title: append(make([]byte, 0, t), rest[:t]...),
		Main:  append(make([]byte, 0, len(main)), main...),
	}
}

// WriteTo writes the whole page, shared parts and p's own, to w in five
// writes of shared memory; it allocates nothing of its own.
func (p Page) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for _, b := range [...][]byte{headA, p.Title, headB, p.Main, tail} {
		n, err := w.Write(b)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// AppendRedirect writes the tiny page sent with a redirect to loc, a
// Location the resolver has made safe.
func AppendRedirect(dst, loc []byte) []byte {
	dst = append(dst, redirectA...)
	dst = AppendHTML(dst, loc)
	dst = append(dst, redirectB...)
	dst = AppendText(dst, loc)
	return append(dst, redirectC...)
}

const (
	redirectA = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n<title>Handle Redirect</title>\n</head>\n<body>\n<p><a href=\""
	redirectB = "\">"
	redirectC = "</a></p>\n</body>\n</html>\n"

	// RedirectLen is the length of a redirect page (AppendRedirect) without
	// its two copies of the target.
	RedirectLen = len(redirectA) + len(redirectB) + len(redirectC)
)
