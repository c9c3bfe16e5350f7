package resolver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/netip"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/internal/conntimeout"
	"pidnode/resolver/page"
)

// Defaults New uses for zero Config fields.
const (
	DefaultProxyURL     = "https://hdl.handle.net"
	DefaultReadTimeout  = 10 * time.Second
	DefaultWriteTimeout = 10 * time.Second
	DefaultIdleTimeout  = 60 * time.Second
	// DefaultHandshakeTimeout bounds a TLS handshake from the accept.
	DefaultHandshakeTimeout = 5 * time.Second
	DefaultMaxHeaderBytes   = 8 << 10
	// MaxBodyBytes caps a request body (only POST /api/handles/… has one):
	// larger bodies get 413.
	MaxBodyBytes = 64 << 10
)

// Config configures a Server. Zero values select the documented defaults.
type Config struct {
	// Cache is where records are read. Required. Build it with
	// cache.Config.Render = Render so that hits find their pre-rendered view.
	Cache *cache.Cache
	// Namer turns request handles into storage keys. Required.
	Namer *handlev.Namer
	// ProxyURL is the global resolver the rel="cite-as" link points to, without
	// a trailing '/'. If empty, DefaultProxyURL is used.
	ProxyURL string
	// PublicURL is this resolver's own base URL (scheme and host, optionally a
	// path, no trailing '/'), used for rel="describedby" links, /lookup and
	// HS_ALIAS redirects. If empty, it is derived per request from the Host
	// header (reduced to host-name characters) and the connection's TLS state.
	PublicURL string
	// ReadTimeout, WriteTimeout and IdleTimeout bound reading a request, writing
	// a response and waiting for the next request on a keep-alive connection.
	// Zero selects DefaultReadTimeout, DefaultWriteTimeout, DefaultIdleTimeout.
	// ReadTimeout runs from the accept for the first request, so a
	// connection that sends nothing is closed (408) after it.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// HandshakeTimeout bounds a TLS connection's handshake, from the accept
	// (a client that connects and sends nothing); the ReadTimeout counts the
	// handshake too. Zero selects DefaultHandshakeTimeout, or ReadTimeout
	// when that is shorter.
	HandshakeTimeout time.Duration
	// MaxHeaderBytes caps the request line plus headers (fasthttp's read
	// buffer); a larger request gets 431. Zero selects DefaultMaxHeaderBytes.
	MaxHeaderBytes int
	// MaxConns caps concurrent connections (fasthttp Concurrency). Zero selects
	// fasthttp's default (262144).
	MaxConns int
	// Logger receives listener errors and failed record loads, never a line per
	// request. Nil discards.
	Logger *slog.Logger
	// Counter, if set, counts every resolution of a found record by its
	// storage key (resolution statistics, flushed to the store by admin).
	Counter *cache.Counter
	// RateLimit is the sustained requests per second allowed per client
	// address (IPv6 by /64), RateBurst the bucket size (if zero, 2×RateLimit),
	// RateTable the most addresses tracked (if zero, DefaultRateTable). If
	// RateLimit is zero there is no limit. See ratelimit.go.
	RateLimit float64
	RateBurst int
	RateTable int
	// Country, if set, returns the country (ISO 3166-1 alpha-2 code, any
	// case) of a client address, ok=false when unknown: the chooseby method
	// "country" selects by it (docs/handle-protocol.md §2.1). It must be safe
	// for concurrent use. If nil, "country" selects nothing.
	Country func(ip netip.Addr) (code [2]byte, ok bool)
	// Rand returns uniformly random 64-bit numbers for the weighted choice
	// among locations. It must be safe for concurrent use. If nil,
	// math/rand/v2's Uint64 is used (per-thread state, no lock, no
	// allocation); tests pass a seeded source.
	Rand func() uint64
}

// Server is the public resolver. Its Handler is safe for concurrent use.
type Server struct {
	cache     *cache.Cache
	namer     *handlev.Namer
	proxyURL  string
	publicURL string
	log       *slog.Logger
	srv       *fasthttp.Server
	timeouts  conntimeout.Config // enforced on Serve's listener, not by fasthttp
	dates     dateCache
	home      []byte
	pool      sync.Pool // *scratch
	counter   *cache.Counter
	limiter   *clientLimiter // nil: no per-address limit
	geo       func(netip.Addr) ([2]byte, bool)
	rnd       func() uint64
	// draining: every response asks the client to close its connection (Drain).
	draining atomic.Bool
	stats    resolverStats
}

