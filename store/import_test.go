package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"pidnode/handlev"
)

// importMixRecord is record i of a mix of the shapes Import meets: the
// pid4cat shape (long strings full of escaped quotes), escapes of every kind
// and multi-byte UTF-8, permissions other than the default, absolute TTLs,
// no timestamp, references, HS_ADMIN, HS_VLIST and binary data.
func importMixRecord(i int) handlev.Record {
	h := fmt.Sprintf("21.T11148/mix/%05d-%c", i*7919%100000, 'A'+i%26)
	resource := fmt.Sprintf(`{"label":"Sample %d","size":%d,"url":"https://data.example.org/objects/%d"}`, i, i*31, i)
	vs := []handlev.Value{
		{Index: 1, Type: handlev.TypeURL, Data: []byte("https://landing.example.org/item/" + fmt.Sprint(i)), TTL: 86400, Timestamp: 1741687153, Perm: handlev.PermDefault},
		{Index: 14, Type: "RESOURCE", Data: []byte(resource), TTL: 86400, Timestamp: 1741687153, Perm: handlev.PermDefault},
		{Index: 100, Type: handlev.TypeAdmin, Data: handlev.AppendAdmin(nil, handlev.Admin{Mask: handlev.AdminAll, Handle: "0.NA/21.T11148", Index: 200}), TTL: 86400, Timestamp: 1741687153, Perm: handlev.PermDefault},
	}
	switch i % 6 {
	case 1:
		vs = append(vs, handlev.Value{Index: 2, Type: "DESC", Data: []byte("quote \" back \\ slash / nl \n tab \t ctl \x01 é ü 😀 \u2028 end"), TTL: 60, Timestamp: 1, Perm: handlev.PermAdminRead | handlev.PermAdminWrite})
	case 2:
		vs = append(vs, handlev.Value{Index: 3, Type: "ABS", Data: []byte("x"), TTLType: handlev.TTLAbsolute, TTL: 2000000000, Perm: handlev.PermDefault})
	case 3:
		vs = append(vs, handlev.Value{Index: 4, Type: "REF", Data: []byte("r"), TTL: 5, Timestamp: 1700000000, Perm: handlev.PermDefault,
			Refs: []handlev.Ref{{Handle: "21.T11148/other", Index: 1}, {Handle: "0.NA/21.T11148", Index: 300}}})
	case 4:
		vs = append(vs, handlev.Value{Index: 5, Type: handlev.TypeVList, Data: handlev.AppendVList(nil, []handlev.Ref{{Handle: "21.T11148/a", Index: 1}}), TTL: 86400, Perm: handlev.PermDefault})
	case 5:
		vs = append(vs, handlev.Value{Index: 6, Type: "BLOB", Data: []byte{0, 1, 2, 0xff, 0xfe}, TTL: 86400, Timestamp: 1741687153, Perm: handlev.PermPublicRead})
	}
	return handlev.Record{Handle: h, Values: vs}
}

// importMixInput returns n records as export lines in key order (what Export
// must give back) and the same lines as an import may bring them: shuffled,
// with blank lines, CRLF, space around and no final newline. Record 0 is
// longer than a batch.
func importMixInput(n int) (want, in []byte) {
	lines := make([][]byte, n)
	for i := range lines {
		r := importMixRecord(i)
		if i == 0 {
			for k := range 12 {
				r.Values = append(r.Values, handlev.Value{Index: int32(1000 + k), Type: "BIG", Data: bytes.Repeat([]byte(`"\ab`), 40000), TTL: 1, Perm: handlev.PermDefault})
			}
		}
		lines[i] = appendExportLine(nil, &r)
	}
	sorted := slices.Clone(lines)
	key := func(l []byte) string {
		h, _, err := handlev.DecodeRecordJSON(bytes.TrimSpace(l))
		if err != nil {
			panic(err)
		}
		k, _ := sampleKey(h)
		return k
	}
	slices.SortFunc(sorted, func(a, b []byte) int { return strings.Compare(key(a), key(b)) })
	want = bytes.Join(sorted, nil)

	rand.New(rand.NewPCG(7, 9)).Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	var b bytes.Buffer
	for i, l := range lines {
		l = bytes.TrimSuffix(l, []byte("\n"))
		switch i % 5 {
		case 1:
			b.WriteString("\n  \r\n")
		case 2:
			b.WriteString(" \t")
		}
		b.Write(l)
		switch {
		case i == len(lines)-1:
		case i%3 == 0:
			b.WriteString("\r\n")
		case i%7 == 0:
			b.WriteString(" \u00a0\n") // Unicode space is space too (bytes.TrimSpace)
		default:
			b.WriteString("\n")
		}
	}
	return want, b.Bytes()
}

