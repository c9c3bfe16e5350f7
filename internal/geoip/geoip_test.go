package geoip

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// WriteTestDB writes a MaxMind DB to dir/name mapping each CIDR network to
// its record, for tests; reserved networks (loopback, documentation) are
// allowed so that test clients on 127.0.0.1 have a country.
func writeTestDB(t testing.TB, name string, nets map[string]mmdbtype.Map) string {
	t.Helper()
	w, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "pidnode-Test-Country", RecordSize: 24, IncludeReservedNetworks: true})
	if err != nil {
		t.Fatal(err)
	}
	for cidr, rec := range nets {
		_, n, err := net.ParseCIDR(cidr)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Insert(n, rec); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func country(iso string) mmdbtype.Map {
	return mmdbtype.Map{"country": mmdbtype.Map{"iso_code": mmdbtype.String(iso), "names": mmdbtype.Map{"en": mmdbtype.String("x")}}}
}

func TestCountry(t *testing.T) {
	path := writeTestDB(t, "c.mmdb", map[string]mmdbtype.Map{
		"192.0.2.0/24":    country("DE"),
		"127.0.0.0/8":     country("us"),
		"2001:db8::/32":   country("FR"),
		"198.51.100.0/24": {"registered_country": mmdbtype.Map{"iso_code": mmdbtype.String("GB")}},
		"203.0.113.0/24":  country("XYZ"),
	})
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tests := []struct {
		ip   string
		want string // "" for unknown
	}{
		{"192.0.2.77", "DE"},
		{"127.0.0.1", "us"},
		{"::ffff:192.0.2.1", "DE"},
		{"2001:db8::1", "FR"},
		{"198.51.100.1", ""}, // no country, only a registered country
		{"203.0.113.1", ""},  // not a two-letter code
		{"8.8.8.8", ""},
		{"2001:4860::1", ""},
	}
	for _, tc := range tests {
		code, ok := d.Country(netip.MustParseAddr(tc.ip))
		got := ""
		if ok {
			got = string(code[:])
		}
		if got != tc.want {
			t.Errorf("Country(%s) = %q, want %q", tc.ip, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { d.Country(netip.MustParseAddr("192.0.2.77")) }); n > 2 {
		t.Errorf("Country allocates %v times per call", n)
	}
}

func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.mmdb")
	if err := os.WriteFile(junk, []byte("not a maxmind database"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(junk); err == nil {
		t.Error("Open of a file that is not a MaxMind DB succeeded")
	}
	if _, err := Open(filepath.Join(dir, "missing.mmdb")); err == nil {
		t.Error("Open of a missing file succeeded")
	}
	noCountry := writeTestDB(t, "asn.mmdb", map[string]mmdbtype.Map{
		"192.0.2.0/24": {"autonomous_system_number": mmdbtype.Uint32(64496)},
	})
	if _, err := Open(noCountry); !errors.Is(err, ErrNoCountry) {
		t.Errorf("Open of a database without countries: %v, want ErrNoCountry", err)
	}
}
