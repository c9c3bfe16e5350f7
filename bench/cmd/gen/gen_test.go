package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pidnode/handlev"
)

func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	m, err := generate(config{N: 2000, Prefix: "21.T12345", Svc: "svc", NS: "BNC", Seed: 1, Out: dir, Requests: 500, ZipfS: 1.1, Records: "records.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, m.RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	seen := map[string]bool{}
	for sc.Scan() {
		h, vs, err := handlev.DecodeRecordJSON(sc.Bytes())
		if err != nil {
			t.Fatalf("DecodeRecordJSON(line %d) = %v", len(seen)+1, err)
		}
		if seen[h] {
			t.Fatalf("handle %s generated twice", h)
		}
		seen[h] = true
		parts := strings.Split(h, "/")
		if len(parts) != 4 {
			t.Fatalf("handle %q: want prefix/svc/ns/id", h)
		}
		if looks, valid := handlev.ValidGenerated([]byte(parts[2]), []byte(parts[3])); !looks || !valid {
			t.Fatalf("ValidGenerated(%q, %q) = %v, %v, want true, true", parts[2], parts[3], looks, valid)
		}
		if len(vs) != 8 || vs[0].Type != "URL" || vs[7].Type != "HS_ADMIN" {
			t.Fatalf("record %s: %d values, want 8 with URL first and HS_ADMIN last", h, len(vs))
		}
		if !json.Valid(vs[5].Data) || len(vs[5].Data) < 200 || len(vs[5].Data) > 1000 {
			t.Fatalf("RESOURCE of %s: %d bytes, valid JSON %v; want a few hundred bytes of JSON", h, len(vs[5].Data), json.Valid(vs[5].Data))
		}
		if !json.Valid(vs[6].Data) {
			t.Fatalf("CHANGES of %s is not JSON: %s", h, vs[6].Data)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2000 {
		t.Fatalf("read %d records, want 2000", len(seen))
	}
	for _, name := range []string{m.UniformFile, m.ZipfFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) != 500 {
			t.Fatalf("%s: %d requests, want 500", name, len(lines))
		}
		for _, p := range lines {
			if !seen[strings.TrimPrefix(p, "/")] {
				t.Fatalf("%s: path %q is not a generated handle", name, p)
			}
		}
	}
}

func TestPermuteIsInjective(t *testing.T) {
	seen := make(map[uint64]bool, 1<<16)
	for i := uint64(0); i < 1<<16; i++ {
		v := permute(i, 42)
		if v >= 1<<idBits || seen[v] {
			t.Fatalf("permute(%d) = %d: out of range or repeated", i, v)
		}
		seen[v] = true
	}
}
