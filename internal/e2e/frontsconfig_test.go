package e2e

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"pidnode/handlev/hsmsg"
	"pidnode/resolver/hdl"
)

// readRSAKey reads a key file as `pidnode keygen` promises to write it (PEM,
// PKCS #8 "PRIVATE KEY" holding an RSA key) with the standard library alone.
func readRSAKey(t *testing.T, path string) *rsa.PrivateKey {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		t.Fatalf("%s is not a PEM PRIVATE KEY:\n%s", path, b)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		t.Fatalf("%s holds a %T, want RSA", path, k)
	}
	return rk
}

// TestKeygenSiteinfoOnRunningNode: a key from `pidnode keygen` given to a node
// with --hdl-key signs its certified native replies (verified against the key
// file's public key, read with crypto/x509), GET_SITE_INFO carries that public
// key, and `pidnode siteinfo` for the node's address and key prints exactly
// the site the node serves.
func TestKeygenSiteinfoOnRunningNode(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "hdl.key")
	out, err := exec.Command(binPath, "keygen", keyFile).CombinedOutput()
	if err != nil || !strings.Contains(string(out), keyFile) {
		t.Fatalf("pidnode keygen: %v\n%s", err, out)
	}
	key := readRSAKey(t, keyFile)
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("key file mode %v (%v): want no group or other access", fi.Mode(), err)
	}
	n := startNode(t, filepath.Join(dir, "data"), "--demo", "--hdl-key", keyFile)
	handle := n.Handles[0]
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}

	for _, udp := range []bool{false, true} {
		c := &hdl.Client{Addr: n.addr["hdl"], UDP: udp, Timeout: 5 * time.Second}
		rep, err := c.Resolve(context.Background(), handle, nil, nil, hsmsg.FlagsJava|hsmsg.FlagCT)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Header.ResponseCode != hsmsg.RCSuccess || len(rep.Values) == 0 || len(rep.Credential) == 0 {
			t.Fatalf("udp=%v: RC %d, %d values, %d credential bytes", udp, rep.Header.ResponseCode, len(rep.Values), len(rep.Credential))
		}
		if err := rep.VerifySignature(&key.PublicKey); err != nil {
			t.Errorf("udp=%v: signature does not verify with the keygen'd key: %v", udp, err)
		}
		if rep.VerifySignature(&other.PublicKey) == nil {
			t.Errorf("udp=%v: signature verifies with an unrelated key", udp)
		}
	}

	si, err := (&hdl.Client{Addr: n.addr["hdl"], Timeout: 5 * time.Second}).SiteInfo(context.Background(), 0)
	if err != nil || si.Site == nil {
		t.Fatalf("GET_SITE_INFO: %v", err)
	}
	served := si.Site
	if len(served.Servers) != 1 {
		t.Fatalf("served site has %d servers", len(served.Servers))
	}
	pub, err := hsmsg.ParseRSAPublicKey(served.Servers[0].PublicKey)
	if err != nil || !pub.Equal(&key.PublicKey) {
		t.Errorf("GET_SITE_INFO public key is not the keygen'd key (%v)", err)
	}

	out, err = exec.Command(binPath, "siteinfo", "--hdl-addr", n.addr["hdl"], "--hdl-key", keyFile).Output()
	if err != nil {
		t.Fatalf("pidnode siteinfo: %v\n%s", err, out)
	}
	var js struct {
		Version         int    `json:"version"`
		ProtocolVersion string `json:"protocolVersion"`
		SerialNumber    int    `json:"serialNumber"`
		PrimarySite     bool   `json:"primarySite"`
		MultiPrimary    bool   `json:"multiPrimary"`
		Attributes      []struct{ Name, Value string }
		Servers         []struct {
			ServerID  uint32 `json:"serverId"`
			Address   string `json:"address"`
			PublicKey struct {
				Format string `json:"format"`
				Value  struct{ Kty, N, E string }
			} `json:"publicKey"`
			Interfaces []struct {
				Query, Admin bool
				Protocol     string
				Port         uint32
			}
		}
	}
	if err := json.Unmarshal(out, &js); err != nil {
		t.Fatalf("siteinfo output: %v\n%s", err, out)
	}
	if js.Version != int(served.DataFormatVersion) || js.ProtocolVersion != strconv.Itoa(int(served.Major))+"."+strconv.Itoa(int(served.Minor)) ||
		js.SerialNumber != int(served.Serial) || js.PrimarySite != served.Primary || js.MultiPrimary != served.MultiPrimary {
		t.Errorf("siteinfo %s\ndiffers from the served site %+v", out, served)
	}
	if len(js.Attributes) != len(served.Attributes) {
		t.Errorf("siteinfo attributes %v, served %v", js.Attributes, served.Attributes)
	}
	for i := range min(len(js.Attributes), len(served.Attributes)) {
		if js.Attributes[i].Name != served.Attributes[i].Name || js.Attributes[i].Value != served.Attributes[i].Value {
			t.Errorf("siteinfo attribute %d %v, served %v", i, js.Attributes[i], served.Attributes[i])
		}
	}
	if len(js.Servers) != 1 {
		t.Fatalf("siteinfo has %d servers:\n%s", len(js.Servers), out)
	}
	s, sv := js.Servers[0], served.Servers[0]
	if s.ServerID != sv.ID || s.Address != sv.Addr().String() {
		t.Errorf("siteinfo server %d %s, served %d %s", s.ServerID, s.Address, sv.ID, sv.Addr())
	}
	n64 := base64.RawURLEncoding.EncodeToString(key.PublicKey.N.Bytes())
	e64 := base64.RawURLEncoding.EncodeToString(big.NewInt(int64(key.PublicKey.E)).Bytes())
	if s.PublicKey.Format != "key" || s.PublicKey.Value.Kty != "RSA" || s.PublicKey.Value.N != n64 || s.PublicKey.Value.E != e64 {
		t.Errorf("siteinfo public key %+v is not the keygen'd key", s.PublicKey)
	}
	protos := map[uint8]string{hsmsg.ProtoUDP: "UDP", hsmsg.ProtoTCP: "TCP", hsmsg.ProtoHTTP: "HTTP", hsmsg.ProtoHTTPS: "HTTPS"}
	if len(s.Interfaces) != len(sv.Interfaces) {
		t.Fatalf("siteinfo interfaces %+v, served %+v", s.Interfaces, sv.Interfaces)
	}
	_, port, _ := strings.Cut(n.addr["hdl"], ":")
	for i, f := range sv.Interfaces {
		g := s.Interfaces[i]
		if g.Port != f.Port || g.Protocol != protos[f.Protocol] || g.Query != (f.Type&hsmsg.IfQuery != 0) || g.Admin != (f.Type&hsmsg.IfAdmin != 0) {
			t.Errorf("siteinfo interface %d %+v, served %+v", i, g, f)
		}
		if strconv.Itoa(int(f.Port)) != port {
			t.Errorf("served interface %d on port %d, the node listens on %s", i, f.Port, port)
		}
	}
}

