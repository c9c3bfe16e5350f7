package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"pidnode/handlev"
)

// goldenRecords are sampleRecords plus the shapes export must render: an
// absolute TTL with base64 data, a record with no values.
func goldenRecords() []Stored {
	recs := sampleRecords()
	recs = append(recs, Stored{Version: 1, Record: handlev.Record{Handle: "21.T11148/ABS", Values: []handlev.Value{
		{Index: 1, Type: handlev.TypeURL, Data: []byte("https://example.org/abs"), TTLType: handlev.TTLAbsolute, TTL: 2000000000, Timestamp: 1700000000, Perm: handlev.PermDefault},
		{Index: 2, Type: "BLOB", Data: []byte{0, 1, 2, 0xff, 0xfe, '\n'}, TTL: 60, Perm: handlev.PermDefault},
		{Index: 3, Type: handlev.TypeEmail, Data: []byte(`"quoted" \ back`), TTL: 86400, Perm: handlev.PermDefault},
	}}})
	return recs
}

func TestExportGolden(t *testing.T) {
	db := openTest(t, "", true)
	recs := goldenRecords()
	putAll(t, db, recs)
	var out bytes.Buffer
	if err := db.Export(&out); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "export.golden")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./store -update to create it)", err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("Export differs from %s:\ngot:\n%s\nwant:\n%s", golden, out.Bytes(), want)
	}

	// export → import into a fresh DB → export: the same bytes, the same values.
	fresh := openTest(t, "", true)
	start := time.Now()
	n, err := fresh.Import(bytes.NewReader(want), sampleKey)
	if err != nil || n != len(recs) {
		t.Fatalf("Import(golden) = %d, %v; want %d, nil", n, err, len(recs))
	}
	var again bytes.Buffer
	if err := fresh.Export(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), want) {
		t.Fatalf("export → import → export changed the bytes:\ngot:\n%s\nwant:\n%s", again.Bytes(), want)
	}
	for _, r := range recs {
		key, _ := sampleKey(r.Record.Handle)
		got, ok, err := fresh.Get(key)
		if err != nil || !ok {
			t.Fatalf("Get(%q) after import = _, %v, %v", key, ok, err)
		}
		if !reflect.DeepEqual(normalize(Stored{Record: got.Record}), normalize(Stored{Record: r.Record})) {
			t.Errorf("imported %q =\n%+v\nwant\n%+v", key, got.Record, r.Record)
		}
		if got.Version != 1 || !got.Created.Equal(got.Updated) || got.Created.Before(start.Add(-time.Second)) {
			t.Errorf("imported %q: version %d, created %v, updated %v; want 1 and now", key, got.Version, got.Created, got.Updated)
		}
	}

	// Importing again replaces: same values, version bumped, created kept.
	firstGet, _, _ := fresh.Get("21.T11148/ABS")
	time.Sleep(2 * time.Millisecond)
	if _, err := fresh.Import(bytes.NewReader(want), sampleKey); err != nil {
		t.Fatal(err)
	}
	second, _, _ := fresh.Get("21.T11148/ABS")
	if second.Version != 2 || !second.Created.Equal(firstGet.Created) || !second.Updated.After(firstGet.Updated) {
		t.Errorf("re-import: version %d created %v updated %v; want 2, %v, after %v",
			second.Version, second.Created, second.Updated, firstGet.Created, firstGet.Updated)
	}
	var third bytes.Buffer
	fresh.Export(&third)
	if !bytes.Equal(third.Bytes(), want) {
		t.Errorf("export after re-import differs")
	}
}

