package outbound

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// ErrDenied: the address a connection would go to is not allowed.
var ErrDenied = errors.New("outbound: address not allowed")

// ErrTooManyRedirects: a request met more redirects than Config.MaxRedirects.
var ErrTooManyRedirects = errors.New("outbound: too many redirects")

// ErrScheme: a URL (or a redirect's Location) is not http or https.
var ErrScheme = errors.New("outbound: only http and https URLs are fetched")

// DeniedError is the error of a refused connection: Addr is the resolved
// address, which is not global and not in an allowed network. It matches
// ErrDenied with errors.Is.
type DeniedError struct {
	Addr netip.Addr
}

func (e *DeniedError) Error() string {
	return fmt.Sprintf("outbound: address %s is not allowed (not a public address; see --outbound-allow)", e.Addr)
}

// Is makes errors.Is(err, ErrDenied) hold.
func (e *DeniedError) Is(target error) bool { return target == ErrDenied }

// Defaults of Config's zero fields.
const (
	DefaultTimeout        = 20 * time.Second
	DefaultMaxRedirects   = 10
	DefaultMaxHeaderBytes = 64 << 10
)

// Config configures NewClient. The zero value is a client that refuses every
// non-public address and follows up to DefaultMaxRedirects redirects.
type Config struct {
	// Allow lists networks a connection may go to although they are not
	// public (tests allow 127.0.0.0/8; an operator may allow an intranet).
	Allow []netip.Prefix
	// Timeout bounds a whole request, from dial to the end of the headers;
	// the caller bounds reading the body through its context. If zero,
	// DefaultTimeout.
	Timeout time.Duration
	// MaxRedirects is how many redirects the client follows; if zero,
	// DefaultMaxRedirects; negative: none (the redirect response itself is
	// returned, as for webhook deliveries).
	MaxRedirects int
	// MaxHeaderBytes bounds a response's headers; if zero,
	// DefaultMaxHeaderBytes.
	MaxHeaderBytes int64
	// UserAgent, if set, is sent with every request that has none.
	UserAgent string
}

// Policy decides which addresses connections may go to. The zero value
// allows only public addresses. Safe for concurrent use.
type Policy struct {
	allow []netip.Prefix
}

// NewPolicy returns the policy allowing public addresses and allow.
func NewPolicy(allow []netip.Prefix) *Policy {
	p := &Policy{}
	for _, a := range allow {
		p.allow = append(p.allow, a.Masked())
	}
	return p
}

// Check returns nil if a connection to addr is allowed, a *DeniedError if
// not.
func (p *Policy) Check(addr netip.Addr) error {
	addr = addr.Unmap()
	for _, a := range p.allow {
		if a.Contains(addr) {
			return nil
		}
	}
	if !Public(addr) {
		return &DeniedError{Addr: addr}
	}
	return nil
}

