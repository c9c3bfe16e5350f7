package hdl

import (
	"crypto/rsa"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"strconv"
	"time"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/handlev/hsmsg"
)

// Defaults New uses for zero Config fields.
const (
	DefaultReadTimeout     = 10 * time.Second
	DefaultHeaderTimeout   = 2 * time.Second
	DefaultWriteTimeout    = 10 * time.Second
	DefaultMaxConns        = 1024
	DefaultMaxPendingBytes = 4 << 20
	DefaultDescription     = "pidnode"
	DefaultPort            = 2641
	DefaultSignedWait      = time.Second
)

// Config configures a Server. Zero values select the documented defaults.
type Config struct {
	// Cache answers every resolution. Required.
	Cache *cache.Cache
	// Namer maps handles to storage keys and says which prefixes are served. Required.
	Namer *handlev.Namer
	// Counter, if set, counts every resolution of a found record by its
	// storage key (resolution statistics, flushed by admin).
	Counter *cache.Counter

	// Site describes this node in its HS_SITE value (GET_SITE_INFO, pidnode siteinfo).
	Site SiteConfig

	// SignKey signs replies to certified (CT) requests and its public half is
	// published in the HS_SITE value. If nil, CT requests get RC 2 and the
	// HS_SITE's public key is empty, which the CNRI client refuses.
	SignKey *rsa.PrivateKey

	// SignedRate is the sustained number of signed replies (to certified, CT,
	// requests) per second one source (an IPv4 address, an IPv6 /64) may
	// get, and SignedBurst how many at once (if zero, 2×SignedRate): an
	// RSA signature costs far more CPU than a plain reply, and anyone may
	// ask for one. A CT request beyond the budget waits for its turn, up to
	// SignedWait, and is then answered signed; one whose turn would come
	// later gets RC 3 (SERVER_TOO_BUSY), unsigned (pace.go says why). If
	// SignedRate is zero, signed replies are not limited.
	SignedRate  float64
	SignedBurst int
	// SignedWait is how long a CT request beyond its source's SignedRate
	// budget may wait for its turn. If zero, DefaultSignedWait is used.
	SignedWait time.Duration

	// ReadTimeout bounds reading one TCP request (from accept to its last
	// byte) and how long a partial UDP request (TC) waits for its other
	// pieces. If zero, DefaultReadTimeout is used.
	ReadTimeout time.Duration
	// HeaderTimeout bounds how long a TCP connection may stay open before its
	// request's envelope has arrived: a connection that sends nothing holds
	// its slot this long, not ReadTimeout. Capped at ReadTimeout. If zero,
	// DefaultHeaderTimeout is used.
	HeaderTimeout time.Duration
	// WriteTimeout bounds writing one TCP reply. If zero, DefaultWriteTimeout is used.
	WriteTimeout time.Duration
	// MaxConns is the number of TCP connections served at once; more are closed
	// when accepted. If zero, DefaultMaxConns is used.
	MaxConns int
	// MaxConnsPerSource is the number of TCP connections one source (an IPv4
	// address, an IPv6 /64) may hold; more are closed when accepted. Above
	// three quarters of MaxConns, sources holding a quarter of it are refused
	// too, so the last slots stay for sources holding few (internal/connlimit).
	// If zero, connlimit.DefaultPerSource(MaxConns): a sixteenth, at least 8.
	MaxConnsPerSource int
	// MaxPendingBytes bounds the memory held by partial UDP requests; pieces that
	// would exceed it are dropped. If zero, DefaultMaxPendingBytes is used.
	MaxPendingBytes int

	// Logger receives errors (never one line per request). If nil, logs are discarded.
	Logger *slog.Logger
	// Now is the clock for ExpirationTime. If nil, time.Now is used.
	Now func() time.Time
}

