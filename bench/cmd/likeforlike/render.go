package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Placeholders in templates: the server's base URL ("http://ADDR"), the
// handle (the path without its leading slash) and the Location.
const (
	phBase   = "\x00B"
	phHandle = "\x00H"
	phLoc    = "\x00L"
	// baseToken is what baseline-http replaces with its own base URL.
	baseToken = "{{BASE}}"
)

// answer is pidnode's response to one path.
type answer struct {
	path string
	r    *response
}

// fetchAll fetches every path from addr over conns keep-alive connections.
func fetchAll(addr string, paths []string, conns int) ([]answer, error) {
	out := make([]answer, len(paths))
	next := make(chan int)
	errc := make(chan error, conns)
	var wg sync.WaitGroup
	for w := 0; w < conns; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dial(addr)
			if err != nil {
				errc <- err
				for range next {
				}
				return
			}
			defer c.Close()
			for i := range next {
				r, err := c.do(paths[i], "")
				if err != nil {
					errc <- fmt.Errorf("%s: %w", paths[i], err)
					for range next {
					}
					return
				}
				out[i] = answer{paths[i], r}
			}
		}()
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return nil, err
	}
	return out, nil
}

// shape is what every answer has in common, and what varies per identifier.
type shape struct {
	status     int
	expiresTTL int64    // Expires − Date, seconds (-1: no Expires)
	constant   []header // the same name and value in every answer
	linkTmpl   []string // per Link line: its template if the same for every answer, else ""
	links      int      // the most Link lines an answer has
	bodyTmpl   string   // the body's template if the same for every answer, else ""
	bodyOK     bool
}

// skipped are the headers every server writes its own way.
func skipped(name string) bool {
	switch strings.ToLower(name) {
	case "date", "server", "connection", "content-length":
		return true
	}
	return false
}

// templ replaces base and the handle in s with placeholders.
func templ(s, base, handle string) string {
	s = strings.ReplaceAll(s, base, phBase)
	return strings.ReplaceAll(s, handle, phHandle)
}

// analyse finds the shape of pidnode's answers; base is pidnode's own base
// URL.
func analyse(answers []answer, base string) (*shape, error) {
	if len(answers) == 0 {
		return nil, errors.New("no answers")
	}
	sh := &shape{status: answers[0].r.Status, expiresTTL: -1, bodyOK: true}
	var constant map[string]string
	var constOrder []string
	ttls := map[int64]int{}
	for k, a := range answers {
		r := a.r
		if r.Status != sh.status {
			return nil, fmt.Errorf("%s answers %d, %s answers %d: one status per scenario is needed", answers[0].path, sh.status, a.path, r.Status)
		}
		handle := strings.TrimPrefix(a.path, "/")
		var links []string
		mine := map[string]string{}
		var order []string
		for _, h := range r.Headers {
			switch n := strings.ToLower(h.Name); {
			case skipped(n), n == "location":
			case n == "expires":
				ttl, err := expiresTTL(r)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", a.path, err)
				}
				// Date is the server's clock of the last second tick,
				// Expires the request's: a second apart at times.
				ttls[ttl]++
			case n == "link":
				links = append(links, templ(h.Value, base, handle))
			default:
				if _, dup := mine[h.Name]; dup {
					return nil, fmt.Errorf("%s: %s twice", a.path, h.Name)
				}
				mine[h.Name] = h.Value
				order = append(order, h.Name)
			}
		}
		if k == 0 {
			constant, constOrder = mine, order
			sh.linkTmpl = links
		} else {
			if len(mine) != len(constant) {
				return nil, fmt.Errorf("%s sends %v, %s %v: headers other than Location, Expires and Link must be the same for every identifier", a.path, order, answers[0].path, constOrder)
			}
			for n, v := range mine {
				if constant[n] != v {
					return nil, fmt.Errorf("%s: %s: %q, %s: %q: only Location, Expires and Link may vary", a.path, n, v, answers[0].path, constant[n])
				}
			}
			for i := range sh.linkTmpl {
				if i >= len(links) || links[i] != sh.linkTmpl[i] {
					sh.linkTmpl[i] = ""
				}
			}
		}
		sh.links = max(sh.links, len(links))
		loc := r.get("Location")
		if len(loc) != 1 || html.EscapeString(loc[0]) != loc[0] {
			sh.bodyOK = false
			continue
		}
		b := templ(strings.ReplaceAll(string(r.Body), loc[0], phLoc), base, handle)
		if k == 0 {
			sh.bodyTmpl = b
		} else if b != sh.bodyTmpl {
			sh.bodyOK = false
		}
	}
	for ttl, c := range ttls {
		if sh.expiresTTL < 0 || c > ttls[sh.expiresTTL] {
			sh.expiresTTL = ttl
		}
	}
	for _, n := range constOrder {
		sh.constant = append(sh.constant, header{n, constant[n]})
	}
	for i, t := range sh.linkTmpl {
		// A template works in nginx when the handle comes right after a
		// slash ($uri is "/" + handle) and nothing else needs a variable.
		if strings.Contains(strings.ReplaceAll(t, "/"+phHandle, ""), phHandle) || strings.Contains(t, "$") {
			sh.linkTmpl[i] = ""
		}
	}
	if strings.Contains(sh.bodyTmpl, phHandle) || strings.Contains(sh.bodyTmpl, "$") {
		sh.bodyOK = false
	}
	return sh, nil
}