// miniModelTOML is a small model (model/testdata/mini.toml): status required,
// keywords at most three lower-case words, nothing of pid4cat's.
const miniModelTOML = `name = "mini"
version = "v0.1.0"

[url]
index = 1
type = "URL"
changed_field = "LANDING_PAGE"

[changes]
index = 16
type = "CHANGES"

[admin]
index = 100
admin_index = 300

[[fields]]
name = "status"
required = true
index = 11
type = "STATUS"
[fields.schema]
type = "string"
enum = ["SUBMITTED", "REGISTERED", "OBSOLETED", "DEPRECATED"]

[[fields]]
name = "keywords"
index = 17
type = "KEYWORDS"
encoding = "json"
changed_field = "KEYWORDS"
[fields.schema]
type = "array"
maxItems = 3
[fields.schema.items]
type = "string"
pattern = "^[a-z]+$"
`

// onboard submits and approves an application for namespace ns with the
// operator key and returns the SNAA's key.
func onboard(t *testing.T, n *node, ns string) string {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	op := n.operatorKey()
	app, _ := json.Marshal(map[string]any{
		"organisation": "Model Lab", "technical_contact": map[string]string{"name": "T", "email": "t@example.org"},
		"administrative_contact": map[string]string{"name": "A", "email": "a@example.org"}, "policy_version": "v1",
		"maintenance_statement": "kept"})
	r, err := do(c, "POST", n.adminURL()+"/ops/v1/applications", app, auth(op)...)
	if err != nil || r.Status != 201 {
		t.Fatalf("submit application: %v %d %s", err, r.Status, r.Body)
	}
	var a struct{ ID string }
	json.Unmarshal(r.Body, &a)
	r, err = do(c, "POST", n.adminURL()+"/ops/v1/applications/"+a.ID+"/approve", []byte(`{"namespace":"`+ns+`"}`), auth(op)...)
	if err != nil || r.Status != 200 {
		t.Fatalf("approve: %v %d %s", err, r.Status, r.Body)
	}
	var res struct {
		Key struct {
			Secret string `json:"secret"`
		} `json:"key"`
	}
	if err := json.Unmarshal(r.Body, &res); err != nil || res.Key.Secret == "" {
		t.Fatalf("approve reply: %v %s", err, r.Body)
	}
	return res.Key.Secret
}

