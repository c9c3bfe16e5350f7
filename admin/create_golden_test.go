package admin

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

// seededRand is a deterministic io.Reader for Config.Rand.
type seededRand struct {
	mu sync.Mutex
	r  *rand.ChaCha8
}

func (s *seededRand) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.r.Read(p)
}

// goldenCreates are create requests of every kind the create route answers:
// valid payloads with strings that JSON escapes differently (HTML, U+2028,
// control characters, non-ASCII, escapes in the request), numbers as sent,
// optional fields, and invalid ones (problem+json).
var goldenCreates = []struct {
	method, path, body string
	hdr                []string
}{
	{"POST", "", `{"url":"https://landing.example.org/item/1","metadata":{"status":"REGISTERED","schema_version":"v1.0.1","metadata_license":"CC0-1.0","curation_contact":"pids@example.org","resource_info":{"label":"Sample 1","description":"A catalyst sample","resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://landing.example.org/item/1.ttl","media_type":"text/turtle","encoding_format":"UTF-8","size":12345}]}}}`, nil},
	{"PUT", "", `{ "metadata" : { "resource_info" : { "representation_variants" : [ { "size" : 1000, "media_type" : "application/ld+json", "variant_url" : "https://x.example.org/a?b=1&c=<2>" } , {"variant_url":"https://x.example.org/\u00e9t\u00e9","size":-0} ], "resource_category" : "DATA_OBJECT", "label" : "<b>Tom & Jerry</b> \u2028 line\u2029 \"q\" \\ \/ \t tab ü 日本 😀 \ud83d\ude00" }, "status" : "REGISTERED", "schema_version" : "v1.0.1", "metadata_license" : "CC0-1.0", "curation_contact" : "a+b@example.org" }, "url" : "https://landing.example.org/item/2?x=<y>&z=1" }`, nil},
	{"PUT", "", `{"url":"https://landing.example.org/item/3","metadata":{"status":"REGISTERED","schema_version":"v1.0.1","metadata_license":"CC0-1.0","curation_contact":"pids@example.org","resource_info":{"resource_category":"COLLECTION","representation_variants":[{"variant_url":"https://landing.example.org/3","size":12345678901234},{"variant_url":"https://landing.example.org/3b","size":0,"encoding_format":"\u0001\u001f\u007f\u0080\u009f"}]},"related_identifiers":[{"relation_type":"IS_PART_OF","related_identifier":{"type":"DoiIdentifier","identifier":"10.1234/abc","resolving_url":"https://doi.org/10.1234/abc"}},{"relation_type":"CITES","related_identifier":{"type":"HandleIdentifier","identifier":"21.T11148/xyz"},"datetime_log":"2025-03-11T09:43:14Z"}]}}`, nil},
	{"PUT", "", `{"url":"https://landing.example.org/item/4","metadata":{"status":"REGISTERED","schema_version":"v1.0.1","metadata_license":"CC0-1.0","curation_contact":"pids@example.org","resource_info":{"label":"","description":"` + strings.Repeat("long ", 300) + `","resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://landing.example.org/4","size":1}]},"related_identifiers":[]}}`, []string{"Idempotency-Key", "idem-1"}},
	{"PUT", "", `{"url":"https://landing.example.org/item/4","metadata":{"status":"REGISTERED","schema_version":"v1.0.1","metadata_license":"CC0-1.0","curation_contact":"pids@example.org","resource_info":{"label":"","description":"` + strings.Repeat("long ", 300) + `","resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://landing.example.org/4","size":1}]},"related_identifiers":[]}}`, []string{"Idempotency-Key", "idem-1"}},
	{"PUT", "", `{"url":"https://landing.example.org/item/5","metadata":{"status":"REGISTERED","schema_version":"v1.0.1","metadata_license":"CC0-1.0","curation_contact":"pids@example.org","resource_info":{"resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://landing.example.org/5"}]}}}`, []string{"Idempotency-Key", "idem-1"}},
	{"PUT", "custom", `{"url":"https://landing.example.org/item/6","metadata":{"status":"REGISTERED","schema_version":"v1.0.1","metadata_license":"CC0-1.0","curation_contact":"pids@example.org","resource_info":{"resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://landing.example.org/6"}]}}}`, nil},
	{"PUT", "custom", `{"url":"https://landing.example.org/item/6","metadata":{"status":"REGISTERED","schema_version":"v1.0.1","metadata_license":"CC0-1.0","curation_contact":"pids@example.org","resource_info":{"resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://landing.example.org/6"}]}}}`, nil},
	{"PUT", "inm", `{"url":"https://landing.example.org/item/7","metadata":{"status":"REGISTERED","schema_version":"v1.0.1","metadata_license":"CC0-1.0","curation_contact":"pids@example.org","resource_info":{"resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://landing.example.org/7"}]}}}`, []string{"If-None-Match", "*"}},
	{"PUT", "inm", `{"url":"https://landing.example.org/item/7","metadata":{"status":"REGISTERED","schema_version":"v1.0.1","metadata_license":"CC0-1.0","curation_contact":"pids@example.org","resource_info":{"resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://landing.example.org/7"}]}}}`, []string{"If-None-Match", "*"}},
	// Invalid payloads.
	{"PUT", "", `{"url":"ftp://x","metadata":{"status":"NOPE","extra":1,"resource_info":{"resource_category":"SAMPLE","representation_variants":[{"variant_url":"nope","size":-1,"media_type":"bad type","other":true},{"size":1.5},{"size":"1"}],"zzz":null}},"more":[]}`, nil},
	{"PUT", "", `{"url":"https://landing.example.org/x","metadata":{"status":"REGISTERED","status":"DEPRECATED"}}`, nil},
	{"PUT", "", `{"url":"https://landing.example.org/x","metadata":{"label":"\ud800"}}`, nil},
	{"PUT", "", `{"url":"https://landing.example.org/x","metadata":` + strings.Repeat("[", 20) + strings.Repeat("]", 20) + `}`, nil},
	{"PUT", "", "{\"url\":\"https://landing.example.org/\xff\"}", nil},
	{"PUT", "", `{"url":"https://landing.example.org/x",}`, nil},
	{"PUT", "", `[1,2]`, nil},
	{"PUT", "", `{"url":null,"metadata":null}`, nil},
	{"PUT", "", `{"url":1,"metadata":"x"}`, nil},
	{"PUT", "", `{"url":"https://landing.example.org/x","metadata":{"status":"REGISTERED","schema_version":"v1.0.1","metadata_license":"CC0-1.0","curation_contact":"pids@example.org","resource_info":{"resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://landing.example.org/x","size":99999999999999999999}]},"related_identifiers":[{"relation_type":"CITES","related_identifier":{"type":"DoiIdentifier","identifier":"no"}},{"relation_type":"X"},null]}}`, nil},
	{"PUT", "", `{"url":"https://landing.example.org/x","metadata":{"status":"REGISTERED","schema_version":"v1.0.1","metadata_license":"CC-BY","curation_contact":"pids@example.org","resource_info":{"resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://landing.example.org/x","size":1e3},{"size":1.0}]}}}`, nil},
	{"PUT", "", `  `, nil},
	// Other routes that share the create's parts: bulk (prepareCreate),
	// reading and history (Extract), update (Build).
	{"POST", "bulk", `[{"url":"https://landing.example.org/b/1","metadata":{"status":"REGISTERED","schema_version":"v1.0.1","metadata_license":"CC0-1.0","curation_contact":"pids@example.org","resource_info":{"label":"b\u00e9 <1>","resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://landing.example.org/b/1","size":7}]}}},{"id":"bulk-x","url":"https://landing.example.org/b/2","metadata":{"status":"REGISTERED","schema_version":"v1.0.1","metadata_license":"CC0-1.0","curation_contact":"pids@example.org","resource_info":{"resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://landing.example.org/b/2"}]}}},{"url":"nope"}]`, nil},
	{"GET", "first", "", nil},
	{"GET", "first/history", "", nil},
	{"PUT", "first", `{"metadata":{"resource_info":{"label":"changed <&>","resource_category":"MATERIAL","representation_variants":[{"variant_url":"https://landing.example.org/u"}]},"status":"REGISTERED"}}`, nil},
}

