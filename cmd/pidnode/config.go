package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"pidnode/admin"
	"pidnode/cluster"
	"pidnode/resolver"
)

// Config is everything `pidnode serve` reads. Defaults come first, then the TOML
// file (--config / PIDNODE_CONFIG), then PIDNODE_* environment variables, then
// flags: flags beat the environment, which beats the file (docs/product.md §9.1).
type Config struct {
	Data            string   `toml:"data"`
	ResolverAddr    string   `toml:"resolver_addr"`
	AdminAddr       string   `toml:"admin_addr"`
	DNSAddr         string   `toml:"dns_addr"`
	HdlAddr         string   `toml:"hdl_addr"`
	Prefix          string   `toml:"prefix"`
	TestPrefix      string   `toml:"test_prefix"`
	ExtraPrefix     []string `toml:"extra_prefix"`
	Svc             string   `toml:"svc"`
	OperatorKeyFile string   `toml:"operator_key_file"`
	ReadyFile       string   `toml:"ready_file"`
	Demo            bool     `toml:"demo"`
	DNSZone         []string `toml:"dns_zone"`
	Model           string   `toml:"model"`
	PolicyFile      string   `toml:"policy_file"`
	CacheBytes      ByteSize `toml:"cache_bytes"`
	CacheEntries    int      `toml:"cache_entries"`
	TLSCert         string   `toml:"tls_cert"`
	TLSKey          string   `toml:"tls_key"`
	AdminTLSCert    string   `toml:"admin_tls_cert"`
	AdminTLSKey     string   `toml:"admin_tls_key"`
	HdlKey          string   `toml:"hdl_key"`
	PublicURL       string   `toml:"public_url"`
	ProxyURL        string   `toml:"proxy_url"`
	GeoIPDB         string   `toml:"geoip_db"`
	OutboundAllow   []string `toml:"outbound_allow"`
	LogLevel        string   `toml:"log_level"`
	ShutdownTimeout Duration `toml:"shutdown_timeout"`
	ShutdownDelay   Duration `toml:"shutdown_delay"`
	AdminInsecure   bool     `toml:"admin_insecure"`
	DNSNS           []string `toml:"dns_ns"`
	DNSRName        string   `toml:"dns_rname"`
	DNSRRLRate      int      `toml:"dns_rrl_rate"`
	DNSRRLBurst     int      `toml:"dns_rrl_burst"`
	DNSConnsPerSrc  int      `toml:"dns_max_conns_per_source"`
	HdlConnsPerSrc  int      `toml:"hdl_max_conns_per_source"`
	// The resolver's and the admin listener's connections (fronts.go).
	ResolverReadTimeout Duration `toml:"resolver_read_timeout"`
	ResolverConnsPerSrc int      `toml:"resolver_max_conns_per_source"`
	AdminHeaderTimeout  Duration `toml:"admin_header_timeout"`
	AdminConnsPerSrc    int      `toml:"admin_max_conns_per_source"`
	HdlSignedRate       float64  `toml:"hdl_signed_rate"`
	HdlSignedBurst      int      `toml:"hdl_signed_burst"`
	AdminRate           float64  `toml:"admin_rate"`
	AdminBurst          int      `toml:"admin_burst"`
	ResolverRate        float64  `toml:"resolver_rate"`
	ResolverBurst       int      `toml:"resolver_burst"`
	StatsInterval       Duration `toml:"stats_interval"`
	StatsRetention      int      `toml:"stats_retention"`
	// Cluster mode (docs/product.md §10): empty EtcdEndpoints is a single node.
	EtcdEndpoints []string `toml:"etcd_endpoints"`
	// EtcdShards are "NAME=URL,URL" entries: the etcd clusters of a cluster
	// that spreads its namespaces over several, the registry's first.
	EtcdShards       []string `toml:"etcd_shard"`
	EtcdPrefix       string   `toml:"etcd_prefix"`
	NodeName         string   `toml:"node_name"`
	EtcdCert         string   `toml:"etcd_cert"`
	EtcdKey          string   `toml:"etcd_key"`
	EtcdCA           string   `toml:"etcd_ca"`
	EtcdUsername     string   `toml:"etcd_username"`
	EtcdPasswordFile string   `toml:"etcd_password_file"`
	// The link checker (linkcheck.go).
	LinkcheckConfig
	// Institutional sign-in (oidc.go).
	OIDCConfig
	// demoLinkcheckOff: --demo turned the link checker off, as no
	// --linkcheck-interval was given (the banner says so).
	demoLinkcheckOff bool
}

