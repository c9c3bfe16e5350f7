// Command zstddict builds the zstd dictionary cluster mode compresses the
// values it stores in etcd with (cluster/codec.go), and writes it to
// cluster/zstd.dict: `make zstd-dict`.
//
// It runs the admin API in process on a temporary database, with a fixed
// clock and a seeded random source, enrols one SNAA, creates -n pid4cat
// identifiers from payloads drawn from a seeded PRNG (every resource
// category, optional fields, related identifiers), and makes the
// dictionary of the values etcd would hold for them: records, and audit
// entries without their sequence number. The same flags give the same file,
// byte for byte.
//
//	go run ./bench/cmd/zstddict -out cluster/zstd.dict
//
// A shipped dictionary must stay decodable by every node for as long as
// etcd may hold values compressed with it: a new one takes a new ID and
// the old one stays in the decoder (cluster/codec.go).
//
// Part of bench/, imported by nothing.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"time"

	"pidnode/admin"
	"pidnode/bench/internal/enrol"
	"pidnode/handlev"
	"pidnode/registry"
	"pidnode/store"
)

func main() {
	var (
		out  = flag.String("out", "cluster/zstd.dict", "dictionary file to write")
		n    = flag.Int("n", 200, "identifiers to create")
		size = flag.Int("size", 16<<10, "largest dictionary size in bytes")
		seed = flag.Uint64("seed", 1, "PRNG seed of the payloads, the ids and the clock")
	)
	flag.Parse()
	if *n < 1 || *size < 1024 {
		fail(fmt.Errorf("need -n ≥ 1 and -size ≥ 1024"))
	}
	samples, err := generate(*n, *seed)
	if err != nil {
		fail(err)
	}
	recs, audit := samples[:*n], samples[*n:]
	// A raw-content dictionary: whole records, then whole audit entries,
	// up to half the size each, the last ones of each (the first audit
	// entries are the enrolment's). zstd takes it as history every frame may
	// refer to. It compresses these values better than one trained with
	// github.com/klauspost/compress/dict, whose result also varies from run
	// to run (map order).
	var d []byte
	for _, set := range [][][]byte{recs, audit} {
		limit := len(d) + *size/2
		for i := len(set) - 1; i >= 0; i-- {
			if len(d)+len(set[i]) <= limit {
				d = append(d, set[i]...)
			}
		}
	}
	if err := os.WriteFile(*out, d, 0o644); err != nil {
		fail(err)
	}
	raw := 0
	for _, s := range samples {
		raw += len(s)
	}
	fmt.Printf("zstddict: %d bytes from %d values (%d bytes) → %s\n", len(d), len(samples), raw, *out)
}

const opKey = "zstddict-operator-key-0123456789abcdef"

// generate creates n identifiers through the admin API and returns the
// values etcd would hold for them, records first, then audit entries.
func generate(n int, seed uint64) ([][]byte, error) {
	dir, err := os.MkdirTemp("", "zstddict-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	db, err := store.Open(store.Config{Path: filepath.Join(dir, "pidnode.db"), NoSync: true})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	namer, err := handlev.NewNamer(handlev.NamerConfig{Prefix: "21.11145", TestPrefix: "21.T11145"})
	if err != nil {
		return nil, err
	}
	clock := &clock{t: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)}
	srv, err := admin.New(admin.Config{DB: db, Namer: namer, OperatorKey: opKey, Now: clock.now,
		Rand: &seeded{r: rand.NewChaCha8(seedBytes(seed))}, PublicURL: "https://pid.example.org"})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	hc := ts.Client()
	ns, key, err := enrol.SNAA(hc, ts.URL, opKey, "21.11145", "Example Catalysis Lab")
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	url := ts.URL + "/pid/v2/handles/21.11145/" + ns + "/"
	for i := 0; i < n; i++ {
		if err := enrol.Call(hc, "POST", url, key, payload(rng, i), http.StatusCreated, nil); err != nil {
			return nil, err
		}
	}
	var recs, audit [][]byte
	err = db.View(func(tx *store.Tx) error {
		if err := tx.Bolt().Bucket(store.BucketRecords).ForEach(func(_, v []byte) error {
			recs = append(recs, bytes.Clone(v))
			return nil
		}); err != nil {
			return err
		}
		return tx.Bolt().Bucket(store.BucketAudit).ForEach(func(k, v []byte) error {
			if len(k) != 8 {
				return nil // the per-record index
			}
			a, err := registry.AuditWithoutSeq(v)
			if err != nil {
				return err
			}
			audit = append(audit, a)
			return nil
		})
	})
	return append(recs, audit...), err
}