// New validates cfg, fills defaults and returns a Server ready to Serve.
// Errors are *ConfigError.
func New(cfg Config) (*Server, error) {
	if cfg.Cache == nil {
		return nil, &ConfigError{Pkg: "resolver", Field: "Cache", Reason: "required", Err: ErrNoCache}
	}
	if cfg.Namer == nil {
		return nil, &ConfigError{Pkg: "resolver", Field: "Namer", Reason: "required", Err: ErrNoNamer}
	}
	if cfg.ProxyURL == "" {
		cfg.ProxyURL = DefaultProxyURL
	}
	proxy, err := baseURL("ProxyURL", cfg.ProxyURL)
	if err != nil {
		return nil, err
	}
	public := ""
	if cfg.PublicURL != "" {
		if public, err = baseURL("PublicURL", cfg.PublicURL); err != nil {
			return nil, err
		}
	}
	for _, l := range []struct {
		name string
		v    int64
	}{
		{"ReadTimeout", int64(cfg.ReadTimeout)}, {"WriteTimeout", int64(cfg.WriteTimeout)},
		{"IdleTimeout", int64(cfg.IdleTimeout)}, {"HandshakeTimeout", int64(cfg.HandshakeTimeout)}, {"MaxHeaderBytes", int64(cfg.MaxHeaderBytes)},
		{"MaxConns", int64(cfg.MaxConns)}, {"RateBurst", int64(cfg.RateBurst)}, {"RateTable", int64(cfg.RateTable)},
	} {
		if l.v < 0 {
			return nil, &ConfigError{Pkg: "resolver", Field: l.name, Value: fmt.Sprint(l.v), Reason: "must not be negative", Err: ErrBadLimit}
		}
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.HandshakeTimeout == 0 {
		cfg.HandshakeTimeout = min(DefaultHandshakeTimeout, cfg.ReadTimeout)
	}
	if cfg.MaxHeaderBytes == 0 {
		cfg.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		timeouts:  conntimeout.Config{Read: cfg.ReadTimeout, Write: cfg.WriteTimeout, Idle: cfg.IdleTimeout, Handshake: cfg.HandshakeTimeout},
		cache:     cfg.Cache,
		namer:     cfg.Namer,
		proxyURL:  proxy,
		publicURL: public,
		log:       log,
		counter:   cfg.Counter,
		geo:       cfg.Country,
		rnd:       cfg.Rand,
	}
	if s.rnd == nil {
		s.rnd = rand.Uint64
	}
	if cfg.RateLimit < 0 || math.IsNaN(cfg.RateLimit) || math.IsInf(cfg.RateLimit, 0) {
		return nil, &ConfigError{Pkg: "resolver", Field: "RateLimit", Value: fmt.Sprint(cfg.RateLimit), Reason: "must be a finite number, not negative", Err: ErrBadLimit}
	}
	if cfg.RateLimit > 0 {
		s.limiter = newClientLimiter(cfg.RateLimit, cfg.RateBurst, cfg.RateTable)
	}
	var prefixes []string
	for _, p := range []string{cfg.Namer.Prefix(), cfg.Namer.TestPrefix()} {
		if p != "" {
			prefixes = append(prefixes, p)
		}
	}
	s.home = page.AppendHome(nil, prefixes)
	s.pool.New = func() any { return newScratch() }
	s.srv = &fasthttp.Server{
		Handler:         s.Handler,
		ErrorHandler:    errorHandler,
		Name:            "pidnode",
		Concurrency:     cfg.MaxConns,
		ReadBufferSize:  cfg.MaxHeaderBytes,
		WriteBufferSize: writeBufferSize,
		// No ReadTimeout, WriteTimeout or IdleTimeout here: Serve's listener
		// enforces them (internal/conntimeout) without moving the socket's
		// deadlines three times per request.
		MaxRequestBodySize:           MaxBodyBytes,
		DisablePreParseMultipartForm: true,
		NoDefaultContentType:         true,
		CloseOnShutdown:              true,
		HeaderReceived:               markChunked,
		Logger:                       fasthttpLogger{log},
	}
	return s, nil
}

// Drain starts the first phase of a graceful stop: the listener keeps
// accepting and answering, but every response now carries Connection: close,
// so keep-alive clients move off their connections while the server still
// reads them. Shutdown, called after a short delay, then finds no idle
// connection a client may be writing a request into. Safe for concurrent use.
func (s *Server) Drain() { s.draining.Store(true) }

// chunkedMarker is set on requests that arrived with a chunked body. fasthttp
// removes Transfer-Encoding once it has read the body, so the framing is noted
// when the headers arrive, before the body is read.
var chunkedMarker = []byte("Pidnode-Chunked-Body")

// markChunked runs when a request's headers have been read (fasthttp
// Server.HeaderReceived). For a chunked body it asks for the connection to
// close after the response and marks the request for Handler to refuse.
func markChunked(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	if h.ContentLength() == -1 {
		h.SetConnectionClose()
		h.SetBytesKV(chunkedMarker, chunkedMarker)
	}
	return fasthttp.RequestConfig{}
}

// baseURL checks a configured base URL and returns it without trailing '/'.
func baseURL(field, u string) (string, error) {
	t := strings.TrimRight(u, "/")
	loc, ok := appendLocation(nil, []byte(t))
	if !ok || string(loc) != t || strings.ContainsAny(t, "?#") {
		return "", &ConfigError{Pkg: "resolver", Field: field, Value: u, Reason: "must be an absolute http or https URL without query or fragment", Err: ErrBadBaseURL}
	}
	return t, nil
}

// Serve accepts connections on ln until Shutdown; it returns nil after a
// graceful Shutdown. The connections it accepts obey Config's ReadTimeout,
// WriteTimeout, IdleTimeout and HandshakeTimeout.
func (s *Server) Serve(ln net.Listener) error { return s.srv.Serve(conntimeout.Wrap(ln, s.timeouts)) }

// Shutdown stops accepting, lets in-flight requests finish and closes idle
// connections, or gives up when ctx is done (returning ctx.Err()).
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.ShutdownWithContext(ctx) }