// Duration is a time.Duration that reads "10s"-style text from TOML.
type Duration struct{ time.Duration }

// UnmarshalText implements encoding.TextUnmarshaler for the TOML decoder.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

func defaultConfig() Config {
	return Config{
		Data:           "./data",
		ResolverAddr:   "127.0.0.1:8000",
		AdminAddr:      "127.0.0.1:8001",
		DNSAddr:        "127.0.0.1:8053",
		HdlAddr:        "127.0.0.1:2641",
		Prefix:         "21.12345",
		TestPrefix:     "21.T12345",
		Svc:            "svc",
		DNSRRLRate:     50,
		DNSRRLBurst:    100,
		DNSConnsPerSrc: 64,
		HdlConnsPerSrc: 64,
		// HTTP clients behind one NAT or proxy, and write clients with many
		// requests in flight, open more connections than DNS or native
		// clients.
		ResolverReadTimeout: Duration{resolver.DefaultReadTimeout},
		ResolverConnsPerSrc: 256,
		AdminHeaderTimeout:  Duration{admin.DefaultReadHeaderTimeout},
		AdminConnsPerSrc:    256,
		HdlSignedRate:       20,
		ProxyURL:            "https://hdl.handle.net",
		LogLevel:            "info",
		ShutdownTimeout:     Duration{15 * time.Second},
		ShutdownDelay:       Duration{time.Second},
		StatsInterval:       Duration{10 * time.Second},
		// A year and a month of per-identifier days: enough for annual
		// reports (docs/product.md §10 Statistics).
		StatsRetention: 400,
		// Identifier writes per second per key (a bulk item counts as one):
		// a small share of what one node commits with fsync (bench/results
		// has the figure), so twenty keys at full rate still fit, while 100/s
		// (360,000 an hour) is far beyond an SNAA's registrations.
		AdminRate:       100,
		EtcdPrefix:      "/pidnode/",
		NodeName:        hostName(),
		LinkcheckConfig: defaultLinkcheckConfig(),
	}
}

// hostName is the default --node-name: the host name, or "pidnode" where the
// system has none.
func hostName() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "pidnode"
}

// setting is one configurable knob: its flag name, environment variable,
// help text and how to apply a textual value to the Config.
type setting struct {
	name string // flag name; env is PIDNODE_ + upper(name with - → _)
	help string
	list bool // repeatable flag; comma-separated in the environment
	// reset, for lists, forgets the values of a lower-precedence source.
	reset func()
	bool  bool // boolean flag
	set   func(string) error
	get   func() string // current value, for --help and the README reference
}

func (s setting) env() string {
	return "PIDNODE_" + strings.ToUpper(strings.ReplaceAll(s.name, "-", "_"))
}

