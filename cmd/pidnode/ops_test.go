package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"pidnode/resolver/hdl"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key, and
// returns their paths and a pool trusting it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pidnode test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// call sends a request with an optional bearer key and JSON body.
func call(t *testing.T, c *http.Client, method, url, key string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// enrolSNAA applies as organisation org, has the operator approve it with
// namespace ns and returns the SNAA's first key.
func enrolSNAA(t *testing.T, c *http.Client, admin, opKey, org, ns string) string {
	t.Helper()
	code, body := call(t, c, "POST", admin+"/ops/v1/applications", opKey, map[string]any{
		"organisation": org, "technical_contact": map[string]string{"name": "T", "email": "t@example.org"},
		"administrative_contact": map[string]string{"name": "A", "email": "a@example.org"}, "policy_version": "v1",
		"maintenance_statement": "kept"})
	if code != 201 {
		t.Fatalf("apply: %d %s", code, body)
	}
	var app struct{ ID string }
	json.Unmarshal(body, &app)
	code, body = call(t, c, "POST", admin+"/ops/v1/applications/"+app.ID+"/approve", opKey, map[string]any{"namespace": ns})
	if code != 200 {
		t.Fatalf("approve: %d %s", code, body)
	}
	var appr struct{ Key struct{ Secret string } }
	json.Unmarshal(body, &appr)
	return appr.Key.Secret
}

// TestTLSOnBothListeners: with certificate and key files the resolver and the
// admin API speak HTTPS (and keys are accepted over it), and refuse plain HTTP.
func TestTLSOnBothListeners(t *testing.T) {
	cert, key, pool := selfSigned(t)
	dir := t.TempDir()
	n, cancel, done := startTestNode(t, dir, "--dns-addr", "", "--hdl-addr", "", "--tls-cert", cert, "--tls-key", key,
		"--admin-tls-cert", cert, "--admin-tls-key", key)
	defer stopTestNode(t, cancel, done)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 10 * time.Second}
	for _, u := range []string{"https://" + n.addr("resolver") + "/healthz", "https://" + n.addr("admin") + "/healthz", "https://" + n.addr("admin") + "/readyz"} {
		if code, body := call(t, c, "GET", u, "", nil); code != 200 {
			t.Errorf("GET %s = %d %s", u, code, body)
		}
	}
	if code, body := call(t, c, "GET", "https://"+n.addr("admin")+"/ops/v1/snaas", n.opKey, nil); code != 200 {
		t.Errorf("operator key over TLS = %d %s", code, body)
	}
	if !strings.HasPrefix(n.cfg.PublicURL, "https://") {
		t.Errorf("public URL %q is not https", n.cfg.PublicURL)
	}
	plain := &http.Client{Timeout: 5 * time.Second}
	for _, name := range []string{"resolver", "admin"} {
		res, err := plain.Get("http://" + n.addr(name) + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				t.Errorf("%s answered plain HTTP with 200", name)
			}
		}
	}
}

// TestSilentTLSConnectionsClosed: a client that connects to the HTTPS
// resolver or admin listener and sends nothing, not even a TLS ClientHello,
// is closed after --resolver-read-timeout / --admin-header-timeout.
func TestSilentTLSConnectionsClosed(t *testing.T) {
	cert, key, _ := selfSigned(t)
	dir := t.TempDir()
	const limit = time.Second
	n, cancel, done := startTestNode(t, dir, "--dns-addr", "", "--hdl-addr", "", "--tls-cert", cert, "--tls-key", key,
		"--admin-tls-cert", cert, "--admin-tls-key", key, "--resolver-read-timeout", limit.String(), "--admin-header-timeout", limit.String())
	defer stopTestNode(t, cancel, done)
	for _, name := range []string{"resolver", "admin"} {
		start := time.Now()
		c, err := net.Dial("tcp", n.addr(name))
		if err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = io.ReadAll(c)
		c.Close()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("%s: silent TLS connection still open after 10 s (limit %v)", name, limit)
			continue
		}
		if el := time.Since(start); el < limit || el > limit+3*time.Second {
			t.Errorf("%s: silent TLS connection closed %v after the dial, limit %v", name, el, limit)
		}
	}
}