func expiresTTL(r *response) (int64, error) {
	e, d := r.get("Expires"), r.get("Date")
	if len(e) != 1 || len(d) != 1 {
		return 0, errors.New("one Expires and one Date expected")
	}
	et, err := http.ParseTime(e[0])
	if err != nil {
		return 0, fmt.Errorf("header Expires %q: %w", e[0], err)
	}
	dt, err := http.ParseTime(d[0])
	if err != nil {
		return 0, fmt.Errorf("header Date %q: %w", d[0], err)
	}
	return int64(et.Sub(dt) / time.Second), nil
}

// nginxQuote returns s as a double-quoted nginx string; s must hold no "$"
// (nginx would read a variable, and has no escape for it).
func nginxQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// nginxValue turns a template into an nginx string: base literal, handle from
// $uri, Location from $target (the location map of the suite's nginx.conf).
func nginxValue(t, base string) string {
	q := nginxQuote(t)
	q = strings.ReplaceAll(q, phBase, base)
	q = strings.ReplaceAll(q, "/"+phHandle, "${uri}")
	return strings.ReplaceAll(q, phLoc, "${target}")
}

// writeNginx writes the like-for-like server block (and its maps) for an
// http{} include; listen is its address.
func writeNginx(w io.Writer, sh *shape, answers []answer, pidBase, listen string, src string) error {
	base := "http://" + listen
	bw := bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintf(bw, "# Generated by bench/cmd/likeforlike render from pidnode's answers to the %d distinct paths of %s:\n", len(answers), src)
	fmt.Fprintf(bw, "# status %d, the same header lines and body (base URL %s).\n", sh.status, base)
	for i := 0; i < sh.links; i++ {
		if i < len(sh.linkTmpl) && sh.linkTmpl[i] != "" {
			continue
		}
		fmt.Fprintf(bw, "map $uri $lfl_link_%d {\n    default \"\";\n", i)
		for _, a := range answers {
			ls := a.r.get("Link")
			if i >= len(ls) {
				continue
			}
			v := strings.ReplaceAll(ls[i], pidBase, base)
			if strings.Contains(v, "$") || strings.Contains(a.path, "$") {
				return fmt.Errorf("%s: a '$' in Link cannot be written in nginx", a.path)
			}
			fmt.Fprintf(bw, "    %s %s;\n", nginxQuote(a.path), nginxQuote(v))
		}
		fmt.Fprintf(bw, "}\n")
	}
	var hdrs []string
	contentType := ""
	for _, h := range sh.constant {
		if strings.EqualFold(h.Name, "content-type") {
			contentType = h.Value
			continue
		}
		if strings.Contains(h.Value, "$") {
			return fmt.Errorf("%s: a '$' cannot be written in nginx", h.Name)
		}
		hdrs = append(hdrs, fmt.Sprintf("add_header %s %s always;", h.Name, nginxQuote(h.Value)))
	}
	if sh.expiresTTL >= 0 {
		// nginx's expires directive would add Cache-Control as well: a
		// fixed date of the same length instead, as long ahead as pidnode's.
		exp := time.Now().UTC().Add(time.Duration(sh.expiresTTL) * time.Second).Format(http.TimeFormat)
		hdrs = append(hdrs, fmt.Sprintf("add_header Expires %s always;", nginxQuote(exp)))
	}
	for i := 0; i < sh.links; i++ {
		if i < len(sh.linkTmpl) && sh.linkTmpl[i] != "" {
			hdrs = append(hdrs, fmt.Sprintf("add_header Link %s always;", nginxValue(sh.linkTmpl[i], base)))
		} else {
			hdrs = append(hdrs, fmt.Sprintf("add_header Link $lfl_link_%d always;", i))
		}
	}
	fmt.Fprintf(bw, "server {\n    listen %s;\n", listen)
	if sh.bodyOK {
		// return 302 writes nginx's own body; error_page sends the
		// request to a named location that writes pidnode's, with the 302
		// and its Location kept.
		fmt.Fprintf(bw, "    error_page %d @lfl_body;\n", sh.status)
		fmt.Fprintf(bw, "    location / {\n        if ($target = \"\") { return 404; }\n        return %d $target;\n    }\n", sh.status)
		fmt.Fprintf(bw, "    location @lfl_body {\n")
		if contentType != "" {
			fmt.Fprintf(bw, "        default_type %s;\n", nginxQuote(contentType))
		}
		for _, h := range hdrs {
			fmt.Fprintf(bw, "        %s\n", h)
		}
		fmt.Fprintf(bw, "        return 200 %s;\n    }\n", nginxValue(sh.bodyTmpl, base))
	} else {
		// nginx's own body (and its Content-Type): the check reports it.
		fmt.Fprintf(bw, "    location / {\n        if ($target = \"\") { return 404; }\n")
		for _, h := range hdrs {
			fmt.Fprintf(bw, "        %s\n", h)
		}
		fmt.Fprintf(bw, "        return %d $target;\n    }\n", sh.status)
	}
	fmt.Fprintf(bw, "}\n")
	return bw.Flush()
}