func (c *Config) settings() []setting {
	str := func(name, help string, p *string) setting {
		return setting{name: name, help: help, set: func(v string) error { *p = v; return nil }, get: func() string { return *p }}
	}
	list := func(name, help string, p *[]string) setting {
		return setting{name: name, help: help, list: true,
			reset: func() { *p = nil },
			set:   func(v string) error { *p = append(*p, v); return nil },
			get:   func() string { return strings.Join(*p, ",") }}
	}
	rate := func(name, help string, p *float64) setting {
		return setting{name: name, help: help,
			set: func(v string) error {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
					return fmt.Errorf("want a non-negative number, got %q", v)
				}
				*p = f
				return nil
			},
			get: func() string { return strconv.FormatFloat(*p, 'g', -1, 64) }}
	}
	count := func(name, help string, p *int) setting {
		return setting{name: name, help: help,
			set: func(v string) error {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 {
					return fmt.Errorf("want a non-negative integer, got %q", v)
				}
				*p = n
				return nil
			},
			get: func() string { return strconv.Itoa(*p) }}
	}
	timeout := func(name, help string, p *Duration) setting {
		return setting{name: name, help: help,
			set: func(v string) error {
				var d Duration
				if err := d.UnmarshalText([]byte(v)); err != nil || d.Duration <= 0 {
					return fmt.Errorf("want a positive duration such as 10s, got %q", v)
				}
				*p = d
				return nil
			},
			get: func() string { return p.String() }}
	}
	return append([]setting{
		str("data", "data directory; the bbolt file pidnode.db lives inside", &c.Data),
		str("resolver-addr", "public HTTP resolver listen address (host:port; port 0 picks one; empty = off)", &c.ResolverAddr),
		str("admin-addr", "admin API listen address (empty = off)", &c.AdminAddr),
		str("dns-addr", "DNS listen address, UDP and TCP (empty = off)", &c.DNSAddr),
		str("hdl-addr", "native Handle protocol listen address, TCP and UDP (empty = off)", &c.HdlAddr),
		str("prefix", "production prefix (the /pid/v2 base writes under it)", &c.Prefix),
		str("test-prefix", "test prefix (the /testpid/v2 base writes under it)", &c.TestPrefix),
		list("extra-prefix", "further prefix served read-only, e.g. for imported records (repeatable)", &c.ExtraPrefix),
		str("svc", "the fixed service segment of full-form handles", &c.Svc),
		str("operator-key-file", "file holding the operator key; created with a fresh key if missing (default DATA/operator.key)", &c.OperatorKeyFile),
		str("ready-file", "once every listener is bound, write one 'NAME ADDR' line per listener here", &c.ReadyFile),
		{name: "demo", help: "load the demo SNAA and identifiers if the database is empty", bool: true,
			set: func(v string) error { b, err := parseBool(v); c.Demo = b; return err },
			get: func() string { return strconv.FormatBool(c.Demo) }},
		list("dns-zone", "DNS zone and the prefix it maps to, ZONE=PREFIX (repeatable)", &c.DNSZone),
		list("dns-ns", "name server of every DNS zone, for the apex NS and the SOA MNAME (repeatable; default ns1.ZONE)", &c.DNSNS),
		str("dns-rname", "SOA mailbox of every DNS zone as a domain name (default hostmaster.ZONE)", &c.DNSRName),
		count("dns-rrl-rate", "DNS responses per second per source prefix over UDP (/24, /56); beyond it every 2nd response slips as an empty TC=1 reply (the client retries over TCP, which is not limited) and the others are dropped, so the node cannot be used to amplify a spoofed flood; 0 = no response-rate limit", &c.DNSRRLRate),
		count("dns-rrl-burst", "DNS responses a source prefix may get at once (0 = the rate)", &c.DNSRRLBurst),
		count("dns-max-conns-per-source", "DNS-over-TCP connections one source (IPv4 address, IPv6 /64) may hold of the 1,024; above 768 held, sources holding a quarter of this are refused too (0 = 1,024/16)", &c.DNSConnsPerSrc),
		count("hdl-max-conns-per-source", "native-protocol TCP connections one source (IPv4 address, IPv6 /64) may hold of the 1,024; above 768 held, sources holding a quarter of this are refused too (0 = 1,024/16)", &c.HdlConnsPerSrc),
		timeout("resolver-read-timeout", "time a resolver connection has from its accept (TLS handshake included) or from a later request's first byte to a complete request; a connection that sends nothing is closed after it (408)", &c.ResolverReadTimeout),
		count("resolver-max-conns-per-source", "resolver connections one source (IPv4 address, IPv6 /64) may hold; above three quarters of the node's connection budget, sources holding a quarter of this are refused too (0 = a sixteenth of the budget)", &c.ResolverConnsPerSrc),
		timeout("admin-header-timeout", "time an admin connection has from its accept (TLS handshake included) to its first request's complete headers, and a later request from its first byte; a connection that sends nothing is closed after it", &c.AdminHeaderTimeout),
		count("admin-max-conns-per-source", "admin connections one source (IPv4 address, IPv6 /64) may hold; above three quarters of the node's connection budget, sources holding a quarter of this are refused too (0 = a sixteenth of the budget)", &c.AdminConnsPerSrc),
		rate("hdl-signed-rate", "signed native-protocol replies (to certified requests) per second per source (IPv4 address, IPv6 /64); one signature costs ~15 plain replies of CPU; a certified request beyond it waits for its turn, up to 1 s, else RC 3 SERVER_TOO_BUSY, unsigned (0 = no limit)", &c.HdlSignedRate),
		count("hdl-signed-burst", "signed replies a source may get at once (0 = 2×rate)", &c.HdlSignedBurst),
		str("model", "metadata model file (default: the embedded pid4cat model)", &c.Model),
		str("policy-file", "policy of the public application form /apply, TOML: version, title, text, contact, max_open_per_email, applications_per_hour (default: a built-in policy)", &c.PolicyFile),
		{name: "cache-bytes", help: "memory budget of the resolver cache (e.g. 512MiB, 2GiB, plain bytes): every entry is charged for what it holds, its views included, and the least recently used are evicted to stay within it; auto = a quarter of the container's or machine's memory, between 32MiB and 4GiB",
			set: func(v string) error { n, err := parseByteSize(v); c.CacheBytes = n; return err },
			get: func() string { return c.CacheBytes.String() }},
		{name: "cache-entries", help: "cap on the resolver cache's entries, whatever their size (0 = no cap: cache-bytes alone bounds the cache)",
			set: func(v string) error {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 {
					return fmt.Errorf("want a positive integer or 0 for no cap, got %q", v)
				}
				c.CacheEntries = n
				return nil
			},
			get: func() string { return strconv.Itoa(c.CacheEntries) }},
		str("tls-cert", "TLS certificate file for the resolver", &c.TLSCert),
		str("tls-key", "TLS key file for the resolver", &c.TLSKey),
		str("admin-tls-cert", "TLS certificate file for the admin listener", &c.AdminTLSCert),
		str("admin-tls-key", "TLS key file for the admin listener", &c.AdminTLSKey),
		str("hdl-key", "RSA key (from 'pidnode keygen') for signing certified native-protocol replies (default DATA/hdl.key, created on the first start)", &c.HdlKey),
		str("public-url", "base URL of this resolver as the public sees it, for links (default http://RESOLVER-ADDR)", &c.PublicURL),
		str("proxy-url", "Handle proxy base URL used in rel=\"cite-as\" links", &c.ProxyURL),
		list("outbound-allow", "network (CIDR) that link checks and webhook deliveries may connect to although it is not public, e.g. an intranet (repeatable; default none: loopback, private, link-local and metadata addresses are refused after DNS resolution)", &c.OutboundAllow),
		str("geoip-db", "MaxMind DB file (e.g. GeoLite2-Country.mmdb) giving the client's country for the 'country' choice among a 10320/loc value's locations (empty = that choice is skipped)", &c.GeoIPDB),
		str("log-level", "log level: debug, info, warn or error", &c.LogLevel),
		{name: "shutdown-timeout", help: "how long SIGTERM waits for in-flight requests",
			set: func(v string) error { return c.ShutdownTimeout.UnmarshalText([]byte(v)) },
			get: func() string { return c.ShutdownTimeout.String() }},
		{name: "shutdown-delay", help: "on SIGTERM, how long the node keeps accepting (not ready, every HTTP response with Connection: close) before it stops listening",
			set: func(v string) error { return c.ShutdownDelay.UnmarshalText([]byte(v)) },
			get: func() string { return c.ShutdownDelay.String() }},
		{name: "admin-insecure", help: "accept API keys on a plain-HTTP admin listener bound to a non-loopback address (e.g. behind a TLS-terminating proxy)", bool: true,
			set: func(v string) error { b, err := parseBool(v); c.AdminInsecure = b; return err },
			get: func() string { return strconv.FormatBool(c.AdminInsecure) }},
		rate("admin-rate", "sustained admin requests per second per API key, a bulk costing one per item (429 with Retry-After beyond; 0 = no limit); the default is ~5 % of what the node commits with fsync", &c.AdminRate),
		count("admin-burst", "admin requests a key may send at once (token bucket size; 0 = 2×rate)", &c.AdminBurst),
		rate("resolver-rate", "sustained resolver requests per second per client address (429 with Retry-After beyond; 0 = no limit)", &c.ResolverRate),
		count("resolver-burst", "resolver requests a client address may send at once (0 = 2×rate)", &c.ResolverBurst),
		{name: "stats-interval", help: "how often resolution counts are written to the database",
			set: func(v string) error {
				if err := c.StatsInterval.UnmarshalText([]byte(v)); err != nil {
					return err
				}
				if c.StatsInterval.Duration < time.Second {
					return fmt.Errorf("want at least 1s, got %q", v)
				}
				return nil
			},
			get: func() string { return c.StatsInterval.String() }},
		count("stats-retention", "days of per-identifier daily resolution counts kept, today included; older days are deleted once a day, from the database and (in a cluster) from etcd; per-namespace counts are kept forever (0 = keep everything forever)", &c.StatsRetention),
		{name: "etcd-endpoints", help: "etcd client URLs of a cluster, comma-separated or repeated (empty = single-node mode)", list: true,
			reset: func() { c.EtcdEndpoints = nil },
			set: func(v string) error {
				for _, e := range strings.Split(v, ",") {
					if e = strings.TrimSpace(e); e != "" {
						c.EtcdEndpoints = append(c.EtcdEndpoints, e)
					}
				}
				return nil
			},
			get: func() string { return strings.Join(c.EtcdEndpoints, ",") }},
		{name: "etcd-shard", help: "NAME=URL,URL…: one etcd cluster (shard) of a cluster that spreads its namespaces over several, in place of --etcd-endpoints (repeatable; the first holds the registry: SNAAs, keys, applications, sessions; every node lists the same shards in the same order, new ones at the end)", list: true,
			reset: func() { c.EtcdShards = nil },
			set: func(v string) error {
				// In the environment, entries and their URLs are all
				// comma-separated: a part without = is another URL of the
				// entry before it.
				for _, part := range strings.Split(v, ",") {
					if part = strings.TrimSpace(part); part == "" {
						continue
					}
					name, url, ok := strings.Cut(part, "=")
					switch {
					case ok:
						if err := cluster.CheckShardName(name); err != nil {
							if ce := (*cluster.ConfigError)(nil); errors.As(err, &ce) {
								return fmt.Errorf("shard name %q %s", ce.Value, ce.Reason)
							}
							return err
						}
						if url == "" {
							return fmt.Errorf("shard %s: want NAME=URL,URL…", name)
						}
						c.EtcdShards = append(c.EtcdShards, part)
					case len(c.EtcdShards) == 0:
						return fmt.Errorf("want NAME=URL,URL…, got %q", v)
					default:
						c.EtcdShards[len(c.EtcdShards)-1] += "," + part
					}
				}
				return nil
			},
			get: func() string { return strings.Join(c.EtcdShards, ",") }},
		{name: "etcd-prefix", help: "key prefix of this cluster's data in etcd (several clusters may share one etcd)",
			set: func(v string) error {
				if !strings.HasPrefix(v, "/") || !strings.HasSuffix(v, "/") {
					return fmt.Errorf("want a prefix that starts and ends with /, got %q", v)
				}
				c.EtcdPrefix = v
				return nil
			},
			get: func() string { return c.EtcdPrefix }},
		str("node-name", "this node's name in a cluster, shown in metrics and readiness (default the host name)", &c.NodeName),
		str("etcd-cert", "TLS client certificate file for etcd", &c.EtcdCert),
		str("etcd-key", "TLS client key file for etcd", &c.EtcdKey),
		str("etcd-ca", "CA certificate file that etcd's server certificates are checked against (empty = the system roots when etcd URLs are https)", &c.EtcdCA),
		str("etcd-username", "etcd user name (with --etcd-password-file)", &c.EtcdUsername),
		str("etcd-password-file", "file holding the etcd user's password", &c.EtcdPasswordFile),
	}, append(c.linkcheckSettings(), c.oidcSettings()...)...)
}