// importReaders give the same input in pieces of every size: Import must cut
// lines the same way whatever a Read returns.
var importReaders = []struct {
	name string
	wrap func([]byte) io.Reader
}{
	{"whole", func(b []byte) io.Reader { return bytes.NewReader(b) }},
	{"one byte", func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) }},
	{"half", func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) }},
	{"data with EOF", func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) }},
	{"random pieces", func(b []byte) io.Reader { return &pieceReader{b: b, rnd: rand.New(rand.NewPCG(1, 2))} }},
}

// pieceReader returns its bytes in pieces of random sizes, up to 3 MB.
type pieceReader struct {
	b   []byte
	rnd *rand.Rand
}

func (r *pieceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(r.b), 1+r.rnd.IntN([]int{10, 5000, 3 << 20}[r.rnd.IntN(3)]))
	copy(p, r.b[:n])
	r.b = r.b[n:]
	return n, nil
}

// TestImportThenExportIsTheInput: whatever pieces the input arrives in,
// export after import gives back every line exactly as it was, in key order.
func TestImportThenExportIsTheInput(t *testing.T) {
	const n = 1500 // several batches
	want, in := importMixInput(n)
	if len(in) < 2*parseBatchBytes {
		t.Fatalf("input of %d bytes does not span several batches", len(in))
	}
	for _, rd := range importReaders {
		t.Run(rd.name, func(t *testing.T) {
			db := openTest(t, "", true)
			got, err := db.Import(rd.wrap(in), sampleKey)
			if err != nil || got != n {
				t.Fatalf("Import = %d, %v; want %d, nil", got, err, n)
			}
			var out bytes.Buffer
			if err := db.Export(&out); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				a, b := bytes.Split(out.Bytes(), []byte("\n")), bytes.Split(want, []byte("\n"))
				for i := range min(len(a), len(b)) {
					if !bytes.Equal(a[i], b[i]) {
						t.Fatalf("export line %d differs:\ngot  %.300s\nwant %.300s", i+1, a[i], b[i])
					}
				}
				t.Fatalf("export has %d lines, want %d", len(a), len(b))
			}
		})
	}
}

// TestImportErrorLineInPieces: a bad line is named by its number in the
// input, blank lines counted, whatever pieces the input arrives in; a line
// over the limit too, however far it spans.
func TestImportErrorLineInPieces(t *testing.T) {
	_, in := importMixInput(400)
	lines := bytes.SplitAfter(in, []byte("\n"))
	for _, tt := range []struct {
		name string
		bad  string
		is   error
	}{
		{"bad json", `{"handle":"21.T11148/B","values":[{"index":1,"type":"X","data":"a","ttl":1.}]}`, nil},
		{"too long", `{"handle":"21.T11148/L","values":[{"index":1,"type":"X","data":"` + strings.Repeat("a", MaxImportLine) + `"}]}`, ErrLineTooLong},
	} {
		for _, at := range []int{1, 300, len(lines) + 1} {
			var b bytes.Buffer
			for _, l := range lines[:at-1] {
				b.Write(l)
			}
			if at > len(lines) {
				b.WriteString("\n") // the input's last line had none
			}
			b.WriteString(tt.bad + "\n")
			if at <= len(lines) {
				for _, l := range lines[at-1:] {
					b.Write(l)
				}
			}
			for _, rd := range importReaders {
				if rd.name == "one byte" && tt.is != nil {
					continue // 16 MiB one byte at a time: slow, and "half" covers it
				}
				t.Run(fmt.Sprintf("%s/line %d/%s", tt.name, at, rd.name), func(t *testing.T) {
					db := openTest(t, "", true)
					n, err := db.Import(rd.wrap(b.Bytes()), sampleKey)
					var ie *ImportError
					if !errors.As(err, &ie) || ie.Line != at || n != 0 {
						t.Fatalf("Import = %d, %v; want 0 and *ImportError at line %d", n, err, at)
					}
					if tt.is != nil && !errors.Is(err, tt.is) {
						t.Errorf("error %v is not %v", err, tt.is)
					}
				})
			}
		}
	}
}
