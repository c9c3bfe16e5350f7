package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"pidnode/handlev"
)

func main() {
	var (
		n        = flag.Int("n", 100_000, "number of identifiers")
		prefix   = flag.String("prefix", "21.T12345", "handle prefix")
		svc      = flag.String("svc", "svc", "service segment")
		ns       = flag.String("ns", "BNC", "namespace")
		seed     = flag.Uint64("seed", 1, "PRNG seed; the same seed gives the same files")
		out      = flag.String("out", "bench/data", "output directory")
		requests = flag.Int("requests", 200_000, "length of each request stream")
		zipfS    = flag.Float64("zipf-s", 1.1, "Zipf exponent of the popular stream (> 1)")
		tombs    = flag.Int("tombstones", 0, "instead of a dataset, write this many OBSOLETED records of -ns to tombstones.jsonl and a uniform stream of -requests of their paths to tombstone.paths")
		records  = flag.String("records", "records.jsonl", "records file name inside -out; - writes them to stdout (pipe into `pidnode import -`)")
	)
	flag.Parse()
	if *n < 1 || *requests < 1 || *zipfS <= 1 {
		fmt.Fprintln(os.Stderr, "gen: need -n ≥ 1, -requests ≥ 1, -zipf-s > 1")
		os.Exit(2)
	}
	if *tombs > 0 {
		cfg := config{N: *tombs, Prefix: *prefix, Svc: *svc, NS: *ns, Seed: *seed, Out: *out, Requests: *requests}
		if err := generateTombstones(cfg, *tombs); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		return
	}
	start := time.Now()
	m, err := generate(config{N: *n, Prefix: *prefix, Svc: *svc, NS: *ns, Seed: *seed, Out: *out, Requests: *requests, ZipfS: *zipfS, Records: *records})
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	m.Seconds = time.Since(start).Seconds()
	if err := writeMeta(filepath.Join(*out, "meta.json"), m); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "gen: %d records, %d requests per stream (zipf distinct %d) in %s in %.1fs\n",
		m.N, m.Requests, m.ZipfDistinct, *out, m.Seconds)
}

type config struct {
	N           int
	Prefix, Svc string
	NS          string
	Seed        uint64
	Out         string
	Requests    int
	ZipfS       float64
	Records     string
}

// meta describes a generated dataset; the suite reads it.
type meta struct {
	N              int     `json:"n"`
	Prefix         string  `json:"prefix"`
	NS             string  `json:"ns"`
	Seed           uint64  `json:"seed"`
	Requests       int     `json:"requests"`
	ZipfS          float64 `json:"zipf_s"`
	ZipfDistinct   int     `json:"zipf_distinct"`
	RecordBytes    int64   `json:"record_bytes"`
	Seconds        float64 `json:"seconds"`
	SampleHandle   string  `json:"sample_handle"`
	SampleURL      string  `json:"sample_url"`
	UniformFile    string  `json:"uniform_file"`
	ZipfFile       string  `json:"zipf_file"`
	RecordsFile    string  `json:"records_file"`
	NginxMapFile   string  `json:"nginx_map_file"`
	BaselineMapTSV string  `json:"baseline_map_file"`
}