// nonLoopbackIPv4 returns an address of this host that is not loopback, or "".
func nonLoopbackIPv4() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
			return ipn.IP.String()
		}
	}
	return ""
}

// TestAdminRefusesKeysOverPlainHTTP: a plain admin listener on a network
// address refuses bearer keys (403 problem+json) unless --admin-insecure;
// keyless routes work either way; loopback accepts keys (every other test).
func TestAdminRefusesKeysOverPlainHTTP(t *testing.T) {
	ip := nonLoopbackIPv4()
	if ip == "" {
		t.Skip("no non-loopback IPv4 address on this host")
	}
	plain := &http.Client{Timeout: 5 * time.Second}
	for _, insecure := range []bool{false, true} {
		dir := t.TempDir()
		args := []string{"--admin-addr", ip + ":0", "--dns-addr", "", "--hdl-addr", ""}
		if insecure {
			args = append(args, "--admin-insecure")
		}
		n, cancel, done := startTestNode(t, dir, args...)
		base := "http://" + n.addr("admin")
		code, body := call(t, plain, "GET", base+"/ops/v1/snaas", n.opKey, nil)
		switch {
		case !insecure && (code != 403 || !strings.Contains(string(body), "plain HTTP")):
			t.Errorf("plain non-loopback: operator key got %d %s, want 403 problem", code, body)
		case insecure && code != 200:
			t.Errorf("--admin-insecure: operator key got %d %s, want 200", code, body)
		}
		if code := readyzEventually(t, plain, base); code != 200 {
			t.Errorf("insecure=%v: /readyz = %d", insecure, code)
		}
		stopTestNode(t, cancel, done)
	}
}