// SiteConfig is what the node's HS_SITE value says about it.
type SiteConfig struct {
	// Serial is the HS_SITE serial number; raise it whenever the site changes.
	// If zero, 1 is used.
	Serial uint16
	// ServerID is this server's number within the site. If zero, 1 is used.
	ServerID uint32
	// Address is where clients reach the server (the public address, not 0.0.0.0).
	// If invalid or unspecified, 127.0.0.1 is used.
	Address netip.Addr
	// Port is the TCP and UDP port published when Interfaces is nil. If zero,
	// DefaultPort (2641) is used.
	Port int
	// Interfaces, if non-nil, replaces the default pair {query, TCP, Port} and
	// {query, UDP, Port}, e.g. to add the HTTP resolver ({hsmsg.IfQuery,
	// hsmsg.ProtoHTTP, 8000}).
	Interfaces []hsmsg.Interface
	// Description is the "desc" attribute. If empty, DefaultDescription is used.
	Description string
	// Attributes are further name/value attributes, after "desc".
	Attributes []hsmsg.Attribute
	// NotPrimary clears the primary flag (a mirror of another site).
	NotPrimary bool
}

// BuildSite returns the HS_SITE value of a node configured with cfg, publishing pub
// (nil: no key).
func BuildSite(cfg SiteConfig, pub *rsa.PublicKey) hsmsg.Site {
	serial := cfg.Serial
	if serial == 0 {
		serial = 1
	}
	id := cfg.ServerID
	if id == 0 {
		id = 1
	}
	addr := cfg.Address
	if !addr.IsValid() || addr.IsUnspecified() {
		addr = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	port := cfg.Port
	if port == 0 {
		port = DefaultPort
	}
	ifs := cfg.Interfaces
	if ifs == nil {
		ifs = []hsmsg.Interface{
			{Type: hsmsg.IfQuery, Protocol: hsmsg.ProtoTCP, Port: uint32(port)},
			{Type: hsmsg.IfQuery, Protocol: hsmsg.ProtoUDP, Port: uint32(port)},
		}
	}
	desc := cfg.Description
	if desc == "" {
		desc = DefaultDescription
	}
	var key []byte
	if pub != nil {
		key = hsmsg.AppendRSAPublicKey(nil, pub)
	}
	return hsmsg.Site{
		DataFormatVersion: hsmsg.SiteDataFormatVersion,
		Major:             hsmsg.MajorVersion,
		Minor:             hsmsg.MinorVersion,
		Serial:            serial,
		Primary:           !cfg.NotPrimary,
		HashOption:        hashByAll,
		Attributes:        append([]hsmsg.Attribute{{Name: "desc", Value: desc}}, cfg.Attributes...),
		Servers: []hsmsg.Server{{
			ID:         id,
			Address:    hsmsg.AddrBytes(addr),
			PublicKey:  key,
			Interfaces: append([]hsmsg.Interface(nil), ifs...),
		}},
	}
}

func (cfg *Config) validate() error {
	if cfg.Cache == nil {
		return configError("Cache", "", "required")
	}
	if cfg.Namer == nil {
		return configError("Namer", "", "required")
	}
	if !(cfg.SignedRate >= 0) || math.IsInf(cfg.SignedRate, 0) {
		return configError("SignedRate", fmt.Sprint(cfg.SignedRate), "must be finite and not negative")
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"SignedBurst", int64(cfg.SignedBurst)}, {"ReadTimeout", int64(cfg.ReadTimeout)}, {"WriteTimeout", int64(cfg.WriteTimeout)},
		{"HeaderTimeout", int64(cfg.HeaderTimeout)}, {"SignedWait", int64(cfg.SignedWait)}, {"MaxConns", int64(cfg.MaxConns)},
		{"MaxConnsPerSource", int64(cfg.MaxConnsPerSource)}, {"MaxPendingBytes", int64(cfg.MaxPendingBytes)},
	} {
		if f.v < 0 {
			return configError(f.name, strconv.FormatInt(f.v, 10), "must not be negative")
		}
	}
	if p := cfg.Site.Port; p < 0 || p > 65535 {
		return configError("Site.Port", strconv.Itoa(p), "must be a port number, 0 to 65535")
	}
	if k := cfg.SignKey; k != nil {
		if err := k.Validate(); err != nil {
			return configError("SignKey", "", "must be a valid RSA key: "+err.Error())
		}
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	if cfg.HeaderTimeout == 0 {
		cfg.HeaderTimeout = DefaultHeaderTimeout
	}
	cfg.HeaderTimeout = min(cfg.HeaderTimeout, cfg.ReadTimeout)
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.SignedWait == 0 {
		cfg.SignedWait = DefaultSignedWait
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.MaxPendingBytes == 0 {
		cfg.MaxPendingBytes = DefaultMaxPendingBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return nil
}