func writeMeta(path string, m *meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// idBits is the number of random bits Mint uses: 8 characters × 5 bits.
const idBits = 40

// permute is a seeded bijection on [0, 2^40): odd multiplications and
// xor-shifts are each invertible mod 2^40, so distinct i give distinct ids and
// no collision set is needed even for 10M identifiers.
func permute(i, seed uint64) uint64 {
	const mask = 1<<idBits - 1
	x := (i + seed*0x9E3779B97F4A7C15) & mask
	x = (x * 0xD1B54A32D193) & mask
	x ^= x >> 19
	x = (x * 0x94D049BB1331) & mask
	x ^= x >> 23
	x = (x * 0xBF58476D1CE5) & mask
	x ^= x >> 17
	return x
}

// idReader hands Mint the 8 bytes whose low 5 bits are the 40-bit value.
type idReader struct {
	v   uint64
	off int
}

func (r *idReader) Read(p []byte) (int, error) {
	k := 0
	for k < len(p) && r.off < 8 {
		p[k] = byte(r.v>>(5*(7-r.off))) & 31
		k++
		r.off++
	}
	return k, nil
}

// idFor returns the generated id (XXXX-XXXX-C) of identifier i.
func idFor(ns string, i int, seed uint64) (string, error) {
	return handlev.Mint(ns, &idReader{v: permute(uint64(i), seed)})
}

var (
	categories = [...]string{"SAMPLE", "MATERIAL", "DEVICE", "DATA_OBJECT", "DATA_SERVICE", "COLLECTION"}
	media      = [...]string{"text/turtle", "application/ld+json", "application/json", "text/html", "application/pdf"}
	words      = [...]string{"catalyst", "zeolite", "operando", "spectroscopy", "reactor", "kinetics", "oxide",
		"ammonia", "synthesis", "platinum", "support", "XRD", "pattern", "activity", "selectivity", "batch"}
)

func generate(cfg config) (*meta, error) {
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, err
	}
	var err error
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5DEECE66D))
	m := &meta{N: cfg.N, Prefix: cfg.Prefix, NS: cfg.NS, Seed: cfg.Seed, Requests: cfg.Requests, ZipfS: cfg.ZipfS,
		RecordsFile: cfg.Records, UniformFile: "uniform.paths", ZipfFile: "zipf.paths",
		NginxMapFile: "nginx-map.conf", BaselineMapTSV: "baseline-map.tsv"}

	files := map[string]*bufio.Writer{}
	var opened []*os.File
	open := func(name string) (*bufio.Writer, error) {
		f, err := os.Create(filepath.Join(cfg.Out, name))
		if err != nil {
			return nil, err
		}
		opened = append(opened, f)
		w := bufio.NewWriterSize(f, 1<<20)
		files[name] = w
		return w, nil
	}
	var rec *bufio.Writer
	if cfg.Records == "-" {
		rec = bufio.NewWriterSize(os.Stdout, 1<<20)
		files["-"] = rec
	} else if rec, err = open(m.RecordsFile); err != nil {
		return nil, err
	}
	nmap, err := open(m.NginxMapFile)
	if err != nil {
		return nil, err
	}
	bmap, err := open(m.BaselineMapTSV)
	if err != nil {
		return nil, err
	}

	// Every path is kept (short strings) so the request streams can index them.
	paths := make([]string, cfg.N)
	var (
		line []byte
		rb   recordBuf
	)
	for i := 0; i < cfg.N; i++ {
		var path, url string
		line, path, url, err = rb.appendRecord(line[:0], &cfg, rng, i, "REGISTERED")
		if err != nil {
			return nil, err
		}
		handle := path[1:]
		paths[i] = path
		m.RecordBytes += int64(len(line))
		if _, err := rec.Write(line); err != nil {
			return nil, err
		}
		fmt.Fprintf(nmap, "%s %s;\n", path, url)
		bmap.WriteString(path)
		bmap.WriteByte('\t')
		bmap.WriteString(url)
		bmap.WriteByte('\n')
		if i == 0 {
			m.SampleHandle, m.SampleURL = handle, url
		}
	}

	uni, err := open(m.UniformFile)
	if err != nil {
		return nil, err
	}
	for k := 0; k < cfg.Requests; k++ {
		uni.WriteString(paths[rng.IntN(cfg.N)])
		uni.WriteByte('\n')
	}
	zw, err := open(m.ZipfFile)
	if err != nil {
		return nil, err
	}
	// Popularity rank r maps to identifier rank[r], a seeded shuffle, so the
	// popular identifiers are spread over the key space as in real use.
	zsrc := rand.New(rand.NewPCG(cfg.Seed+1, 7))
	z := rand.NewZipf(rand.New(rand.NewPCG(cfg.Seed+2, 11)), cfg.ZipfS, 1, uint64(cfg.N-1))
	seen := make(map[uint64]struct{})
	off := zsrc.Uint64() // rotate ranks: cheap, seeded, still a bijection
	for k := 0; k < cfg.Requests; k++ {
		r := z.Uint64()
		seen[r] = struct{}{}
		i := (permute(r, cfg.Seed+3) + off) % uint64(cfg.N)
		zw.WriteString(paths[i])
		zw.WriteByte('\n')
	}
	m.ZipfDistinct = len(seen)

	for _, w := range files {
		if err := w.Flush(); err != nil {
			return nil, err
		}
	}
	for _, f := range opened {
		if err := f.Close(); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// recordBuf holds the scratch space of appendRecord.
type recordBuf struct {
	data, json14, json16 []byte
	vals                 [8]handlev.Value
}

// base is the creation time of the generated records.
var base = time.Date(2025, 3, 11, 9, 0, 0, 0, time.UTC).Unix()

// appendRecord appends identifier i's record as a JSON Lines line, with the
// given metadata status, and returns its resolver path and landing URL.
func (b *recordBuf) appendRecord(dst []byte, cfg *config, rng *rand.Rand, i int, status string) (line []byte, path, url string, err error) {
	id, err := idFor(cfg.NS, i, cfg.Seed)
	if err != nil {
		return dst, "", "", err
	}
	handle := cfg.Prefix + "/" + cfg.Svc + "/" + cfg.NS + "/" + id
	url = "https://landing.example.org/" + cfg.NS + "/item/" + strconv.Itoa(i)
	ts := base + int64(i%86400)*7 + int64(rng.IntN(3600))
	b.json14 = resourceJSON(b.json14[:0], rng, i)
	b.json16 = changesJSON(b.json16[:0], ts, i)
	b.data = handlev.AppendAdmin(b.data[:0], handlev.Admin{Mask: handlev.AdminAll, Handle: "0.NA/" + cfg.Prefix, Index: 200})
	set := func(k int, idx int32, typ string, v []byte) {
		b.vals[k] = handlev.Value{Index: idx, Type: typ, Data: v, TTLType: handlev.TTLRelative, TTL: 86400,
			Timestamp: ts, Perm: handlev.PermDefault}
	}
	set(0, 1, handlev.TypeURL, []byte(url))
	set(1, 10, handlev.TypeEmail, []byte("curation-"+strconv.Itoa(i%997)+"@lab.example.org"))
	set(2, 11, handlev.TypeStatus, []byte(status))
	set(3, 12, "SCHEMA_VER", []byte("v1.0.1"))
	set(4, 13, "METADATA_LICENSE", []byte("CC0-1.0"))
	set(5, 14, "RESOURCE", b.json14)
	set(6, 16, "CHANGES", b.json16)
	set(7, 100, handlev.TypeAdmin, b.data)
	dst = handlev.AppendRecordJSON(dst, handle, b.vals[:])
	return append(dst, '\n'), "/" + handle, url, nil
}

// generateTombstones writes k records of cfg.NS whose status is OBSOLETED
// (the resolver answers them with its 410 tombstone page) to
// tombstones.jsonl in cfg.Out, and a stream of cfg.Requests of their paths,
// uniformly drawn, to tombstone.paths.
func generateTombstones(cfg config, k int) error {
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x70AB))
	var (
		recs, stream bytes.Buffer
		rb           recordBuf
		line         []byte
		paths        = make([]string, k)
	)
	for i := range k {
		var path string
		var err error
		if line, path, _, err = rb.appendRecord(line[:0], &cfg, rng, i, "OBSOLETED"); err != nil {
			return err
		}
		recs.Write(line)
		paths[i] = path
	}
	for range cfg.Requests {
		stream.WriteString(paths[rng.IntN(k)])
		stream.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(cfg.Out, "tombstones.jsonl"), recs.Bytes(), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(cfg.Out, "tombstone.paths"), stream.Bytes(), 0o644)
}