// readyzEventually is the keyless /readyz of the admin listener at base,
// asked until it answers 200 or 5 s pass: the ready file is written once the
// fronts serve, /readyz turns 200 after the store is warmed as well.
func readyzEventually(t *testing.T, c *http.Client, base string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, _ := call(t, c, "GET", base+"/readyz", "", nil)
		if code == 200 || time.Now().After(deadline) {
			return code
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMetricsOnRunningNode lints the node's /metrics after traffic on every
// front: Prometheus text that parses and passes promlint, with the families
// the operator relies on and no handle in any label.
func TestMetricsOnRunningNode(t *testing.T) {
	dir := t.TempDir()
	n, cancel, done := startTestNode(t, dir, "--demo")
	defer stopTestNode(t, cancel, done)
	get(t, "http://"+n.addr("resolver")+"/"+n.demo.Handles[0])
	get(t, "http://"+n.addr("resolver")+"/21.12345/NOPE/NOPE")
	get(t, "http://"+n.addr("admin")+"/healthz")
	resp, body := get(t, "http://"+n.addr("admin")+"/metrics")
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics = %d", resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("metrics do not parse: %v\n%s", err, body)
	}
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	for _, want := range []string{"pidnode_resolver_resolutions_total", "pidnode_cache_hits_total", "pidnode_cache_misses_total",
		"pidnode_cache_evictions_total", "pidnode_cache_entries", "pidnode_admin_requests_total",
		"pidnode_admin_request_duration_seconds", "pidnode_store_free_pages", "pidnode_build_info",
		"pidnode_hdl_too_busy_total", "pidnode_hdl_signed_waits_total", "pidnode_hdl_tcp_refused_total", "pidnode_hdl_tcp_connections",
		"pidnode_dns_tcp_refused_total", "pidnode_dns_tcp_connections", "pidnode_store_freelist_checkpoints_total",
		"pidnode_webhook_deliveries_total", "pidnode_webhook_endpoints", "pidnode_webhook_pending_events", "pidnode_webhook_oldest_pending_seconds",
		"pidnode_listener_connections", "pidnode_listener_refused_total", "pidnode_listener_accept_retries_total",
		"pidnode_listener_budget_connections", "pidnode_listener_budget_reserved_connections", "pidnode_listener_budget_held_connections"} {
		if fams[want] == nil {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() != "route" && strings.Contains(l.GetValue(), "/") {
					t.Errorf("%s: label %s=%q", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
	kinds := map[string]bool{}
	for _, m := range fams["pidnode_resolver_resolutions_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "kind" {
				kinds[l.GetValue()] = true
			}
		}
	}
	for _, k := range []string{"redirect", "noredirect", "api", "linkset", "dns", "hdl"} {
		if !kinds[k] {
			t.Errorf("resolutions_total lacks kind %s", k)
		}
	}
}

// ackedWrite is one identifier write the admin API acknowledged.
type ackedWrite struct {
	handle  string
	version float64
	body    string // the identifier as the reply showed it
}

// TestBackupUnderWritesRestores: a backup taken over the API while writers
// create and update identifiers restores, on a fresh node, to a consistent
// moment: every write acknowledged before the backup started is there (at
// that version or later), and every record present is byte for byte a version
// some write acknowledged.
func TestBackupUnderWritesRestores(t *testing.T) {
	dir := t.TempDir()
	n, cancel, done := startTestNode(t, dir, "--dns-addr", "", "--hdl-addr", "", "--public-url", "https://pid.example.org")
	c := &http.Client{Timeout: 30 * time.Second}
	admin := "http://" + n.addr("admin")
	key := enrolSNAA(t, c, admin, n.opKey, "Backup Lab", "BAK")
	coll := admin + "/pid/v2/handles/21.12345/BAK/"
	payload := func(u string) map[string]any {
		return map[string]any{"url": u, "metadata": map[string]any{"status": "REGISTERED", "schema_version": "v1.0.1",
			"metadata_license": "CC0-1.0", "curation_contact": "pids@example.org",
			"resource_info": map[string]any{"label": "x", "resource_category": "SAMPLE",
				"representation_variants": []any{map[string]any{"variant_url": "https://e.org/x.ttl", "media_type": "text/turtle"}}}}}
	}

	var (
		mu      sync.Mutex
		acked   []ackedWrite
		seq     atomic.Int64
		stop    atomic.Bool
		writers sync.WaitGroup
	)
	for w := range 4 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			var mine []string
			for i := 0; !stop.Load(); i++ {
				var code int
				var body []byte
				if len(mine) == 0 || i%3 == 0 {
					code, body = call(t, c, "PUT", coll, key, payload(fmt.Sprintf("https://e.org/%d/%d", w, seq.Add(1))))
				} else {
					h := mine[i%len(mine)]
					code, body = call(t, c, "PUT", coll+h[strings.LastIndexByte(h, '/')+1:], key, map[string]any{"url": fmt.Sprintf("https://e.org/u/%d", seq.Add(1))})
				}
				if code != 200 && code != 201 {
					t.Errorf("write: %d %s", code, body)
					return
				}
				var id struct {
					Handle  string
					Version float64
				}
				json.Unmarshal(body, &id)
				if code == 201 {
					mine = append(mine, id.Handle)
				}
				mu.Lock()
				acked = append(acked, ackedWrite{id.Handle, id.Version, string(body)})
				mu.Unlock()
			}
		}()
	}
	ackedN := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	// Enough writes before the backup to prove something, however slow the machine.
	for deadline := time.Now().Add(20 * time.Second); ackedN() < 40 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	before := append([]ackedWrite(nil), acked...) // acknowledged before the backup starts
	mu.Unlock()
	res, err := func() (*http.Response, error) {
		req, _ := http.NewRequest("GET", admin+"/ops/v1/backup", nil)
		req.Header.Set("Authorization", "Bearer "+n.opKey)
		return c.Do(req)
	}()
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("backup: %v %v", res, err)
	}
	restored := t.TempDir()
	f, err := os.Create(dbPath(restored))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, res.Body); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	f.Close()
	// Writes keep going after the snapshot.
	for deadline, n0 := time.Now().Add(10*time.Second), ackedN(); ackedN() < n0+20 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	stop.Store(true)
	writers.Wait()
	stopTestNode(t, cancel, done)
	if len(before) < 10 {
		t.Fatalf("only %d writes before the backup: the test proves little", len(before))
	}

	// A fresh node on the backup (its own operator key file is copied along,
	// as a restore would).
	data, _ := os.ReadFile(filepath.Join(dir, "operator.key"))
	os.WriteFile(filepath.Join(restored, "operator.key"), data, 0o600)
	n2, cancel2, done2 := startTestNode(t, restored, "--dns-addr", "", "--hdl-addr", "", "--public-url", "https://pid.example.org")
	defer stopTestNode(t, cancel2, done2)
	admin2 := "http://" + n2.addr("admin")
	versions := map[string]map[float64]string{} // handle → version → acknowledged body
	for _, a := range acked {
		if versions[a.handle] == nil {
			versions[a.handle] = map[float64]string{}
		}
		versions[a.handle][a.version] = a.body
	}
	latestBefore := map[string]float64{}
	for _, a := range before {
		latestBefore[a.handle] = max(latestBefore[a.handle], a.version)
	}
	// Every record acknowledged before the backup is there, at that version or later.
	for h, v := range latestBefore {
		code, body := call(t, c, "GET", admin2+"/pid/v2/handles/21.12345/BAK/"+h[strings.LastIndexByte(h, '/')+1:], key, nil)
		if code != 200 {
			t.Errorf("%s acknowledged before the backup, missing after restore: %d", h, code)
			continue
		}
		var got struct{ Version float64 }
		json.Unmarshal(body, &got)
		if got.Version < v {
			t.Errorf("%s: restored version %v, acknowledged %v before the backup", h, got.Version, v)
		}
	}
	// Every record present is exactly some acknowledged version.
	present := 0
	cursor := ""
	for {
		u := coll + "?limit=1000"
		if cursor != "" {
			u += "&cursor=" + cursor
		}
		code, body := call(t, c, "GET", strings.Replace(u, admin, admin2, 1), key, nil)
		if code != 200 {
			t.Fatalf("list restored: %d %s", code, body)
		}
		var page struct {
			Items      []json.RawMessage
			NextCursor string `json:"next_cursor"`
		}
		json.Unmarshal(body, &page)
		for _, raw := range page.Items {
			present++
			var id struct {
				Handle  string
				Version float64
			}
			json.Unmarshal(raw, &id)
			want, ok := versions[id.Handle][id.Version]
			if !ok {
				t.Errorf("%s version %v in the backup was never acknowledged", id.Handle, id.Version)
				continue
			}
			if strings.TrimSpace(want) != string(raw) {
				t.Errorf("%s version %v differs from the acknowledged reply:\n got %s\nwant %s", id.Handle, id.Version, raw, want)
			}
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	if present < len(latestBefore) {
		t.Errorf("%d records restored, %d acknowledged before the backup", present, len(latestBefore))
	}
	// And the restored node resolves them.
	for h := range latestBefore {
		resp, _ := get(t, "http://"+n2.addr("resolver")+"/"+h)
		if resp.StatusCode != http.StatusFound {
			t.Errorf("restored %s resolves with %d", h, resp.StatusCode)
		}
		break
	}
	t.Logf("%d writes acknowledged before the backup, %d in all, %d records restored", len(before), len(acked), present)
}

// TestBackupWhileServingPointsToPidctl: the running node holds the database
// lock, so `pidnode backup` says to take the backup over the admin API.
func TestBackupWhileServingPointsToPidctl(t *testing.T) {
	dir := t.TempDir()
	_, cancel, done := startTestNode(t, dir, "--dns-addr", "", "--hdl-addr", "")
	defer stopTestNode(t, cancel, done)
	var out, errb bytes.Buffer
	code := run([]string{"backup", "--data", dir, filepath.Join(t.TempDir(), "b.db")}, func(string) string { return "" }, nil, &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "pidctl backup FILE") {
		t.Errorf("backup of a served database: exit %d, stderr %q", code, errb.String())
	}
}

// TestStatisticsEndToEnd: resolutions on the resolver reach the …/stats
// routes after a flush (--stats-interval), per identifier and per namespace.
func TestStatisticsEndToEnd(t *testing.T) {
	dir := t.TempDir()
	n, cancel, done := startTestNode(t, dir, "--demo", "--stats-interval", "1s")
	defer stopTestNode(t, cancel, done)
	h := n.demo.Handles[0]
	short := strings.Replace(h, "/svc/", "/", 1)
	for _, target := range []string{"/" + h, "/" + short, "/" + h + "?noredirect", "/api/handles/" + h} {
		get(t, "http://"+n.addr("resolver")+target)
	}
	// One resolution over DNS and one over the native protocol count too.
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(n.dnsName(h)), dns.TypeURI)
	if r, err := dns.Exchange(m, n.addr("dns")); err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0 {
		t.Fatalf("DNS %s: %v %v", n.dnsName(h), r, err)
	}
	hc := &hdl.Client{Addr: n.addr("hdl"), Timeout: 5 * time.Second}
	if _, err := hc.Resolve(context.Background(), h, nil, nil, 0); err != nil {
		t.Fatalf("native resolution: %v", err)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	id := h[strings.LastIndexByte(h, '/')+1:]
	base := "http://" + n.addr("admin") + "/pid/v2/handles/21.12345/" + n.demo.Namespace + "/"
	var st struct {
		Total uint64
		Days  []struct {
			Date  string
			Count uint64
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body := call(t, c, "GET", base+id+"/stats", n.demo.Key, nil)
		if code != 200 {
			t.Fatalf("stats: %d %s", code, body)
		}
		json.Unmarshal(body, &st)
		if st.Total >= 6 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	today := time.Now().UTC().Format(time.DateOnly)
	if st.Total != 6 || len(st.Days) != 1 || st.Days[0].Date != today {
		t.Errorf("identifier stats %+v, want 6 today (%s): 4 HTTP, 1 DNS, 1 native", st, today)
	}
	code, body := call(t, c, "GET", base+"stats", n.demo.Key, nil)
	json.Unmarshal(body, &st)
	if code != 200 || st.Total != 6 {
		t.Errorf("namespace stats: %d %s", code, body)
	}
}

// TestResolverRateLimitEndToEnd: --resolver-rate/--resolver-burst limit one
// client address with 429 and Retry-After; /healthz stays open.
func TestResolverRateLimitEndToEnd(t *testing.T) {
	dir := t.TempDir()
	n, cancel, done := startTestNode(t, dir, "--demo", "--dns-addr", "", "--hdl-addr", "", "--resolver-rate", "0.5", "--resolver-burst", "2")
	defer stopTestNode(t, cancel, done)
	var codes []int
	for range 3 {
		resp, _ := get(t, "http://"+n.addr("resolver")+"/"+n.demo.Handles[0])
		codes = append(codes, resp.StatusCode)
		if resp.StatusCode == 429 && resp.Header.Get("Retry-After") != "2" {
			t.Errorf("Retry-After %q, want 2", resp.Header.Get("Retry-After"))
		}
	}
	if fmt.Sprint(codes) != "[302 302 429]" {
		t.Errorf("statuses %v, want [302 302 429]", codes)
	}
	if resp, _ := get(t, "http://"+n.addr("resolver")+"/healthz"); resp.StatusCode != 200 {
		t.Errorf("/healthz under the limit: %d", resp.StatusCode)
	}
}

// TestImportedRecordsSearchable: `pidnode import` rebuilds the URL index, so
// an imported record in an SNAA's namespace is found by URL search.
func TestImportedRecordsSearchable(t *testing.T) {
	dir := t.TempDir()
	n, cancel, done := startTestNode(t, dir, "--demo", "--dns-addr", "", "--hdl-addr", "")
	stopTestNode(t, cancel, done)
	line := `{"handle":"21.12345/svc/` + n.demo.Namespace + `/IMPORTED-1","values":[{"index":1,"type":"URL","data":{"format":"string","value":"https://archive.example.org/old/1"},"ttl":86400,"timestamp":"2001-09-09T01:46:40Z"}]}`
	runCmd(t, line+"\n", "import", "--data", dir, "-")
	n2, cancel2, done2 := startTestNode(t, dir, "--dns-addr", "", "--hdl-addr", "")
	defer stopTestNode(t, cancel2, done2)
	c := &http.Client{Timeout: 10 * time.Second}
	code, body := call(t, c, "GET", "http://"+n2.addr("admin")+"/pid/v2/handles/21.12345/"+n.demo.Namespace+"/?url=https%3A%2F%2Farchive.example.org%2F%2A", n.demo.Key, nil)
	if code != 200 || !strings.Contains(string(body), `"handle":"21.12345/svc/`+n.demo.Namespace+`/IMPORTED-1"`) {
		t.Errorf("search after import: %d %s", code, body)
	}
}