// baselineHead is the first line of the baseline file: what every answer
// shares.
type baselineHead struct {
	Status     int         `json:"status"`
	ExpiresTTL int64       `json:"expires_ttl"` // -1: no Expires
	Headers    [][2]string `json:"headers"`     // Content-Type, Vary, …: the same for every path
}

// baselineEntry is one path's answer, pidnode's base URL written as {{BASE}}.
type baselineEntry struct {
	Path     string   `json:"path"`
	Location string   `json:"location"`
	Links    []string `json:"links"`
	Body     string   `json:"body"`
}

func writeBaseline(w io.Writer, sh *shape, answers []answer, pidBase string) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	head := baselineHead{Status: sh.status, ExpiresTTL: sh.expiresTTL}
	for _, h := range sh.constant {
		head.Headers = append(head.Headers, [2]string{h.Name, h.Value})
	}
	if err := enc.Encode(head); err != nil {
		return err
	}
	for _, a := range answers {
		e := baselineEntry{Path: a.path, Body: strings.ReplaceAll(string(a.r.Body), pidBase, baseToken)}
		if l := a.r.get("Location"); len(l) == 1 {
			e.Location = strings.ReplaceAll(l[0], pidBase, baseToken)
		}
		for _, l := range a.r.get("Link") {
			e.Links = append(e.Links, strings.ReplaceAll(l, pidBase, baseToken))
		}
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func writeFile(name string, fn func(io.Writer) error) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func render(args []string) error {
	fs := newFlagSet("render")
	pid := fs.String("pidnode", "", "pidnode's resolver address")
	pathsFile := fs.String("paths", "", "request stream (one path per line)")
	limit := fs.Int("n", 0, "render only the first n distinct paths (0: all)")
	conns := fs.Int("conns", 8, "connections to pidnode")
	listen := fs.String("nginx-listen", "", "address of nginx's like-for-like server block")
	nginxOut := fs.String("nginx-out", "", "nginx include (http{} level) to write")
	baseOut := fs.String("baseline-out", "", "JSON Lines file for baseline-http -lfl to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *pid == "" || *pathsFile == "" {
		return errors.New("render needs -pidnode and -paths")
	}
	data, err := os.ReadFile(*pathsFile)
	if err != nil {
		return err
	}
	paths := distinctPaths(data, *limit)
	t0 := time.Now()
	answers, err := fetchAll(*pid, paths, *conns)
	if err != nil {
		return err
	}
	pidBase := "http://" + *pid
	sh, err := analyse(answers, pidBase)
	if err != nil {
		return err
	}
	if *nginxOut != "" {
		if *listen == "" {
			return errors.New("-nginx-out needs -nginx-listen")
		}
		if err := writeFile(*nginxOut, func(w io.Writer) error { return writeNginx(w, sh, answers, pidBase, *listen, *pathsFile) }); err != nil {
			return err
		}
	}
	if *baseOut != "" {
		if err := writeFile(*baseOut, func(w io.Writer) error { return writeBaseline(w, sh, answers, pidBase) }); err != nil {
			return err
		}
	}
	templated := 0
	for _, t := range sh.linkTmpl {
		if t != "" {
			templated++
		}
	}
	fmt.Fprintf(os.Stderr, "likeforlike: %d answers of pidnode in %.1fs: status %d, %d constant headers, Expires %+d s, %d Link lines (%d from $uri, %d from maps), body %s\n",
		len(answers), time.Since(t0).Seconds(), sh.status, len(sh.constant), sh.expiresTTL, sh.links, templated, sh.links-templated,
		map[bool]string{true: "templated (" + strconv.Itoa(len(sh.bodyTmpl)) + " bytes)", false: "per path (nginx writes its own)"}[sh.bodyOK])
	return nil
}