func TestImportForms(t *testing.T) {
	const rec = `{"handle":"21.T11148/X","values":[{"index":1,"type":"URL","data":{"format":"string","value":"https://x"},"ttl":86400,"timestamp":"2024-01-02T03:04:05Z"}]}`
	tests := []struct {
		name  string
		in    string
		want  int
		check func(t *testing.T, db *DB)
	}{
		{"empty input", "", 0, nil},
		{"only blank lines", "\n\n  \r\n\t\n", 0, nil},
		{"no final newline", rec, 1, nil},
		{"crlf", rec + "\r\n" + strings.Replace(rec, "/X", "/Y", 1) + "\r\n", 2, nil},
		{"space around", " \t" + rec + " \r\n\t" + strings.Replace(rec, "/X", "/Y", 1) + "\n", 2, func(t *testing.T, db *DB) {
			for _, k := range []string{"21.T11148/X", "21.T11148/Y"} {
				if s, ok, err := db.Get(k); !ok || err != nil || len(s.Record.Values) != 1 {
					t.Errorf("Get(%s) = %+v, %v, %v", k, s, ok, err)
				}
			}
		}},
		{"blank lines between", "\n" + rec + "\n\n\n" + strings.Replace(rec, "/X", "/Y", 1) + "\n\n", 2, nil},
		{"responseCode", `{"responseCode":1,"handle":"21.T11148/X","values":[]}` + "\n", 1, nil},
		{"same handle twice", rec + "\n" + strings.Replace(rec, "https://x", "https://second", 1) + "\n", 2,
			func(t *testing.T, db *DB) {
				s, _, _ := db.Get("21.T11148/X")
				if s.Version != 2 || string(s.Record.Values[0].Data) != "https://second" {
					t.Errorf("after duplicate: version %d data %q; want 2, https://second", s.Version, s.Record.Values[0].Data)
				}
			}},
		{"timestamp kept", rec, 1, func(t *testing.T, db *DB) {
			s, _, _ := db.Get("21.T11148/X")
			if ts := s.Record.Values[0].Timestamp; ts != 1704164645 {
				t.Errorf("timestamp = %d, want 1704164645", ts)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTest(t, "", true)
			n, err := db.Import(strings.NewReader(tt.in), sampleKey)
			if err != nil || n != tt.want {
				t.Fatalf("Import = %d, %v; want %d, nil", n, err, tt.want)
			}
			if tt.check != nil {
				tt.check(t, db)
			}
		})
	}
}

func TestImportErrors(t *testing.T) {
	good := func(i int) string {
		return fmt.Sprintf(`{"handle":"21.T11148/R%06d","values":[{"index":1,"type":"URL","data":"https://example.org/%d"}]}`, i, i)
	}
	lines := func(from, to int) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			b.WriteString(good(i))
			b.WriteByte('\n')
		}
		return b.String()
	}
	errKey := errors.New("prefix not served")
	keyFn := func(h string) (string, error) {
		if strings.HasPrefix(h, "99.") {
			return "", errKey
		}
		return strings.ToUpper(h), nil
	}
	var jsonErr *handlev.JSONError
	tests := []struct {
		name     string
		in       string
		line     int
		n        int // records committed before the error: none, input is checked first
		is       error
		as       any
		contains string
	}{
		{"broken json", lines(0, 3) + `{"handle":"21.T11148/B","values":[` + "\n" + lines(3, 5), 4, 0, nil, nil, "line 4"},
		{"unknown data format", lines(0, 1) + "\n" + `{"handle":"21.T11148/B","values":[{"index":1,"type":"X","data":{"format":"rot13","value":"a"}}]}` + "\n", 3, 0, nil, &jsonErr, "line 3"},
		{"missing handle", `{"values":[]}`, 1, 0, nil, &jsonErr, "line 1"},
		{"key refused", lines(0, 1) + `{"handle":"99.1/X","values":[]}` + "\n", 2, 0, errKey, nil, `"99.1/X"`},
		// The whole input is checked before anything is written: a bad line
		// after more than a chunk's worth of good ones leaves nothing behind.
		{"after a chunk", lines(0, 10000) + "\n" + lines(10000, 10004) + "{]\n", 10006, 0, nil, nil, "line 10006"},
		{"after a spilled run", lines(0, 3000) + `{"handle":"21.T11148/B","values":[{}]}` + "\n", 3001, 0, nil, &jsonErr, "line 3001"},
		{"handle too long", lines(0, 2) + `{"handle":"21.T11148/` + strings.Repeat("h", handlev.MaxHandleLen) + `","values":[{"index":1,"type":"URL","data":"x"}]}` + "\n" + lines(2, 3), 3, 0, ErrNotStorable, nil, "line 3"},
		{"line too long", lines(0, 2) + `{"handle":"21.T11148/L","values":[{"index":1,"type":"X","data":"` + strings.Repeat("a", MaxImportLine) + `"}]}` + "\n", 3, 0, ErrLineTooLong, nil, "line 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTest(t, "", true)
			db.importFlushBytes = 16 << 10 // several flushes' worth before the bad line
			setImportRunBytes(t, 64<<10)   // several spilled runs too
			n, err := db.Import(strings.NewReader(tt.in), keyFn)
			var ie *ImportError
			if !errors.As(err, &ie) || ie.Line != tt.line {
				t.Fatalf("Import error = %v, want *ImportError at line %d", err, tt.line)
			}
			if n != tt.n {
				t.Errorf("Import n = %d, want %d", n, tt.n)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if tt.as != nil && !errors.As(err, tt.as) {
				t.Errorf("error %v is not %T", err, tt.as)
			}
			if !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("error %q does not contain %q", err, tt.contains)
			}
			var stored int
			db.View(func(tx *Tx) error {
				stored = tx.Bolt().Bucket(BucketRecords).Stats().KeyN
				return nil
			})
			if stored != tt.n {
				t.Errorf("%d records stored after the error, want %d", stored, tt.n)
			}
			checkNoTempFiles(t, db)
		})
	}
}