// TestCreateGolden sends goldenCreates with a fixed clock and randomness and
// compares every reply (status, headers, body) and the whole database
// afterwards (records, audit entries and their indexes, URL index,
// idempotency records) with testdata/create_golden.txt, byte for byte: the
// create path's encoders must not change what a client or the store sees.
func TestCreateGolden(t *testing.T) {
	now := time.Date(2026, 3, 11, 10, 43, 14, 123456789, time.FixedZone("CET", 3600))
	e := newEnv(t, func(c *Config) {
		c.Now = func() time.Time { return now }
		c.Rand = &seededRand{r: rand.NewChaCha8([32]byte{1, 2, 3})}
	})
	a := e.snaa(map[string]any{"namespace": "K7Q", "custom_ids": true})
	key := a.Key.Secret
	coll := "/pid/v2/handles/21.12345/K7Q/"
	var out bytes.Buffer
	first := "" // the Location of the first identifier created
	for i, c := range goldenCreates {
		path := coll
		switch c.path {
		case "custom":
			path = "/pid/v2?customid=sample/42.a"
		case "inm":
			path = coll + "batch-7"
		case "bulk":
			path = coll + "bulk"
		case "first":
			path = first
		case "first/history":
			path = first + "/history"
		}
		method := c.method
		var body any
		if c.body != "" {
			body = []byte(c.body)
		}
		r := e.do(method, path, key, body, c.hdr...)
		if first == "" && r.Status == http.StatusCreated {
			first = r.Header.Get("Location")
		}
		fmt.Fprintf(&out, "=== %d %s %s\n%d\n", i, method, path, r.Status)
		var names []string
		for k := range r.Header {
			if k != "Date" {
				names = append(names, k)
			}
		}
		slices.Sort(names)
		for _, k := range names {
			fmt.Fprintf(&out, "%s: %q\n", k, r.Header[k])
		}
		fmt.Fprintf(&out, "%s\n", r.Body)
	}
	e.close()
	db, err := bbolt.Open(e.path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			fmt.Fprintf(&out, "### bucket %q seq %d\n", name, b.Sequence())
			return b.ForEach(func(k, v []byte) error {
				if v == nil {
					fmt.Fprintf(&out, "%q (bucket)\n", k)
					return nil
				}
				fmt.Fprintf(&out, "%q = %q\n", k, v)
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "create_golden.txt")
	if *updateGolden {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		got := filepath.Join(t.TempDir(), "create_golden.txt")
		os.WriteFile(got, out.Bytes(), 0o644)
		gl, wl := strings.Split(out.String(), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < min(len(gl), len(wl)); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("differs from %s at line %d (output in %s):\n got %s\nwant %s", golden, i+1, got, gl[i], wl[i])
			}
		}
		t.Fatalf("differs from %s in length (%d lines, want %d; output in %s)", golden, len(gl), len(wl), got)
	}
}
