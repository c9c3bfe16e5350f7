package hdl_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"pidnode/handlev"
	"pidnode/handlev/hsmsg"
	"pidnode/resolver/hdl"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs:\n got %s\nwant %s", name, got, want)
	}
}

func TestSiteInfoJSON(t *testing.T) {
	cfg := hdl.SiteConfig{
		Serial: 3, Address: netip.MustParseAddr("192.0.2.10"), Port: 2641, Description: "pidnode example",
		Interfaces: []hsmsg.Interface{
			{Type: hsmsg.IfQuery, Protocol: hsmsg.ProtoTCP, Port: 2641},
			{Type: hsmsg.IfQuery, Protocol: hsmsg.ProtoUDP, Port: 2641},
			{Type: hsmsg.IfQuery, Protocol: hsmsg.ProtoHTTP, Port: 8000},
		},
	}
	t.Run("without key", func(t *testing.T) {
		b, err := hdl.SiteInfoJSON(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		goldenFile(t, "siteinfo_nokey.json", b)
	})
	t.Run("with key", func(t *testing.T) {
		// A fixed key so the golden file is stable: read from testdata.
		key, err := hdl.LoadKey(filepath.Join("testdata", "test_key.pem"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := hdl.SiteInfoJSON(cfg, &key.PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		goldenFile(t, "siteinfo_key.json", b)
		var j struct {
			ProtocolVersion string
			Servers         []struct {
				Address   string
				PublicKey struct {
					Format string
					Value  struct{ Kty, N, E string }
				}
			}
		}
		if err := json.Unmarshal(b, &j); err != nil {
			t.Fatal(err)
		}
		if j.ProtocolVersion != "2.11" || j.Servers[0].Address != "192.0.2.10" || j.Servers[0].PublicKey.Format != "key" ||
			j.Servers[0].PublicKey.Value.Kty != "RSA" || j.Servers[0].PublicKey.Value.E != "AQAB" {
			t.Errorf("siteinfo %+v", j)
		}
	})
	t.Run("IPv6", func(t *testing.T) {
		c := cfg
		c.Address = netip.MustParseAddr("2001:db8::7")
		b, err := hdl.SiteInfoJSON(c, nil)
		if err != nil {
			t.Fatal(err)
		}
		var j struct{ Servers []struct{ Address string } }
		json.Unmarshal(b, &j)
		if j.Servers[0].Address != "2001:db8::7" {
			t.Errorf("address %q", j.Servers[0].Address)
		}
	})
}

func TestKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hdl.key")
	if err := hdl.GenerateKey(path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v", fi.Mode(), err)
	}
	key, err := hdl.LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if key.N.BitLen() != 2048 {
		t.Errorf("key of %d bits", key.N.BitLen())
	}
	if err := hdl.GenerateKey(path); !errors.Is(err, fs.ErrExist) {
		t.Errorf("GenerateKey over an existing file: %v, want an error matching fs.ErrExist", err)
	}
	// An existing file is refused before anything is made or written
	// beside it (a node calls GenerateKey on every start): here in a
	// directory where nothing can be created.
	if _, err := os.Stat("/proc/self/status"); err == nil {
		if err := hdl.GenerateKey("/proc/self/status"); !errors.Is(err, fs.ErrExist) {
			t.Errorf("GenerateKey over an existing file in /proc/self: %v, want an error matching fs.ErrExist before any write", err)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.pem")
	os.WriteFile(bad, []byte("not a key"), 0o600)
	if _, err := hdl.LoadKey(bad); err == nil {
		t.Error("LoadKey accepted garbage")
	}
}

func TestSiteValueRoundTrip(t *testing.T) {
	key, err := hdl.LoadKey(filepath.Join("testdata", "test_key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	v := hdl.SiteValue(hdl.SiteConfig{Address: netip.MustParseAddr("192.0.2.10"), Port: 2641}, &key.PublicKey, 1)
	b := handlev.AppendValue(nil, &v)
	got, n, err := handlev.DecodeValue(b)
	if err != nil || n != len(b) || !got.Equal(&v) {
		t.Fatalf("value round trip: %v (%d of %d bytes)", err, n, len(b))
	}
	site, err := hsmsg.DecodeSite(got.Data)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(hsmsg.AppendSite(nil, &site), v.Data) {
		t.Error("site data does not re-encode identically")
	}
	pub, err := hsmsg.ParseRSAPublicKey(site.Servers[0].PublicKey)
	if err != nil || !pub.Equal(&key.PublicKey) {
		t.Errorf("published key: %v", err)
	}
}