// TestImportReadError: a failing reader ends the import with the line where the
// read failed; the records of the unfinished chunk are not written.
func TestImportReadError(t *testing.T) {
	var in strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&in, `{"handle":"21.T11148/R%06d","values":[]}`+"\n", i)
	}
	db := openTest(t, "", true)
	// TimeoutReader fails its second Read; the first gets at most one bufio buffer.
	n, err := db.Import(iotest.TimeoutReader(strings.NewReader(in.String())), sampleKey)
	var ie *ImportError
	if !errors.As(err, &ie) || !errors.Is(err, iotest.ErrTimeout) || ie.Line < 2 || ie.Line > 3001 {
		t.Fatalf("Import = %d, %v; want *ImportError wrapping iotest.ErrTimeout", n, err)
	}
	if n != 0 {
		t.Errorf("Import n = %d, want 0", n)
	}
	t.Logf("read error reported as %v", err)
}

// TestImportUnsorted: input in no particular key order, with handles repeated
// inside a chunk and across chunks and records already stored, gives the same
// records, versions and created times as writing the lines one by one in input
// order (Import sorts the input by key, stably, before it writes), whether the
// input is sorted in memory or in runs spilled to a temporary file and merged.
func TestImportUnsorted(t *testing.T) {
	for _, tt := range []struct {
		name     string
		runBytes int
	}{{"in memory", 1 << 30}, {"spilled runs", 32 << 10}, {"a few records a run", 1 << 10}} {
		t.Run(tt.name, func(t *testing.T) {
			setImportRunBytes(t, tt.runBytes)
			testImportUnsorted(t)
		})
	}
}