// TestCustomModelOnRunningNode: a node started with --model enforces that
// model in its admin API (its schema refuses, pid4cat's requirements do not
// apply) and writes the model's fields to the model's value indexes.
func TestCustomModelOnRunningNode(t *testing.T) {
	dir := t.TempDir()
	modelFile := filepath.Join(dir, "mini.toml")
	if err := os.WriteFile(modelFile, []byte(miniModelTOML), 0o600); err != nil {
		t.Fatal(err)
	}
	n := startNode(t, filepath.Join(dir, "data"), "--model", modelFile)
	key := onboard(t, n, "MDL")
	c := &http.Client{Timeout: 10 * time.Second}
	coll := n.adminURL() + "/testpid/v2/handles/21.T12345/MDL/"
	create := func(meta map[string]any) reply {
		b, _ := json.Marshal(map[string]any{"url": "https://example.org/mini", "metadata": meta})
		r, err := do(c, "PUT", coll, b, auth(key)...)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, tc := range []struct {
		name string
		meta map[string]any
	}{
		{"four keywords (maxItems 3)", map[string]any{"status": "REGISTERED", "keywords": []string{"a", "b", "c", "d"}}},
		{"keyword not lower-case", map[string]any{"status": "REGISTERED", "keywords": []string{"Bad"}}},
		{"status missing (required)", map[string]any{"keywords": []string{"ok"}}},
		{"status outside the enum", map[string]any{"status": "ACTIVE"}},
		{"field the model lacks", map[string]any{"status": "REGISTERED", "resource_info": map[string]any{"label": "x"}}},
	} {
		if r := create(tc.meta); r.Status != 422 {
			t.Errorf("%s: %d %s, want 422", tc.name, r.Status, r.Body)
		}
	}
	// Valid under mini, though pid4cat would refuse it (no schema_version,
	// resource_info, …).
	r := create(map[string]any{"status": "REGISTERED", "keywords": []string{"catalyst", "sample"}})
	if r.Status != 201 {
		t.Fatalf("valid mini payload: %d %s", r.Status, r.Body)
	}
	var id struct{ Handle string }
	json.Unmarshal(r.Body, &id)
	rr, err := do(c, "GET", n.resolverURL()+"/api/handles/"+id.Handle, nil)
	if err != nil || rr.Status != 200 {
		t.Fatalf("/api/handles/%s: %v %d %s", id.Handle, err, rr.Status, rr.Body)
	}
	body := rr.Body
	var api struct {
		Values []struct {
			Index int32
			Type  string
			Data  struct{ Value any }
		}
	}
	if err := json.Unmarshal(body, &api); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	got := map[int32]string{}
	for _, v := range api.Values {
		got[v.Index] = v.Type
		if v.Index == 17 && v.Data.Value != `["catalyst","sample"]` {
			t.Errorf("KEYWORDS value %v, want the JSON array", v.Data.Value)
		}
	}
	if got[1] != "URL" || got[11] != "STATUS" || got[17] != "KEYWORDS" || got[100] != "HS_ADMIN" {
		t.Errorf("values %v: want URL at 1, STATUS at 11, KEYWORDS at 17, HS_ADMIN at 100 (the model's indexes)", got)
	}
	if !strings.Contains(string(body), `"index":300`) {
		t.Errorf("HS_ADMIN does not name the model's admin index 300: %s", body)
	}
}

// TestDNSZoneOnRunningNode: with --dns-zone the node answers for that zone
// (the handle's suffix, reversed, under the zone) and no longer for the
// default testpid.localhost zone.
func TestDNSZoneOnRunningNode(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	file := filepath.Join(dir, "records.jsonl")
	rec := `{"handle":"21.T12345/ZONE/ITEM","values":[{"index":1,"type":"URL","data":{"format":"string","value":"https://example.org/zoned"},"ttl":3600}]}` + "\n"
	if err := os.WriteFile(file, []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(binPath, "import", "--data", data, file).CombinedOutput(); err != nil {
		t.Fatalf("pidnode import: %v\n%s", err, out)
	}
	n := startNode(t, data, "--dns-zone", "ids.example.org=21.T12345")
	c := &dns.Client{Net: "udp", Timeout: 5 * time.Second}
	query := func(name string) *dns.Msg {
		q := new(dns.Msg)
		q.SetQuestion(name, dns.TypeTXT)
		m, _, err := c.Exchange(q, n.addr["dns"])
		if err != nil {
			t.Fatalf("dns %s: %v", name, err)
		}
		return m
	}
	m := query("ITEM.ZONE.ids.example.org.")
	var txt []string
	for _, rr := range m.Answer {
		if x, ok := rr.(*dns.TXT); ok {
			txt = append(txt, strings.Join(x.Txt, ""))
		}
	}
	if m.Rcode != dns.RcodeSuccess || len(txt) != 1 || txt[0] != "https://example.org/zoned" || !m.Authoritative {
		t.Errorf("custom zone: rcode %s aa=%v TXT %q, want NOERROR, authoritative, the record's URL", dns.RcodeToString[m.Rcode], m.Authoritative, txt)
	}
	if m := query("NOPE.ZONE.ids.example.org."); m.Rcode != dns.RcodeNameError {
		t.Errorf("missing name in the custom zone: rcode %s, want NXDOMAIN", dns.RcodeToString[m.Rcode])
	}
	if m := query("ITEM.ZONE.testpid.localhost."); m.Rcode == dns.RcodeSuccess && len(m.Answer) > 0 {
		t.Errorf("the default zone still answers with --dns-zone: %v", m.Answer)
	}
}