// Public reports whether addr is a global unicast address that no special
// purpose registry reserves (RFC 6890 and its successors): not loopback,
// private (RFC 1918, fc00::/7), link-local (which holds cloud metadata
// services at 169.254.169.254), shared (100.64.0.0/10), benchmarking,
// documentation, multicast, unspecified or reserved, and for the IPv6
// forms that embed an IPv4 address (mapped, NAT64, 6to4) the embedded
// address is judged.
func Public(addr netip.Addr) bool {
	addr = addr.Unmap()
	if !addr.IsValid() || !addr.IsGlobalUnicast() || addr.IsPrivate() {
		return false
	}
	for _, p := range reserved {
		if p.Contains(addr) {
			return false
		}
	}
	if addr.Is6() {
		b := addr.As16()
		switch {
		case nat64.Contains(addr):
			return Public(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(addr):
			return Public(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	return true
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	reserved  = []netip.Prefix{
		netip.MustParsePrefix("0.0.0.0/8"),
		netip.MustParsePrefix("100.64.0.0/10"),
		netip.MustParsePrefix("192.0.0.0/24"),
		netip.MustParsePrefix("192.0.2.0/24"),
		netip.MustParsePrefix("192.88.99.0/24"),
		netip.MustParsePrefix("198.18.0.0/15"),
		netip.MustParsePrefix("198.51.100.0/24"),
		netip.MustParsePrefix("203.0.113.0/24"),
		netip.MustParsePrefix("240.0.0.0/4"),
		netip.MustParsePrefix("64:ff9b:1::/48"),
		netip.MustParsePrefix("100::/64"),
		netip.MustParsePrefix("2001::/23"),
		netip.MustParsePrefix("2001:db8::/32"),
		netip.MustParsePrefix("3fff::/20"),
		netip.MustParsePrefix("5f00::/16"),
	}
)

// control is the dialer's Control: it runs after DNS resolution, for every
// address a connection attempt goes to.
func (p *Policy) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("outbound: dialing %q: %w", address, err)
	}
	return p.Check(ap.Addr())
}

// NewClient returns an HTTP client under cfg's policy. Every connection's
// address is checked after resolution; userinfo in URLs, Authorization and
// Cookie headers are never sent; the environment's proxy settings are
// ignored (a proxy would hide the address from the check).
func NewClient(cfg Config) *http.Client {
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	maxHeader := cfg.MaxHeaderBytes
	if maxHeader <= 0 {
		maxHeader = DefaultMaxHeaderBytes
	}
	redirects := cfg.MaxRedirects
	if redirects == 0 {
		redirects = DefaultMaxRedirects
	}
	policy := NewPolicy(cfg.Allow)
	dialer := &net.Dialer{Timeout: min(timeout, 10*time.Second), Control: policy.control}
	base := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		TLSHandshakeTimeout:    min(timeout, 10*time.Second),
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: maxHeader,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        30 * time.Second,
		ForceAttemptHTTP2:      true,
	}
	return &http.Client{
		Transport: &transport{base: base, ua: cfg.UserAgent},
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if redirects < 0 {
				return http.ErrUseLastResponse
			}
			if len(via) > redirects {
				return ErrTooManyRedirects
			}
			return checkScheme(req.URL)
		},
	}
}

// transport strips credentials and sets the User-Agent before base sends a
// request.
type transport struct {
	base *http.Transport
	ua   string
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := checkScheme(req.URL); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	r := req.Clone(req.Context())
	r.URL.User = nil
	r.Header.Del("Authorization")
	r.Header.Del("Cookie")
	r.Header.Del("Proxy-Authorization")
	if t.ua != "" && r.Header.Get("User-Agent") == "" {
		r.Header.Set("User-Agent", t.ua)
	}
	return t.base.RoundTrip(r)
}

// CloseIdleConnections closes the client's idle connections.
func (t *transport) CloseIdleConnections() { t.base.CloseIdleConnections() }

func checkScheme(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w: %q", ErrScheme, u.Scheme)
	}
	return nil
}

// Error classes of Classify.
const (
	ClassDNS       = "dns"
	ClassConnect   = "connect"
	ClassTLS       = "tls"
	ClassTimeout   = "timeout"
	ClassDenied    = "denied"
	ClassRedirects = "redirects"
	ClassScheme    = "scheme"
	ClassOther     = "other"
)

// Classify names the class of a request's error: a DNS failure, a refused
// or unreachable connection, a TLS failure, a timeout, a denied address,
// too many redirects, a non-http(s) URL, or other (a malformed response, a
// connection reset mid-response). nil is "".
func Classify(err error) string {
	if err == nil {
		return ""
	}
	var (
		dnsErr  *net.DNSError
		certErr *tls.CertificateVerificationError
		hostErr x509.HostnameError
		authErr x509.UnknownAuthorityError
		invErr  x509.CertificateInvalidError
		recErr  tls.RecordHeaderError
		alert   tls.AlertError
		opErr   *net.OpError
		netErr  net.Error
	)
	switch {
	case errors.Is(err, ErrDenied):
		return ClassDenied
	case errors.Is(err, ErrTooManyRedirects):
		return ClassRedirects
	case errors.Is(err, ErrScheme):
		return ClassScheme
	case errors.As(err, &dnsErr):
		if dnsErr.IsTimeout {
			return ClassTimeout
		}
		return ClassDNS
	case errors.As(err, &certErr), errors.As(err, &hostErr), errors.As(err, &authErr),
		errors.As(err, &invErr), errors.As(err, &recErr), errors.As(err, &alert):
		return ClassTLS
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return ClassTimeout
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return ClassConnect
	}
	return ClassOther
}