func parseBool(v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("want true or false, got %q", v)
	}
	return b, nil
}

// recorder is a flag.Value that only remembers what was given, so flags can be
// applied after the file and the environment.
type recorder struct {
	s    setting
	vals *[]string
}

func (r recorder) String() string { return "" }
func (r recorder) Set(v string) error {
	*r.vals = append(*r.vals, v)
	return nil
}
func (r recorder) IsBoolFlag() bool { return r.s.bool }

// configFlags is the flag set of subcommand cmd over cfg's settings: --config
// and every setting, or those named in only when only is not nil. given
// collects the values each flag received, in order.
func configFlags(cmd string, cfg *Config, only map[string]bool) (fs *flag.FlagSet, configPath *string, given map[string]*[]string) {
	fs = flag.NewFlagSet("pidnode "+cmd, flag.ContinueOnError)
	configPath = fs.String("config", "", "TOML configuration file (env PIDNODE_CONFIG)")
	given = make(map[string]*[]string)
	for _, s := range cfg.settings() {
		if only != nil && !only[s.name] {
			continue
		}
		vals := new([]string)
		given[s.name] = vals
		fs.Var(recorder{s, vals}, s.name, fmt.Sprintf("%s (env %s, default %q)", s.help, s.env(), s.get()))
	}
	return fs, configPath, given
}