// errorHandler answers requests fasthttp could not read: headers over
// MaxHeaderBytes → 431, body over MaxBodyBytes → 413, timeouts → 408, the rest
// (malformed requests) → 400.
func errorHandler(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	var nerr net.Error
	switch {
	case errors.As(err, &small):
		ctx.Error("Request Header Fields Too Large\n", fasthttp.StatusRequestHeaderFieldsTooLarge)
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		ctx.Error("Request Entity Too Large\n", fasthttp.StatusRequestEntityTooLarge)
	case errors.As(err, &nerr) && nerr.Timeout():
		ctx.Error("Request Timeout\n", fasthttp.StatusRequestTimeout)
	default:
		ctx.Error("Bad Request\n", fasthttp.StatusBadRequest)
	}
	// The path is unknown here: an /api answer must not be sniffed, so none is.
	ctx.Response.Header.SetCanonical(hdrNosniff, valNosniff)
}

// fasthttpLogger routes fasthttp's Printf logging to slog at debug level (it
// reports client errors such as broken connections, not server faults).
type fasthttpLogger struct{ l *slog.Logger }

func (f fasthttpLogger) Printf(format string, args ...any) {
	if f.l.Enabled(context.Background(), slog.LevelDebug) {
		f.l.Debug(fmt.Sprintf(format, args...), "component", "resolver")
	}
}

// scratch is per-request working memory, pooled. Nothing in it outlives the
// request: bodies composed here are copied into the response (ctx.Write).
type scratch struct {
	handle []byte // decoded handle as the client wrote it
	key    []byte // storage key
	arena  []byte // decoded parameters
	out    []byte // composed body
	out2   []byte // second buffer (pretty JSON, urlappend target, escaped path)
	loc    []byte // composed Location
	tmp    []byte // raw urlappend target
	link   []byte // Link header value
	date   []byte // Expires header value
	base   []byte // this resolver's base URL for the request (appendBase)
	p      params
	ranges [maxRanges]mediaRange // the Accept header's media ranges
}

