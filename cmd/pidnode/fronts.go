package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"pidnode/internal/buildinfo"
	"pidnode/internal/shed"
	hdldns "pidnode/resolver/dns"
	"pidnode/resolver/hdl"
)

// zones returns the configured DNS zones; without --dns-zone it serves
// pid.localhost for the production prefix and testpid.localhost for the test
// prefix, so `make run` answers dig out of the box.
func (c *Config) zones() ([]hdldns.Zone, error) {
	pairs, err := c.dnsZones()
	if err != nil {
		return nil, err
	}
	if len(pairs) == 0 {
		pairs = [][2]string{{"pid.localhost", c.Prefix}}
		if c.TestPrefix != "" {
			pairs = append(pairs, [2]string{"testpid.localhost", c.TestPrefix})
		}
	}
	zones := make([]hdldns.Zone, len(pairs))
	for i, p := range pairs {
		zones[i] = hdldns.Zone{Name: p[0], Prefix: p[1]}
	}
	return zones, nil
}

func (n *node) bindDNS() error {
	if n.cfg.DNSAddr == "" {
		return nil
	}
	zones, err := n.cfg.zones()
	if err != nil {
		return err
	}
	srv, err := hdldns.New(hdldns.Config{
		Cache:    n.cache,
		Namer:    n.namer,
		Zones:    zones,
		NS:       n.cfg.DNSNS,
		RName:    n.cfg.DNSRName,
		RRLRate:  n.cfg.DNSRRLRate,
		RRLBurst: n.cfg.DNSRRLBurst,
		Logger:   n.log.With("listener", "dns"),
		Counter:  n.counter,

		MaxTCPConnsPerSource: n.cfg.DNSConnsPerSrc,
		MemoBytes:            memoBytes(n.budget),
	})
	if err != nil {
		return err
	}
	raw, pc, err := listenBoth("dns", "dns-addr", n.cfg.DNSAddr)
	if err != nil {
		return err
	}
	// Per-source limits are the DNS server's own (MaxTCPConnsPerSource).
	ln, err := n.guard("dns", raw, shed.Public, 0)
	if err != nil {
		raw.Close()
		pc.Close()
		return err
	}
	n.dns = srv
	n.listeners = append(n.listeners, listener{name: "dns", addr: ln.Addr().String(),
		unbind: func() { ln.Close(); pc.Close() },
		serve: func() error {
			return serveBoth(func() error { return srv.ServeUDP(pc) }, func() error { return srv.ServeTCP(ln) }, hdldns.ErrServerClosed)
		},
		shutdown: srv.Shutdown})
	return nil
}

// siteConfig describes this node in its HS_SITE value: the native protocol's
// address and port (TCP and UDP).
func siteConfig(hdlAddr string) (hdl.SiteConfig, error) {
	host, port, err := net.SplitHostPort(hdlAddr)
	if err != nil {
		return hdl.SiteConfig{}, fmt.Errorf("--hdl-addr %q: %w", hdlAddr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return hdl.SiteConfig{}, fmt.Errorf("--hdl-addr %q: bad port", hdlAddr)
	}
	sc := hdl.SiteConfig{Port: p}
	if a, err := netip.ParseAddr(host); err == nil && !a.IsUnspecified() {
		sc.Address = a
	}
	return sc, nil
}

func (n *node) bindHdl() error {
	if n.cfg.HdlAddr == "" {
		return nil
	}
	key, err := loadSignKey(n.cfg)
	if err != nil {
		return err
	}
	raw, pc, err := listenBoth("hdl", "hdl-addr", n.cfg.HdlAddr)
	if err != nil {
		return err
	}
	// Per-source limits are the native server's own (MaxConnsPerSource).
	ln, err := n.guard("hdl", raw, shed.Public, 0)
	if err != nil {
		raw.Close()
		pc.Close()
		return err
	}
	site, err := siteConfig(ln.Addr().String())
	if err != nil {
		ln.Close()
		pc.Close()
		return err
	}
	srv, err := hdl.New(hdl.Config{
		Cache:   n.cache,
		Namer:   n.namer,
		Site:    site,
		SignKey: key,
		Logger:  n.log.With("listener", "hdl"),
		Counter: n.counter,

		MaxConnsPerSource: n.cfg.HdlConnsPerSrc,
		SignedRate:        n.cfg.HdlSignedRate,
		SignedBurst:       n.cfg.HdlSignedBurst,
	})
	if err != nil {
		ln.Close()
		pc.Close()
		return err
	}
	n.hdl = srv
	n.listeners = append(n.listeners, listener{name: "hdl", addr: ln.Addr().String(),
		unbind: func() { ln.Close(); pc.Close() },
		serve: func() error {
			return serveBoth(func() error { return srv.ServeUDP(pc) }, func() error { return srv.ServeTCP(ln) }, hdl.ErrServerClosed)
		},
		shutdown: srv.Shutdown})
	return nil
}

// serveBoth runs a UDP and a TCP serve loop and returns when both end; a
// loop ending with closed (the server's shutdown error) is not a failure.
func serveBoth(udp, tcp func() error, closed error) error {
	errc := make(chan error, 2)
	go func() { errc <- udp() }()
	go func() { errc <- tcp() }()
	var errs []error
	for range 2 {
		if err := <-errc; err != nil && !errors.Is(err, closed) && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// cmdKeygen writes a fresh RSA key for --hdl-key.
func cmdKeygen(args []string, stdout, stderr io.Writer) error {
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, "usage: pidnode keygen FILE")
		return errUsage
	}
	if err := hdl.GenerateKey(args[0]); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "RSA key written to %s; start the node with --hdl-key %s\n", args[0], args[0])
	return nil
}

