package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

func main() {
	mapFile := flag.String("map", "bench/data/baseline-map.tsv", "path TAB url lines")
	addr := flag.String("addr", "127.0.0.1:0", "listen address of the minimal server (Location only)")
	lflFile := flag.String("lfl", "", "likeforlike render's JSON Lines: the like-for-like answers (pidnode's status, headers and body)")
	lflAddr := flag.String("lfl-addr", "127.0.0.1:0", "listen address of the like-for-like server (with -lfl)")
	ready := flag.String("ready-file", "", "write 'baseline ADDR' (and 'lfl ADDR') here once listening")
	flag.Parse()
	targets, err := load(*mapFile)
	if err != nil {
		fail(err)
	}
	ln, err := net.Listen("tcp4", *addr)
	if err != nil {
		fail(err)
	}
	readyText := "baseline " + ln.Addr().String() + "\n"
	servers := []*fasthttp.Server{minimal(targets)}
	listeners := []net.Listener{ln}
	if *lflFile != "" {
		lln, err := net.Listen("tcp4", *lflAddr)
		if err != nil {
			fail(err)
		}
		// The answers name the server's own base URL, as pidnode's name
		// pidnode's (it builds it from the Host of wrk's requests).
		s, n, err := likeForLike(*lflFile, "http://"+lln.Addr().String(), targets)
		if err != nil {
			fail(err)
		}
		fmt.Fprintf(os.Stderr, "baseline-http: %d like-for-like answers\n", n)
		servers = append(servers, s)
		listeners = append(listeners, lln)
		readyText += "lfl " + lln.Addr().String() + "\n"
	}
	if *ready != "" {
		if err := os.WriteFile(*ready, []byte(readyText), 0o644); err != nil {
			fail(err)
		}
	}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
		for _, s := range servers {
			_ = s.Shutdown()
		}
	}()
	errc := make(chan error, len(servers))
	for i, s := range servers {
		go func() { errc <- s.Serve(listeners[i]) }()
	}
	for range servers {
		if err := <-errc; err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "baseline-http:", err)
	os.Exit(1)
}

var notFound = []byte("not found\n")

// minimal answers 302 with Location alone: the plainest redirect.
func minimal(targets map[string]*entry) *fasthttp.Server {
	return &fasthttp.Server{
		Name:                          "baseline",
		NoDefaultContentType:          true,
		DisableHeaderNamesNormalizing: true,
		Handler: func(ctx *fasthttp.RequestCtx) {
			// string(b) in a map index does not allocate.
			if e, ok := targets[string(ctx.Path())]; ok {
				ctx.Response.Header.SetStatusCode(fasthttp.StatusFound)
				ctx.Response.Header.SetBytesKV([]byte("Location"), e.location)
				return
			}
			ctx.SetStatusCode(fasthttp.StatusNotFound)
			ctx.Response.SetBodyRaw(notFound)
		},
	}
}

// entry is one identifier: its URL, and pidnode's answer if likeforlike
// rendered it (the paths of the request stream).
type entry struct {
	location []byte
	lfl      *answer
}

type answer struct {
	location []byte
	links    [][]byte
	body     []byte
}

// expires keeps the Expires value of the current second, formatted once per
// second (as pidnode does).
type expires struct {
	ttl int64
	p   atomic.Pointer[stamp]
}

type stamp struct {
	sec  int64
	text []byte
}

func (e *expires) at(now time.Time) []byte {
	sec := now.Unix()
	if s := e.p.Load(); s != nil && s.sec == sec {
		return s.text
	}
	s := &stamp{sec: sec, text: []byte(time.Unix(sec+e.ttl, 0).UTC().Format(http.TimeFormat))}
	e.p.Store(s)
	return s.text
}

// likeForLike loads likeforlike render's file into targets and returns the
// server that sends each rendered path pidnode's status, headers and body,
// with the same fasthttp calls a handler would make: Location, Expires (now +
// pidnode's TTL), every Link line, the headers every answer shares, the body.
// Paths it has no answer for get the minimal redirect.
func likeForLike(path, base string, targets map[string]*entry) (*fasthttp.Server, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	if !sc.Scan() {
		return nil, 0, fmt.Errorf("%s: empty", path)
	}
	var head struct {
		Status     int         `json:"status"`
		ExpiresTTL int64       `json:"expires_ttl"`
		Headers    [][2]string `json:"headers"`
	}
	if err := json.Unmarshal(sc.Bytes(), &head); err != nil {
		return nil, 0, fmt.Errorf("%s: line 1: %w", path, err)
	}
	n := 0
	for sc.Scan() {
		var e struct {
			Path, Location, Body string
			Links                []string
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, 0, fmt.Errorf("%s: line %d: %w", path, n+2, err)
		}
		fill := func(s string) []byte { return []byte(strings.ReplaceAll(s, "{{BASE}}", base)) }
		a := &answer{location: fill(e.Location), body: fill(e.Body)}
		for _, l := range e.Links {
			a.links = append(a.links, fill(l))
		}
		t, ok := targets[e.Path]
		if !ok {
			t = &entry{location: a.location}
			targets[e.Path] = t
		}
		t.lfl = a
		n++
	}
	if err := sc.Err(); err != nil {
		return nil, 0, err
	}
	if head.Status == 0 {
		return nil, 0, errors.New(path + ": no status")
	}
	var contentType []byte
	var keys, vals [][]byte
	for _, h := range head.Headers {
		if strings.EqualFold(h[0], "Content-Type") {
			contentType = []byte(h[1])
			continue
		}
		keys, vals = append(keys, []byte(h[0])), append(vals, []byte(h[1]))
	}
	exp := &expires{ttl: head.ExpiresTTL}
	var (
		hdrLocation = []byte("Location")
		hdrExpires  = []byte("Expires")
		hdrLink     = []byte("Link")
	)
	return &fasthttp.Server{
		Name:                          "baseline",
		NoDefaultContentType:          true,
		DisableHeaderNamesNormalizing: true,
		Handler: func(ctx *fasthttp.RequestCtx) {
			e, ok := targets[string(ctx.Path())]
			if !ok {
				ctx.SetStatusCode(fasthttp.StatusNotFound)
				ctx.Response.SetBodyRaw(notFound)
				return
			}
			h := &ctx.Response.Header
			a := e.lfl
			if a == nil {
				h.SetStatusCode(fasthttp.StatusFound)
				h.SetBytesKV(hdrLocation, e.location)
				return
			}
			h.SetStatusCode(head.Status)
			h.SetCanonical(hdrLocation, a.location)
			if head.ExpiresTTL >= 0 {
				h.SetCanonical(hdrExpires, exp.at(ctx.Time()))
			}
			for _, l := range a.links {
				h.AddBytesKV(hdrLink, l)
			}
			if contentType != nil {
				h.SetContentTypeBytes(contentType)
			}
			for i := range keys {
				h.SetCanonical(keys[i], vals[i])
			}
			ctx.Response.SetBodyRaw(a.body)
		},
	}, n, nil
}

// load reads path TAB url lines into a map.
func load(path string) (map[string]*entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := make(map[string]*entry)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		k, v, ok := bytes.Cut(sc.Bytes(), []byte{'\t'})
		if !ok {
			return nil, fmt.Errorf("%s: line %d has no tab", path, len(m)+1)
		}
		m[string(k)] = &entry{location: bytes.Clone(v)}
	}
	return m, sc.Err()
}