func newScratch() *scratch {
	return &scratch{
		handle: make([]byte, 0, 256),
		key:    make([]byte, 0, 256),
		arena:  make([]byte, 0, 512),
		out:    make([]byte, 0, 4096),
		out2:   make([]byte, 0, 1024),
		loc:    make([]byte, 0, 512),
		tmp:    make([]byte, 0, 512),
		link:   make([]byte, 0, 1024),
		date:   make([]byte, 0, 64),
		base:   make([]byte, 0, 128),
	}
}

// maxPooledScratch: buffers grown past this by a large request are dropped
// rather than kept in the pool.
const maxPooledScratch = 64 << 10

func (s *Server) getScratch() *scratch {
	sc := s.pool.Get().(*scratch)
	sc.p.reset()
	sc.arena = sc.arena[:0]
	return sc
}

func (s *Server) putScratch(sc *scratch) {
	for _, b := range [...][]byte{sc.handle, sc.key, sc.arena, sc.out, sc.out2, sc.loc, sc.tmp, sc.link, sc.date, sc.base} {
		if cap(b) > maxPooledScratch {
			return
		}
	}
	s.pool.Put(sc)
}

// splitRequestURI cuts a request target into path, query and fragment. An
// absolute-form target ("http://host/p?q") is reduced to its path.
func splitRequestURI(uri []byte) (path, query, frag []byte) {
	absolute := false
	if len(uri) > 0 && uri[0] != '/' {
		if i := indexSchemeSep(uri); i >= 0 {
			rest := uri[i+3:]
			j := 0
			for j < len(rest) && rest[j] != '/' && rest[j] != '?' && rest[j] != '#' {
				j++
			}
			uri, absolute = rest[j:], true
		}
	}
	end := len(uri)
	for i, c := range uri {
		if c == '?' || c == '#' {
			end = i
			break
		}
	}
	path, uri = uri[:end], uri[end:]
	if len(uri) > 0 && uri[0] == '?' {
		uri = uri[1:]
		end = len(uri)
		for i, c := range uri {
			if c == '#' {
				end = i
				break
			}
		}
		query, uri = uri[:end], uri[end:]
	}
	if len(uri) > 0 && uri[0] == '#' {
		frag = uri[1:]
	}
	if absolute && len(path) == 0 {
		path = slash // "http://host?x" is "/?x"
	}
	return path, query, frag
}

var slash = []byte("/")

func indexSchemeSep(b []byte) int {
	for i := 0; i+2 < len(b) && i < 16; i++ {
		if b[i] == ':' && b[i+1] == '/' && b[i+2] == '/' {
			return i
		}
	}
	return -1
}