// loadConfig builds the Config of a subcommand from defaults, the TOML file, the
// environment and args, in that order of increasing precedence. only, when not
// nil, limits the flags offered to those names (other subcommands take fewer).
// -h prints the subcommand's full help; a bad flag prints the error and the
// subcommand's usage line and returns errUsage.
func loadConfig(cmd string, args []string, getenv func(string) string, stderr io.Writer, only map[string]bool) (*Config, []string, error) {
	cfg := defaultConfig()
	fs, configPath, given := configFlags(cmd, &cfg, only)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			commandHelp(stderr, cmd)
			return nil, nil, err
		}
		fmt.Fprintf(stderr, "pidnode %s: %v\nusage: %s\n", cmd, err, usageLine(cmd))
		return nil, nil, errUsage
	}
	path := *configPath
	if path == "" {
		path = getenv("PIDNODE_CONFIG")
	}
	// linkcheckGiven: --linkcheck-interval was set by the file, the
	// environment or a flag (demo mode keeps the checker off otherwise).
	linkcheckGiven := getenv("PIDNODE_LINKCHECK_INTERVAL") != ""
	if v := given["linkcheck-interval"]; v != nil && len(*v) > 0 {
		linkcheckGiven = true
	}
	if path != "" {
		md, err := toml.DecodeFile(path, &cfg)
		if err != nil {
			return nil, nil, fileError("config file", path, "config or PIDNODE_CONFIG", err)
		}
		linkcheckGiven = linkcheckGiven || md.IsDefined("linkcheck_interval")
		if und := md.Undecoded(); len(und) > 0 {
			return nil, nil, &startError{msg: fmt.Sprintf("config file %s: unknown setting %q", path, und[0].String()),
				hint: "its settings are the flags of pidnode " + cmd + " -h with _ for -"}
		}
	}
	// Rebuild the table: the closures must point into the final cfg.
	settings := cfg.settings()
	for _, s := range settings {
		if v := getenv(s.env()); v != "" {
			if s.list {
				s.reset()
				for _, item := range strings.Split(v, ",") {
					if item = strings.TrimSpace(item); item != "" {
						if err := s.set(item); err != nil {
							return nil, nil, fmt.Errorf("%s: %w", s.env(), err)
						}
					}
				}
			} else if err := s.set(v); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", s.env(), err)
			}
		}
	}
	for _, s := range settings {
		vals := given[s.name]
		if vals == nil || len(*vals) == 0 {
			continue
		}
		if s.list {
			s.reset()
		}
		for _, v := range *vals {
			if err := s.set(v); err != nil {
				return nil, nil, fmt.Errorf("--%s: %w", s.name, err)
			}
		}
	}
	if cfg.OperatorKeyFile == "" {
		cfg.OperatorKeyFile = cfg.Data + string(os.PathSeparator) + "operator.key"
	}
	if cfg.Demo && !linkcheckGiven && cfg.LinkcheckInterval.Duration > 0 {
		// The demo's URLs are example sites: a demo sends nothing beyond the
		// machine unless asked to (the banner says how).
		cfg.LinkcheckInterval.Duration = 0
		cfg.demoLinkcheckOff = true
	}
	if _, err := cfg.outboundNets(); err != nil {
		return nil, nil, err
	}
	return &cfg, fs.Args(), nil
}

// outboundNets parses the CIDRs of --outbound-allow.
func (c *Config) outboundNets() ([]netip.Prefix, error) {
	var nets []netip.Prefix
	for _, s := range c.OutboundAllow {
		p, err := netip.ParsePrefix(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("--outbound-allow %q: want a network such as 10.1.0.0/16 or fd00::/8", s)
		}
		nets = append(nets, p.Masked())
	}
	return nets, nil
}

// dnsZones splits the ZONE=PREFIX pairs of --dns-zone.
func (c *Config) dnsZones() ([][2]string, error) {
	var zones [][2]string
	for _, z := range c.DNSZone {
		name, prefix, ok := strings.Cut(z, "=")
		if !ok || name == "" || prefix == "" {
			return nil, fmt.Errorf("--dns-zone %q: want ZONE=PREFIX", z)
		}
		zones = append(zones, [2]string{strings.TrimSuffix(strings.ToLower(name), "."), prefix})
	}
	return zones, nil
}

var errUsage = errors.New("usage")
