package hdldns

import (
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	"pidnode/cache"
	"pidnode/handlev"
)

// Defaults New fills in for zero Config fields.
const (
	DefaultUDPSize = 1232 // DNS flag day 2020: no IP fragmentation on common paths
	DefaultRefresh = time.Hour
	DefaultRetry   = 10 * time.Minute
	DefaultExpire  = 14 * 24 * time.Hour // RFC 1912 §2.2
	DefaultMinimum = time.Minute         // negative-caching TTL (RFC 2308 §4)
	DefaultTTL     = time.Hour           // TTL of the apex SOA and NS RRsets
	DefaultSerial  = 1

	DefaultReadTimeout  = 2 * time.Second // miekg/dns's own default
	DefaultWriteTimeout = 2 * time.Second
	DefaultMaxTCPConns  = 1024

	DefaultRRLSlip      = 2     // BIND's default: every second dropped response slips
	DefaultRRLTableSize = 65536 // source prefixes tracked at most
	DefaultRRLIPv4Bits  = 24
	DefaultRRLIPv6Bits  = 56

	// MaxRRsPerAnswer bounds the DNS.* values parsed and sent for one query.
	MaxRRsPerAnswer = 64
)

// Zone maps a DNS zone to the handle prefix served under it.
type Zone struct {
	// Name is the zone, e.g. "hdl.example.org" (a trailing dot is optional; ASCII
	// case does not matter).
	Name string
	// Prefix is the handle prefix, e.g. "21.T12345"; Namer must serve it.
	Prefix string
}

// Config configures a Server. Zero values are replaced by the documented
// defaults; New rejects what cannot be served.
type Config struct {
	// Cache is the read path every answer comes from. Required.
	Cache *cache.Cache
	// Namer turns handles into storage keys. Required.
	Namer *handlev.Namer
	// Counter, if set, counts every answered lookup of a found record by its
	// storage key (resolution statistics, flushed by admin).
	Counter *cache.Counter
	// Zones are the zones served, at least one; the longest matching zone wins.
	Zones []Zone

	// SOA of every zone. MName defaults to NS[0], else "ns1.<zone>"; RName (the
	// mailbox, "." for "@") to "hostmaster.<zone>". Both are absolute names
	// (a trailing dot is added if missing). Serial defaults to DefaultSerial.
	// The durations are whole seconds; zero means the Default* constant.
	MName   string
	RName   string
	Serial  uint32
	Refresh time.Duration
	Retry   time.Duration
	Expire  time.Duration
	// Minimum is the SOA MINIMUM field: the TTL of negative answers
	// (RFC 2308; the SOA in a negative answer has TTL min(TTL, Minimum)).
	Minimum time.Duration
	// TTL is the TTL of the apex SOA and NS RRsets.
	TTL time.Duration
	// NS are the name servers of every zone (the apex NS RRset). If empty, the
	// RRset is the MName alone.
	NS []string

	// RRLRate is the UDP response-rate limit: responses per second per source
	// prefix (/RRLIPv4Bits, /RRLIPv6Bits). Zero turns rate limiting off.
	RRLRate int
	// RRLBurst is how many responses a prefix may get at once; if zero, RRLRate.
	RRLBurst int
	// RRLSlip: every RRLSlip-th response over the limit is sent as a minimal
	// TC=1 reply instead of being dropped. Zero means DefaultRRLSlip; negative
	// means never (drop all).
	RRLSlip int
	// RRLTableSize bounds the number of source prefixes tracked; if zero,
	// DefaultRRLTableSize.
	RRLTableSize int
	// RRLIPv4Bits and RRLIPv6Bits are the source prefix lengths the limit
	// applies to; if zero, 24 and 56.
	RRLIPv4Bits int
	RRLIPv6Bits int

	// UDPSize is the largest UDP response sent and the EDNS0 size advertised;
	// if zero, DefaultUDPSize (1232). It must be between 512 and 65535.
	UDPSize int
	// ReadTimeout and WriteTimeout are the per-read and per-write deadlines of
	// the listeners (TCP connections: first query; idle connections close after
	// miekg's 8 s idle timeout). If zero, 2 s.
	ReadTimeout  time.Duration
	WriteTimeout time.Duration

	// MaxTCPConns is the number of TCP connections served at once over all
	// TCP listeners; more are closed when accepted. If zero,
	// DefaultMaxTCPConns.
	MaxTCPConns int
	// MaxTCPConnsPerSource is the number of TCP connections one source (an
	// IPv4 address, an IPv6 /64) may hold; more are closed when accepted.
	// Above three quarters of MaxTCPConns, sources holding a quarter of it
	// are refused too, so the last slots stay for sources holding few
	// (internal/connlimit). If zero, connlimit.DefaultPerSource(MaxTCPConns):
	// a sixteenth, at least 8.
	MaxTCPConnsPerSource int

	// MemoBytes bounds the memory of the memo of parsed DNS.* values (per
	// cache entry and type, so that a value is parsed once, not per query).
	// If zero, DefaultMemoBytes.
	MemoBytes int64

	// Logger receives listener errors and failed loads; nil discards.
	Logger *slog.Logger
	// Now is the clock for absolute TTLs and rate limiting; nil means time.Now.
	Now func() time.Time
}