func testImportUnsorted(t *testing.T) {
	const distinct = 3000
	rec := func(i, gen int) string {
		return fmt.Sprintf(`{"handle":"21.T11148/U%05d","values":[{"index":1,"type":"URL","data":"https://example.org/%d/%d"}]}`, i, i, gen)
	}
	db := openTest(t, "", true)
	// Every third handle of the lower half exists before the import, with a
	// known created time; the upper half lies beyond the last stored key.
	created := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	existed := func(i int) bool { return i%3 == 0 && i < distinct/2 }
	var pre []Stored
	for i := 0; i < distinct/2; i += 3 {
		pre = append(pre, Stored{Version: 7, Created: created, Updated: created, Record: handlev.Record{
			Handle: fmt.Sprintf("21.T11148/U%05d", i)}})
	}
	putAll(t, db, pre)
	db.importFlushBytes = 16 << 10 // several flushes

	// Lines in a scrambled order (a permutation by a step coprime with
	// distinct), then a second pass over half of them, so that repeats fall
	// both into the same chunk and into later ones.
	var (
		in    strings.Builder
		lines int
		want  = map[int]struct{ version, gen int }{}
	)
	emit := func(i, gen int) {
		in.WriteString(rec(i, gen) + "\n")
		lines++
		w := want[i]
		if w.version == 0 && existed(i) {
			w.version = 7
		}
		want[i] = struct{ version, gen int }{w.version + 1, gen}
	}
	for k := range distinct {
		emit(k*1237%distinct, 1)
		if k%10 == 0 { // a repeat a few lines later, same chunk
			emit(k*1237%distinct, 2)
		}
	}
	for k := 0; k < distinct; k += 2 {
		emit(k*7%distinct, 3)
	}
	n, err := db.Import(strings.NewReader(in.String()), sampleKey)
	if err != nil || n != lines {
		t.Fatalf("Import = %d, %v; want %d, nil", n, err, lines)
	}
	for i, w := range want {
		key, _ := sampleKey(fmt.Sprintf("21.T11148/U%05d", i))
		s, ok, err := db.Get(key)
		if !ok || err != nil {
			t.Fatalf("Get(%s) = %v, %v", key, ok, err)
		}
		if s.Version != uint64(w.version) {
			t.Errorf("%s: version %d, want %d", key, s.Version, w.version)
		}
		if got, wantURL := string(s.Record.Values[0].Data), fmt.Sprintf("https://example.org/%d/%d", i, w.gen); got != wantURL {
			t.Errorf("%s: URL %q, want %q (the last line of the handle)", key, got, wantURL)
		}
		if existed(i) && !s.Created.Equal(created) {
			t.Errorf("%s: created %v, want %v (kept)", key, s.Created, created)
		}
		if !existed(i) && (s.Created.Before(created) || s.Created.IsZero()) {
			t.Errorf("%s: created %v, want the import's time", key, s.Created)
		}
	}
	checkNoTempFiles(t, db)
}

// setImportRunBytes lowers the in-memory run size of Import for one test, so
// that it spills sorted runs to its temporary file and merges them.
func setImportRunBytes(t *testing.T, n int) {
	t.Helper()
	old := importRunBytes
	importRunBytes = n
	t.Cleanup(func() { importRunBytes = old })
}

// checkNoTempFiles fails if Import left anything next to the database file.
func checkNoTempFiles(t *testing.T, db *DB) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Dir(db.Path()))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if name := e.Name(); name != filepath.Base(db.Path()) && !strings.HasSuffix(name, ".lock") {
			t.Errorf("left behind next to the database: %s", name)
		}
	}
}

// TestImportSortRun: sortRun's prefix sort orders like bytes.Compare and then
// by line, for keys with long shared prefixes, zero bytes, keys that end inside
// the compared eight bytes and repeated keys.
func TestImportSortRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		s := &importSort{runBytes: 1 << 30}
		prefix := strings.Repeat("21.T11148/SVC/", round%3)
		n := 1 + rng.IntN(300)
		for i := range n {
			k := make([]byte, rng.IntN(14))
			for j := range k {
				k[j] = "\x00\x01AZaz"[rng.IntN(6)]
			}
			s.add(prefix+string(k), nil, i+1)
			if rng.IntN(5) == 0 { // a repeat, later in the input
				s.add(prefix+string(k), nil, n+i+1)
			}
		}
		want := slices.Clone(s.run)
		slices.SortFunc(want, cmpSortedRec)
		s.sortRun()
		for i := range want {
			if !bytes.Equal(s.run[i].key, want[i].key) || s.run[i].line != want[i].line {
				t.Fatalf("round %d: sortRun[%d] = %q line %d, want %q line %d", round, i, s.run[i].key, s.run[i].line, want[i].key, want[i].line)
			}
		}
	}
}
