package admin

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"pidnode/internal/cfgerr"
	"pidnode/internal/route"
)

// Defaults NewListener uses for zero ListenerConfig fields.
const (
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultMaxHeaderBytes    = 16 << 10
)

// ListenerConfig configures NewListener. Zero values select the documented
// defaults.
type ListenerConfig struct {
	// Handler answers the requests: Server.Handler. Required.
	Handler http.Handler
	// ReadHeaderTimeout bounds reading a request's line and headers. If zero,
	// DefaultReadHeaderTimeout.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included (bulk bodies
	// are the largest). If zero, DefaultReadTimeout.
	ReadTimeout time.Duration
	// WriteTimeout bounds writing a response, a backup download included. If
	// zero, DefaultWriteTimeout.
	WriteTimeout time.Duration
	// IdleTimeout is how long a keep-alive connection may wait for its next
	// request. If zero, DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxHeaderBytes caps the request line plus headers (431 beyond; net/http
	// allows 4 KiB of slack). If zero, DefaultMaxHeaderBytes.
	MaxHeaderBytes int
	// Logger receives net/http's own error lines (failed TLS handshakes,
	// accept errors) at warn level. Nil discards.
	Logger *slog.Logger
}

// Listener is the admin API's HTTP server: net/http with the limits of
// ListenerConfig and two kinds of connection closing net/http does not do by
// itself (see closeConns): after a chunked request body, and on every
// response once Drain was called. Its methods are safe for concurrent use.
type Listener struct {
	hs       *http.Server
	draining atomic.Bool
	// drained is closed by Drain and Shutdown: the change feed's streams,
	// which would otherwise hold Shutdown until its deadline, end on it
	// (route.Draining), and their clients reconnect with Last-Event-ID.
	drained   chan struct{}
	drainOnce sync.Once
}

// NewListener validates cfg and fills its defaults. Nothing is bound or
// served until Serve.
func NewListener(cfg ListenerConfig) (*Listener, error) {
	if cfg.Handler == nil {
		return nil, cfgerr.Required("admin", "Handler", ErrConfig)
	}
	for _, l := range []struct {
		name string
		v    int64
	}{
		{"ReadHeaderTimeout", int64(cfg.ReadHeaderTimeout)}, {"ReadTimeout", int64(cfg.ReadTimeout)},
		{"WriteTimeout", int64(cfg.WriteTimeout)}, {"IdleTimeout", int64(cfg.IdleTimeout)},
		{"MaxHeaderBytes", int64(cfg.MaxHeaderBytes)},
	} {
		if l.v < 0 {
			return nil, &ConfigError{Pkg: "admin", Field: l.name, Value: strconv.FormatInt(l.v, 10), Reason: "must not be negative", Err: ErrConfig}
		}
	}
	orDefault := func(d, def time.Duration) time.Duration {
		if d == 0 {
			return def
		}
		return d
	}
	maxHeader := cfg.MaxHeaderBytes
	if maxHeader == 0 {
		maxHeader = DefaultMaxHeaderBytes
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	l := &Listener{drained: make(chan struct{})}
	drainCtx := route.WithDraining(context.Background(), l.drained)
	l.hs = &http.Server{
		BaseContext:       func(net.Listener) context.Context { return drainCtx },
		Handler:           closeConns(cfg.Handler, &l.draining),
		ReadHeaderTimeout: orDefault(cfg.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		ReadTimeout:       orDefault(cfg.ReadTimeout, DefaultReadTimeout),
		WriteTimeout:      orDefault(cfg.WriteTimeout, DefaultWriteTimeout),
		IdleTimeout:       orDefault(cfg.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes:    maxHeader,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	return l, nil
}

// Serve answers requests on connections accepted from ln until Shutdown, and
// closes ln. It returns nil after Shutdown, or the error that stopped
// accepting. For HTTPS, pass a listener from tls.NewListener.
func (l *Listener) Serve(ln net.Listener) error {
	if err := l.hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops accepting, closes idle connections and waits for in-flight
// requests to finish, or gives up when ctx is done (returning ctx.Err()).
// Open event streams end at once.
func (l *Listener) Shutdown(ctx context.Context) error {
	l.endStreams()
	return l.hs.Shutdown(ctx)
}

func (l *Listener) endStreams() { l.drainOnce.Do(func() { close(l.drained) }) }

// Drain makes every later response close its connection while the listener
// keeps accepting: called some time before Shutdown, it moves keep-alive
// clients to new connections (elsewhere, once /readyz says 503) instead of
// leaving one writing a request into an idle connection the shutdown closes.
// Open event streams end, and new ones are refused with 503.
func (l *Listener) Drain() {
	l.draining.Store(true)
	l.endStreams()
}

// closeConns closes the connection after any request whose body came chunked,
// and after every request once draining is set. net/http drops a
// Content-Length that arrives beside Transfer-Encoding and keeps the
// connection open, so a request smuggled after such a body would be served
// next; RFC 9112 §6.3 asks the server to close. (SetKeepAlivesEnabled(false)
// is no substitute for draining: it closes idle connections at once, which is
// the race draining avoids.)
func closeConns(h http.Handler, draining *atomic.Bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TransferEncoding) > 0 || draining.Load() {
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r)
	})
}
