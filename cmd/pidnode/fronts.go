package main

import (
	"bytes"
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
	n.fronts = append(n.fronts, &dualFront{name: "dns", ln: ln, pc: pc, srv: srv, closed: hdldns.ErrServerClosed})
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
	n.fronts = append(n.fronts, &dualFront{name: "hdl", ln: ln, pc: pc, srv: srv, closed: hdl.ErrServerClosed})
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

// printWelcome tells a person who just ran `make run` where to look. Every
// command it prints runs as pasted (internal/e2e TestBannerCommands runs
// them), in the directory `make run` runs in (bin/pidctl). It is written in
// one write, so that a reader of the output never sees part of it.
func (n *node) printWelcome(out io.Writer) {
	var w bytes.Buffer
	defer func() { out.Write(w.Bytes()) }()
	fmt.Fprintf(&w, "pidnode %s is running. Ctrl-C stops it.\n", buildinfo.Read())
	if n.cluster != nil {
		fmt.Fprintf(&w, "\n  cluster     node %s, etcd %s prefix %s, applied revision %d\n",
			n.cfg.NodeName, strings.Join(etcdURLs(n.cfg), ","), n.cluster.Prefix(), n.cluster.Applied())
	}
	if a := n.addr("resolver"); a != "" {
		fmt.Fprintf(&w, "\n  resolver    %s/\n", n.cfg.PublicURL)
	}
	if a := n.addr("admin"); a != "" {
		fmt.Fprintf(&w, "  admin       http://%s/  (its index page links what follows)\n", a)
		fmt.Fprintf(&w, "  console     http://%s/console/  (sign in with an SNAA key or the operator key)\n", a)
		fmt.Fprintf(&w, "  apply       http://%s/apply  (the application form for new SNAAs)\n", a)
		fmt.Fprintf(&w, "  API         http://%s/openapi.json  (OpenAPI 3.1; metrics: http://%s/metrics)\n", a, a)
		fmt.Fprintf(&w, "  operator key in %s\n", n.cfg.OperatorKeyFile)
	}
	if a := n.addr("dns"); a != "" {
		fmt.Fprintf(&w, "  DNS         %s (UDP and TCP)\n", a)
	}
	if a := n.addr("hdl"); a != "" {
		fmt.Fprintf(&w, "  Handle      %s (native protocol, TCP and UDP)\n", a)
	}
	if n.cfg.demoLinkcheckOff {
		fmt.Fprintf(&w, "  link checks off: the demo's URLs are example sites (--linkcheck-interval 168h turns them on)\n")
	}
	if n.demo == nil {
		switch {
		case n.demoSkipped && n.demoKeyFile != "":
			fmt.Fprintf(&w, "\nDemo data was loaded on the first start; the demo SNAA's key is in %s. Remove the data directory for a fresh demo.\n", n.demoKeyFile)
		case n.demoSkipped:
			fmt.Fprintln(&w, "\nDemo data was loaded on the first start; its key was printed then. Remove the data directory for a fresh demo.")
		}
		return
	}
	d := n.demo
	fmt.Fprintf(&w, "\nDemo SNAA %q (namespace %s). Its API key, shown once here and kept in %s:\n\n  %s\n", d.SNAAID, d.Namespace, n.demoKeyFile, d.Key)
	if len(d.Handles) > 0 && n.addr("resolver") != "" {
		h := d.Handles[0]
		base := n.cfg.PublicURL
		fmt.Fprintf(&w, "\nResolve a demo identifier:\n")
		fmt.Fprintf(&w, "  curl -i %s/%s                 # 302 to its landing page\n", base, h)
		fmt.Fprintf(&w, "  curl -s '%s/%s?noredirect'     # the record as a page (open it in a browser)\n", base, h)
		fmt.Fprintf(&w, "  curl -s %s/api/handles/%s      # Handle JSON API\n", base, h)
		if a := n.addr("dns"); a != "" {
			if name := n.dnsName(h); name != "" {
				host, port, _ := net.SplitHostPort(a)
				fmt.Fprintf(&w, "  dig @%s -p %s TXT %s +short      # over DNS (dig: Debian's bind9-dnsutils)\n", host, port, name)
			}
		}
		if a := n.addr("hdl"); a != "" {
			fmt.Fprintf(&w, "  bin/pidctl hdl resolve %s --server %s   # over the native Handle protocol\n", h, a)
		}
		fmt.Fprintf(&w, "More demo identifiers (open them in a browser):\n")
		for _, o := range d.Handles[1:] {
			fmt.Fprintf(&w, "  %s/%s\n", base, o)
		}
		if d.LocHandle != "" {
			fmt.Fprintf(&w, "  %s/%s?action=showurls   # several locations (10320/loc)\n", base, d.LocHandle)
		}
	}
	if a := n.addr("admin"); a != "" && n.cfg.TestPrefix != "" {
		id := demoCreateID
		h := n.namer.Full(n.cfg.TestPrefix, d.Namespace, id)
		fmt.Fprintf(&w, "\nCreate an identifier under the test prefix %s with the id %s, then resolve it:\n", n.cfg.TestPrefix, id)
		fmt.Fprintf(&w, "  curl -sS -X PUT http://%s/testpid/v2/handles/%s/%s/%s -H 'If-None-Match: *' \\\n", a, n.cfg.TestPrefix, d.Namespace, id)
		fmt.Fprintf(&w, "    -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' \\\n", d.Key)
		fmt.Fprintf(&w, "    -d '%s'\n", demoPayload)
		if n.addr("resolver") != "" {
			fmt.Fprintf(&w, "  curl -i %s/%s\n", n.cfg.PublicURL, h)
		}
		if a := n.addr("dns"); a != "" {
			if name := n.dnsName(h); name != "" {
				host, port, _ := net.SplitHostPort(a)
				fmt.Fprintf(&w, "  dig @%s -p %s TXT %s +short\n", host, port, name)
			}
		}
		fmt.Fprintf(&w, "(Or with a generated id: POST to http://%s/testpid/v2/handles/%s/%s/ without If-None-Match.)\n", a, n.cfg.TestPrefix, d.Namespace)
	}
}

// demoCreateID is the custom id of the banner's create example.
const demoCreateID = "FIRST-1"

// demoKeyFile is the file in the data directory that holds the demo SNAA's
// key once the demo is loaded.
const demoKeyFile = "demo.key"

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