var siteinfoFlags = map[string]bool{"hdl-addr": true, "hdl-key": true, "data": true}

// cmdSiteinfo prints the node's HS_SITE in the reference siteinfo.json form,
// with the public half of the key the node signs with (loadSignKey: without
// --hdl-key, DATA/hdl.key, created here when the node has not started yet).
func cmdSiteinfo(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, rest, err := loadConfig("siteinfo", args, getenv, stderr, siteinfoFlags)
	if err != nil {
		return err
	}
	if len(rest) != 0 || cfg.HdlAddr == "" {
		fmt.Fprintln(stderr, "usage: "+siteinfoUsage)
		return errUsage
	}
	sc, err := siteConfig(cfg.HdlAddr)
	if err != nil {
		return err
	}
	if cfg.HdlKey == "" {
		if err := ensureDataDir(cfg); err != nil {
			return err
		}
	}
	k, err := loadSignKey(cfg)
	if err != nil {
		return err
	}
	pub := &k.PublicKey
	b, err := hdl.SiteInfoJSON(sc, pub)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", b)
	return err
}

// printWelcome tells a person who just ran `make run` where to look.
func (n *node) printWelcome(w io.Writer) {
	fmt.Fprintf(w, "pidnode %s is running. Ctrl-C stops it.\n", buildinfo.Read())
	if n.cluster != nil {
		fmt.Fprintf(w, "\n  cluster     node %s, etcd %s prefix %s, applied revision %d\n",
			n.cfg.NodeName, strings.Join(n.cfg.EtcdEndpoints, ","), n.cluster.Prefix(), n.cluster.Applied())
	}
	if a := n.addr("resolver"); a != "" {
		fmt.Fprintf(w, "\n  resolver    %s/\n", n.cfg.PublicURL)
	}
	if a := n.addr("admin"); a != "" {
		fmt.Fprintf(w, "  admin API   http://%s/  (OpenAPI: http://%s/openapi.json)\n", a, a)
		fmt.Fprintf(w, "  operator key in %s\n", n.cfg.OperatorKeyFile)
	}
	if a := n.addr("dns"); a != "" {
		fmt.Fprintf(w, "  DNS         %s (UDP and TCP)\n", a)
	}
	if a := n.addr("hdl"); a != "" {
		fmt.Fprintf(w, "  Handle      %s (native protocol, TCP and UDP)\n", a)
	}
	if n.demo == nil {
		if n.demoSkipped {
			fmt.Fprintln(w, "\nDemo data was loaded on the first start; its key was printed then. Remove the data directory for a fresh demo.")
		}
		return
	}
	d := n.demo
	fmt.Fprintf(w, "\nDemo SNAA %q (namespace %s). Its API key, shown once:\n\n  %s\n", d.SNAAID, d.Namespace, d.Key)
	if len(d.Handles) > 0 && n.addr("resolver") != "" {
		h := d.Handles[0]
		base := n.cfg.PublicURL
		fmt.Fprintf(w, "\nResolve a demo identifier:\n")
		fmt.Fprintf(w, "  curl -i %s/%s                 # 302 to its landing page\n", base, h)
		fmt.Fprintf(w, "  %s/%s?noredirect               # the record as a page\n", base, h)
		fmt.Fprintf(w, "  curl %s/api/handles/%s          # Handle JSON API\n", base, h)
		for _, o := range d.Handles[1:] {
			fmt.Fprintf(w, "  %s/%s\n", base, o)
		}
	}
	if a := n.addr("admin"); a != "" {
		fmt.Fprintf(w, "\nCreate an identifier (test prefix):\n")
		fmt.Fprintf(w, "  curl -sS -X POST http://%s/testpid/v2/handles/%s/%s/ \\\n", a, n.cfg.TestPrefix, d.Namespace)
		fmt.Fprintf(w, "    -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' \\\n", d.Key)
		fmt.Fprintf(w, "    -d '%s'\n", demoPayload)
	}
	if a := n.addr("dns"); a != "" && len(d.Handles) > 0 {
		if name := n.dnsName(d.Handles[0]); name != "" {
			host, port, _ := net.SplitHostPort(a)
			fmt.Fprintf(w, "\nOver DNS:\n  dig @%s -p %s TXT %s +short\n", host, port, name)
		}
	}
	if a := n.addr("hdl"); a != "" && len(d.Handles) > 0 {
		fmt.Fprintf(w, "\nOver the native Handle protocol:\n  bin/pidctl hdl resolve %s --server %s\n", d.Handles[0], a)
	}
}

const demoPayload = `{"url":"https://example.org/item/1","metadata":{"status":"REGISTERED","schema_version":"v1.0.1","metadata_license":"CC0-1.0","curation_contact":"pids@example.org","resource_info":{"label":"My sample","description":"A sample","resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://example.org/item/1.ttl","media_type":"text/turtle"}]}}}`

// dnsName is the owner name of handle h under the zone of its prefix (labels in
// reverse order, docs/handle-protocol.md §4), or "" when no zone covers it or a
// segment is not a plain DNS label.
func (n *node) dnsName(h string) string {
	zones, err := n.cfg.zones()
	if err != nil {
		return ""
	}
	prefix, rest, ok := strings.Cut(h, "/")
	if !ok {
		return ""
	}
	for _, z := range zones {
		if !strings.EqualFold(z.Prefix, prefix) {
			continue
		}
		segs := strings.Split(rest, "/")
		labels := make([]string, 0, len(segs)+1)
		for i := len(segs) - 1; i >= 0; i-- {
			s := strings.ReplaceAll(segs[i], "-", "")
			if s == "" || strings.ContainsAny(s, ". ") {
				return ""
			}
			labels = append(labels, s)
		}
		return strings.Join(append(labels, z.Name), ".")
	}
	return ""
}