// zone is a validated Zone with its pre-built apex RRs. The RRs are shared by
// all responses and never modified after New.
type zone struct {
	name   string // canonical: lower case, fully qualified ("hdl.example.org.")
	prefix string // handle prefix as configured
	soa    *dns.SOA
	negSOA *dns.SOA // the SOA for authority sections: TTL min(TTL, Minimum)
	ns     []dns.RR
}

func seconds(d, def time.Duration) uint32 {
	if d <= 0 {
		d = def
	}
	s := d / time.Second
	if s > 1<<31-1 {
		s = 1<<31 - 1
	}
	return uint32(s)
}

// validZoneName reports whether s (canonical, fully qualified) is a plain host
// name we accept as a zone.
func validZoneName(s string) bool {
	if s == "." || len(s) > 254 {
		return false
	}
	if _, ok := dns.IsDomainName(s); !ok {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return !strings.Contains(s, "..") && s[0] != '.'
}

func fqdnLower(s string) string { return dns.Fqdn(strings.ToLower(strings.TrimSpace(s))) }

// buildZones validates cfg.Zones and the SOA/NS settings, and pre-builds the apex RRs.
func buildZones(cfg *Config) ([]zone, error) {
	if len(cfg.Zones) == 0 {
		return nil, configError("Zones", "", "at least one zone is required")
	}
	ttl := seconds(cfg.TTL, DefaultTTL)
	minimum := seconds(cfg.Minimum, DefaultMinimum)
	serial := cfg.Serial
	if serial == 0 {
		serial = DefaultSerial
	}
	var nsNames []string
	for i, n := range cfg.NS {
		f := fqdnLower(n)
		if _, ok := dns.IsDomainName(f); !ok || f == "." {
			return nil, configError("NS["+strconv.Itoa(i)+"]", n, "not a domain name")
		}
		nsNames = append(nsNames, f)
	}
	checkName := func(field, v string) (string, error) {
		if v == "" {
			return "", nil
		}
		f := dns.Fqdn(strings.TrimSpace(v))
		if _, ok := dns.IsDomainName(f); !ok {
			return "", configError(field, v, "not a domain name")
		}
		return f, nil
	}
	mname, err := checkName("MName", cfg.MName)
	if err != nil {
		return nil, err
	}
	rname, err := checkName("RName", cfg.RName)
	if err != nil {
		return nil, err
	}

	zones := make([]zone, 0, len(cfg.Zones))
	seen := map[string]bool{}
	for i, zc := range cfg.Zones {
		field := "Zones[" + strconv.Itoa(i) + "]"
		name := fqdnLower(zc.Name)
		if !validZoneName(name) {
			return nil, configError(field+".Name", zc.Name, "not a host name (letters, digits, '-', '_', dots; not the root)")
		}
		if seen[name] {
			return nil, configError(field+".Name", zc.Name, "zone listed twice")
		}
		seen[name] = true
		prefix := strings.TrimSpace(zc.Prefix)
		if prefix == "" || strings.Contains(prefix, "/") {
			return nil, configError(field+".Prefix", zc.Prefix, "not a handle prefix")
		}
		if cfg.Namer != nil && !cfg.Namer.Served([]byte(prefix)) {
			return nil, configError(field+".Prefix", zc.Prefix, "prefix not served by the Namer")
		}
		z := zone{name: name, prefix: prefix}
		zm, zr := mname, rname
		if zm == "" {
			if len(nsNames) > 0 {
				zm = nsNames[0]
			} else {
				zm = "ns1." + name
			}
		}
		if zr == "" {
			zr = "hostmaster." + name
		}
		z.soa = &dns.SOA{
			Hdr:     dns.RR_Header{Name: name, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: ttl},
			Ns:      zm,
			Mbox:    zr,
			Serial:  serial,
			Refresh: seconds(cfg.Refresh, DefaultRefresh),
			Retry:   seconds(cfg.Retry, DefaultRetry),
			Expire:  seconds(cfg.Expire, DefaultExpire),
			Minttl:  minimum,
		}
		neg := *z.soa
		neg.Hdr.Ttl = min(ttl, minimum)
		z.negSOA = &neg
		names := nsNames
		if len(names) == 0 {
			names = []string{zm}
		}
		for _, n := range names {
			z.ns = append(z.ns, &dns.NS{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: ttl}, Ns: n})
		}
		zones = append(zones, z)
	}
	// Longest zone first, so that the most specific zone wins.
	for i := 1; i < len(zones); i++ {
		for j := i; j > 0 && len(zones[j].name) > len(zones[j-1].name); j-- {
			zones[j], zones[j-1] = zones[j-1], zones[j]
		}
	}
	return zones, nil
}