var (
	categories = []string{"COLLECTION", "SAMPLE", "MATERIAL", "DEVICE", "DATA_OBJECT", "DATA_SERVICE"}
	media      = []string{"text/turtle", "application/ld+json", "application/json", "text/html", "text/csv", "application/pdf"}
	relations  = []string{"IS_PART_OF", "HAS_PART", "IS_DERIVED_FROM", "CITES", "IS_DOCUMENTED_BY", "IS_SOURCE_OF", "IS_COLLECTED_BY"}
	words      = []string{"catalyst", "sample", "powder", "reactor", "batch", "copper", "zeolite", "oxide", "spectrum",
		"measurement", "synthesis", "support", "nanoparticle", "run", "series", "calcined", "fresh", "spent", "XRD", "BET"}
	hosts = []string{"landing.example.org", "data.lab.example.edu", "repository.example.net", "catalysis.example.org"}
)

func phrase(r *rand.Rand, n int) string {
	var b []byte
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, words[r.IntN(len(words))]...)
	}
	return string(b)
}

// payload is the i-th create payload: a valid pid4cat create with every
// field the model takes, optional ones drawn at random.
func payload(r *rand.Rand, i int) any {
	host := hosts[r.IntN(len(hosts))]
	info := map[string]any{
		"label":             fmt.Sprintf("%s %d", phrase(r, 1+r.IntN(3)), r.IntN(100000)),
		"resource_category": categories[r.IntN(len(categories))],
	}
	if r.IntN(4) > 0 {
		info["description"] = phrase(r, 4+r.IntN(12))
	}
	var variants []any
	for v := 0; v < 1+r.IntN(3); v++ {
		variants = append(variants, map[string]any{
			"variant_url":     fmt.Sprintf("https://%s/items/%d/%d.%d", host, r.IntN(1000), i, v),
			"media_type":      media[r.IntN(len(media))],
			"encoding_format": "UTF-8",
			"size":            r.IntN(10_000_000),
		})
	}
	info["representation_variants"] = variants
	md := map[string]any{
		"status": "REGISTERED", "schema_version": "v1.0.1", "metadata_license": "CC0-1.0",
		"curation_contact": fmt.Sprintf("curator%d@%s", r.IntN(20), host), "resource_info": info,
	}
	if r.IntN(3) == 0 {
		var rel []any
		for j := 0; j < 1+r.IntN(2); j++ {
			doi := fmt.Sprintf("10.%d/%s.%d", 1000+r.IntN(9000), words[r.IntN(len(words))], r.IntN(100000))
			rel = append(rel, map[string]any{"relation_type": relations[r.IntN(len(relations))],
				"related_identifier": map[string]any{"type": "DoiIdentifier", "identifier": doi, "resolving_url": "https://doi.org/" + doi}})
		}
		md["related_identifiers"] = rel
	}
	b, _ := json.Marshal(map[string]any{"url": fmt.Sprintf("https://%s/items/%d", host, i), "metadata": md})
	return json.RawMessage(b)
}

// clock advances a few milliseconds per reading, from a fixed start.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(3 * time.Millisecond)
	return c.t
}

// seeded is a deterministic io.Reader for admin.Config.Rand.
type seeded struct {
	mu sync.Mutex
	r  *rand.ChaCha8
}

func (s *seeded) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.r.Read(p)
}

func seedBytes(seed uint64) (b [32]byte) {
	for i := range 8 {
		b[i] = byte(seed >> (8 * i))
	}
	return b
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "zstddict:", err)
	os.Exit(1)
}
