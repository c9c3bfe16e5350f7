package e2e

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// TestGeoIPCountryChoice runs the node with --geoip-db over a MaxMind DB
// written here (loopback clients are in DE) and checks that the country
// choice among a 10320/loc value's locations comes before the weights; the
// same record on a node without the database goes by weight.
func TestGeoIPCountryChoice(t *testing.T) {
	w, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "pidnode-Test-Country", RecordSize: 24, IncludeReservedNetworks: true})
	if err != nil {
		t.Fatal(err)
	}
	for cidr, iso := range map[string]string{"127.0.0.0/8": "DE", "::1/128": "DE", "192.0.2.0/24": "US"} {
		_, n, _ := net.ParseCIDR(cidr)
		if err := w.Insert(n, mmdbtype.Map{"country": mmdbtype.Map{"iso_code": mmdbtype.String(iso)}}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	dbFile := filepath.Join(dir, "country.mmdb")
	f, err := os.Create(dbFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	f.Close()

	const handle = "21.T12345/GEO/LOC"
	rec := `{"handle":"` + handle + `","values":[` +
		`{"index":1,"type":"URL","data":{"format":"string","value":"https://legacy.example.org/"}},` +
		`{"index":2,"type":"10320/loc","data":{"format":"string","value":"<locations><location href=\"https://us.example.org/\" country=\"us\" weight=\"1\"/><location href=\"https://de.example.org/\" country=\"de\" weight=\"0\"/></locations>"}}]}` + "\n"
	records := filepath.Join(dir, "records.jsonl")
	if err := os.WriteFile(records, []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"with --geoip-db", []string{"--geoip-db", dbFile}, "https://de.example.org/"},
		{"without", nil, "https://us.example.org/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			if out, err := exec.Command(binPath, "import", "--data", data, records).CombinedOutput(); err != nil {
				t.Fatalf("pidnode import: %v\n%s", err, out)
			}
			n := startNode(t, data, tc.flags...)
			resp, raw := httpGet(t, n.resolverURL()+"/"+handle)
			if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != tc.want {
				t.Errorf("GET %s: %d Location %q, want 302 %q\n%s", handle, resp.StatusCode, resp.Header.Get("Location"), tc.want, raw)
			}
		})
	}
}
