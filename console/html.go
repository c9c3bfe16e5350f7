package console

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"regexp"
	"strings"
	"time"

	"pidnode/internal/httperr"
	"pidnode/read"
	"pidnode/registry"
)

// The HTML of the application form and the console (docs/product.md §4.2):
// html/template pages and one style sheet, embedded in the binary. No page
// holds a script or an inline style, so the Content-Security-Policy allows
// neither; everything works without JavaScript.

//go:embed templates/*.html assets/console.css
var consoleFS embed.FS

// PageCSP is the Content-Security-Policy of every HTML page: nothing but
// this origin's style sheet and images, forms only to this origin, never
// framed.
const PageCSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// htmlHeaders sets the security headers of an HTML reply.
func htmlHeaders(h http.Header) {
	h.Set("Content-Security-Policy", PageCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin") // "no-referrer" would make Chromium send Origin: null with our own forms
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// pageData is what every page template gets.
type pageData struct {
	Title string
	// User is the signed-in principal (nil on the public pages and the
	// sign-in page).
	User *consoleUser
	// CSRF is the token every form of a signed-in page carries.
	CSRF string
	// Flash is a one-line message at the top (a success).
	Flash string
	// Problem is the error to show at the top; its field errors are also
	// shown next to their fields.
	Problem *httperr.Problem
	// D is the page's own data.
	D any
}

// confirmPage asks before a destructive action (revoking a key,
// suspending an SNAA): the form posts Fields and confirm=yes to Action.
type confirmPage struct {
	Says           []string
	Action, Button string
	Cancel         string
	Fields         map[string]string
}

// confirmed reports whether the form is the confirmation's; if not, it
// shows the confirmation page instead.
func (s *Server) confirmed(w http.ResponseWriter, r *http.Request, d *pageData, title string, c *confirmPage) bool {
	if r.PostForm.Get("confirm") == "yes" {
		return true
	}
	d.Title, d.D = title, c
	s.render(w, http.StatusOK, "confirm", d)
	return false
}

// fieldCtx is what the "field" template gets: a form node and the problem
// whose errors it shows.
type fieldCtx struct {
	N *formNode
	P *httperr.Problem
}

// contactField is one contact's group of the application form.
type contactField struct{ Name, Label, Help string }

var fieldIDRE = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// FieldID is the HTML id of the input named name (a JSON path, the field
// of a problem's errors), which the page's list of errors links to.
func FieldID(name string) string {
	return "f-" + strings.Trim(fieldIDRE.ReplaceAllString(name, "-"), "-")
}

var pageFuncs = template.FuncMap{
	"fieldID":    FieldID,
	"fieldLabel": fieldLabel,
	"humanize":   humanize,
	// errs returns the messages of p's field errors for field name.
	"errs": func(p *httperr.Problem, name string) []string {
		if p == nil {
			return nil
		}
		var out []string
		for _, e := range p.Errors {
			if e.Field == name {
				out = append(out, e.Message)
			}
		}
		return out
	},
	"time": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			if v.IsZero() {
				return ""
			}
			return v.UTC().Format("2006-01-02 15:04 UTC")
		case *time.Time:
			if v == nil {
				return ""
			}
			return v.UTC().Format("2006-01-02 15:04 UTC")
		}
		return fmt.Sprint(t)
	},
	"join":  strings.Join,
	"lower": strings.ToLower,
	"fc":    func(n *formNode, p *httperr.Problem) fieldCtx { return fieldCtx{N: n, P: p} },
	"inputType": func(kind string) string {
		switch kind {
		case "email", "url":
			return kind
		}
		return "text"
	},
	// kind tells the "value" template how to show a decoded JSON value.
	"kind": func(x any) string {
		switch x.(type) {
		case map[string]any:
			return "map"
		case []any:
			return "list"
		}
		return "scalar"
	},
	"contacts": func() []contactField {
		return []contactField{
			{"technical_contact", "Technical contact", "The person who runs the systems that register and maintain your identifiers; the API key is handed to them."},
			{"administrative_contact", "Administrative contact", "The person who can speak for the organisation about this agreement."},
		}
	},
	"states": func() []string {
		return []string{registry.StateSubmitted, registry.StateApproved, registry.StateRejected, "ALL"}
	},
	// idOf is the id part of a display handle.
	"idOf": func(h string) string { _, _, id := read.SplitDisplay(h); return id },
	"add":  func(a, b int) int { return a + b },
	"contains": func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	},
}

// pages are the page templates by file name (without .html), each with the
// layout and the shared partials.
var pages = func() map[string]*template.Template {
	base := template.Must(template.New("").Funcs(pageFuncs).ParseFS(consoleFS, "templates/_*.html"))
	names, err := fs.Glob(consoleFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		short := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if strings.HasPrefix(short, "_") {
			continue
		}
		out[short] = template.Must(template.Must(base.Clone()).ParseFS(consoleFS, n))
	}
	return out
}()

// render writes page name with status. Rendering goes to a buffer first, so
// that a template error becomes a plain 500, never half a page.
func (s *Server) render(w http.ResponseWriter, status int, name string, d *pageData) {
	htmlHeaders(w.Header())
	t, ok := pages[name]
	var buf bytes.Buffer
	if ok {
		if err := t.ExecuteTemplate(&buf, "layout", d); err != nil {
			ok = false
			s.log.Error("rendering a console page", "page", name, "err", err)
		}
	}
	if !ok {
		http.Error(w, "internal error; the operator's log has details", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// renderProblem shows err as an error page (its status, its detail).
func (s *Server) renderProblem(w http.ResponseWriter, r *http.Request, d *pageData, err error) {
	p, ok := problemOf(err)
	if !ok {
		s.log.Error("console request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	for k, v := range p.Header {
		if k != "WWW-Authenticate" {
			w.Header().Set(k, v)
		}
	}
	if d == nil {
		d = &pageData{}
	}
	d.Title, d.Problem = p.Title, p
	s.render(w, p.Status, "error", d)
}

// serveAsset serves the embedded style sheet.
func serveAsset(w http.ResponseWriter, r *http.Request) {
	b, err := consoleFS.ReadFile("assets/console.css")
	if err != nil {
		http.NotFound(w, r)
		return
	}
	htmlHeaders(w.Header())
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Write(b)
}