// resourceJSON appends compact resource_info JSON text (index 14) of a few
// hundred bytes, shaped like the pid4cat model's.
func resourceJSON(dst []byte, rng *rand.Rand, i int) []byte {
	w := func() string { return words[rng.IntN(len(words))] }
	dst = append(dst, `{"label":`...)
	dst = handlev.AppendJSONString(dst, "Sample "+strconv.Itoa(i)+" "+w()+" "+w())
	dst = append(dst, `,"description":`...)
	dst = handlev.AppendJSONString(dst, "Measured "+w()+" of "+w()+" "+w()+" on "+w()+" "+w()+"; "+w()+" "+w()+" batch "+strconv.Itoa(i%1000)+".")
	dst = append(dst, `,"resource_category":"`...)
	dst = append(dst, categories[i%len(categories)]...)
	dst = append(dst, `","representation_variants":[`...)
	for v := 0; v < 2; v++ {
		if v > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"variant_url":"https://data.example.org/objects/`...)
		dst = strconv.AppendInt(dst, int64(i), 10)
		dst = append(dst, '/')
		dst = strconv.AppendInt(dst, int64(v), 10)
		dst = append(dst, `","media_type":"`...)
		dst = append(dst, media[(i+v)%len(media)]...)
		dst = append(dst, `","encoding_format":"UTF-8","size":`...)
		dst = strconv.AppendInt(dst, int64(rng.IntN(1<<24)), 10)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}

// changesJSON appends the change log (index 16) with the creation entry.
func changesJSON(dst []byte, ts int64, i int) []byte {
	dst = append(dst, `[{"datetime_log":"`...)
	dst = time.Unix(ts, 0).UTC().AppendFormat(dst, time.RFC3339)
	dst = append(dst, `","has_agent":{"name":"Bench SNAA","email_address":"snaa@lab.example.org","role":"OWNER"},"changed_field":"STATUS","description":"created, record `...)
	dst = strconv.AppendInt(dst, int64(i), 10)
	return append(dst, `"}]`...)
}