// Handler serves one request. It is the fasthttp.RequestHandler of the
// listener; tests and other listeners may call it directly.
//
// A panic (a bug, never expected) is recovered, logged with its stack and
// answered 500, so that one bad record cannot take the listener down
// (fasthttp does not recover).
func (s *Server) Handler(ctx *fasthttp.RequestCtx) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("resolver: panic serving request", "panic", r, "uri", string(ctx.Request.Header.RequestURI()), "stack", string(debug.Stack()))
			ctx.Response.Reset()
			ctx.Error("Internal Server Error\n", fasthttp.StatusInternalServerError)
			ctx.Response.Header.SetCanonical(hdrNosniff, valNosniff)
		}
	}()
	if s.draining.Load() {
		ctx.SetConnectionClose()
	}
	sc := s.getScratch()
	path, query, frag := splitRequestURI(ctx.Request.Header.RequestURI())
	if hasPrefixBytes(path, "/api") {
		// Every API answer, errors and 429s included, is data a browser must
		// not sniff into HTML or script: set before anything can answer.
		ctx.Response.Header.SetCanonical(hdrNosniff, valNosniff)
	}
	// A chunked body is never needed here, and Transfer-Encoding beside a
	// Content-Length is the request-smuggling shape (RFC 9112 §6.3): refuse
	// it. markChunked has already made the connection close after this
	// response, so nothing after the body is read as a second request; a
	// request on a connection that stays open has no marker to look for.
	if ctx.Request.Header.ConnectionClose() && len(ctx.Request.Header.PeekCanonical(chunkedMarker)) > 0 {
		s.sendMessage(ctx, sc, fasthttp.StatusBadRequest, "Bad Request", "Chunked request bodies are not accepted; send Content-Length.", nil, "")
		s.putScratch(sc)
		return
	}
	if s.limiter != nil && string(path) != "/healthz" && s.limited(ctx) {
		s.putScratch(sc)
		return
	}
	switch {
	case len(path) == 0 || path[0] != '/':
		s.sendMessage(ctx, sc, fasthttp.StatusBadRequest, "Bad Request", "The request target is not a path.", nil, "")
	case len(path) == 1:
		s.serveStatic(ctx, sc, s.home, true)
	case string(path) == "/healthz":
		s.serveStatic(ctx, sc, bodyOK, false)
	case string(path) == "/robots.txt":
		s.serveStatic(ctx, sc, bodyRobots, false)
	case string(path) == page.StylePath:
		s.serveStyle(ctx, sc)
	case string(path) == "/favicon.ico":
		if s.allowGet(ctx, sc) {
			ctx.SetStatusCode(fasthttp.StatusNoContent)
		}
	case string(path) == "/lookup":
		s.serveLookup(ctx, sc, query)
	case hasPrefixBytes(path, apiLinksetsPath):
		s.serveLinkset(ctx, sc, path[len(apiLinksetsPath):])
		s.count(sc, kindLinkset, ctx.Response.StatusCode())
	case string(path) == "/api" || hasPrefixBytes(path, "/api/"):
		s.serveAPI(ctx, sc, path, query)
		s.count(sc, kindAPI, ctx.Response.StatusCode())
	default:
		s.serveHandle(ctx, sc, path[1:], query, frag)
		kind := kindRedirect
		if sc.p.noredirect {
			kind = kindNoRedirect
		}
		s.count(sc, kind, ctx.Response.StatusCode())
	}
	s.putScratch(sc)
}

func hasPrefixBytes(b []byte, p string) bool { return len(b) >= len(p) && string(b[:len(p)]) == p }

var (
	bodyOK     = []byte("ok\n")
	bodyRobots = []byte("User-agent: *\nAllow: /api/linksets/\nDisallow: /api/\nDisallow: /lookup\n")
)

// allowGet answers 405 for methods other than GET and HEAD and reports
// whether the request may proceed.
func (s *Server) allowGet(ctx *fasthttp.RequestCtx, sc *scratch) bool {
	if ctx.IsGet() || ctx.IsHead() {
		return true
	}
	ctx.Response.Header.SetCanonical(hdrAllow, valAllowGet)
	s.sendMessage(ctx, sc, fasthttp.StatusMethodNotAllowed, "Method Not Allowed",
		"This resolver answers GET and HEAD requests only.", nil, "")
	return false
}

// serveStatic sends a fixed body: an HTML page, else plain text.
func (s *Server) serveStatic(ctx *fasthttp.RequestCtx, sc *scratch, body []byte, html bool) {
	if !s.allowGet(ctx, sc) {
		return
	}
	if html {
		sendPage(ctx, fasthttp.StatusOK, body)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.Response.Header.SetContentTypeBytes(ctText)
	ctx.Response.SetBodyRaw(body)
}

// serveStyle answers GET page.StylePath with the pages' style sheet, to be kept
// for a year: its name changes with its content.
func (s *Server) serveStyle(ctx *fasthttp.RequestCtx, sc *scratch) {
	if !s.allowGet(ctx, sc) {
		return
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.Response.Header.SetContentTypeBytes(ctCSS)
	ctx.Response.Header.SetCanonical(hdrCC, valImmutable)
	ctx.Response.Header.SetCanonical(hdrNosniff, valNosniff)
	ctx.Response.SetBodyRaw(page.Style)
}

// writeBufferSize is each connection's response writer buffer: a response
// up to this size (status line, headers and body) leaves in one write system
// call. fasthttp's default of 4 KiB would split a page of more than 4 KiB with
// its headers (a ?noredirect page of a record with a long RESOURCE value, say)
// into two writes. A keep-alive connection holds its buffer while it lives,
// so it stays at 8 KiB rather than covering the rare larger page.
const writeBufferSize = 8 << 10
