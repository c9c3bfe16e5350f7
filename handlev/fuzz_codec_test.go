package handlev

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"pidnode/internal/jsontext"
	"testing"
	"unicode/utf8"
)

// codecSeedValues are real values to seed the fuzzers: the examples of docs/handle-protocol.md §1.1, the
// pid4cat record and a few edge cases.
func codecSeedValues(t testing.TB) []Value {
	vs := append(specRecordValues(), pid4catValues(t)...)
	return append(vs,
		Value{},
		Value{Index: -1, Type: "ü", Data: []byte{0xff}, TTLType: TTLAbsolute, TTL: -1, Timestamp: 0xFFFFFFFF, Perm: 0x0F,
			Refs: []Ref{{Handle: "", Index: 0}, {Handle: "\u2028", Index: -5}}},
	)
}

// FuzzDecodeValue: the binary decoders never panic, report typed errors, and
// decode → encode → decode gives the same value. A binary value whose strings are
// valid UTF-8 also survives a trip through Handle JSON.
func FuzzDecodeValue(f *testing.F) {
	f.Add(codecHex(f, vectorValueHex))
	f.Add(codecHex(f, vectorAdminHex))
	for _, v := range codecSeedValues(f) {
		b := AppendValue(nil, &v)
		f.Add(b)
		f.Add(b[:len(b)/2])
		f.Add(v.Data)
	}
	f.Add(AppendValues(nil, codecSeedValues(f)))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, n, err := DecodeValue(b)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || de.Offset < 0 || de.Offset > len(b) {
				t.Fatalf("DecodeValue error %v is not a *DecodeError within the input", err)
			}
		} else {
			enc := AppendValue(nil, &v)
			if len(enc) != n {
				t.Fatalf("AppendValue(DecodeValue(b)) has %d bytes, decoder consumed %d", len(enc), n)
			}
			v2, n2, err := DecodeValue(enc)
			if err != nil || n2 != len(enc) || !v2.Equal(&v) {
				t.Fatalf("round trip: %+v, n %d, err %v; want %+v", v2, n2, err, v)
			}
			if validStrings(&v) {
				j := AppendValueJSON(nil, &v)
				vj, err := decodeOneValueJSON(j)
				if err != nil || !vj.Equal(&v) {
					t.Fatalf("JSON round trip of %s: %+v, %v; want %+v", j, vj, err, v)
				}
			}
		}
		if vs, n, err := decodeValuesOwned(b); err == nil {
			enc := AppendValues(nil, vs)
			vs2, n2, err := decodeValuesOwned(enc)
			if err != nil || n2 != n || len(vs2) != len(vs) {
				t.Fatalf("decodeValuesOwned round trip: %d values, n %d/%d, err %v", len(vs2), n2, n, err)
			}
			for i := range vs {
				if !vs2[i].Equal(&vs[i]) {
					t.Fatalf("decodeValuesOwned round trip value %d: %+v, want %+v", i, vs2[i], vs[i])
				}
			}
		}
		checkDecodeValuesShared(t, b)
		if a, err := DecodeAdmin(b); err == nil {
			if a2, err := DecodeAdmin(AppendAdmin(nil, a)); err != nil || a2 != a {
				t.Fatalf("admin round trip: %+v, %v; want %+v", a2, err, a)
			}
		}
		if refs, err := DecodeVList(b); err == nil {
			enc := AppendVList(nil, refs)
			if !bytes.Equal(enc, b) {
				t.Fatalf("AppendVList(DecodeVList(b)) = %X, want %X", enc, b)
			}
		}
	})
}

func validStrings(v *Value) bool {
	if !utf8.ValidString(v.Type) {
		return false
	}
	for _, r := range v.Refs {
		if !utf8.ValidString(r.Handle) {
			return false
		}
	}
	return true
}

// FuzzDecodeRecordJSON: the JSON decoder never panics and reports *JSONError; what
// it accepts re-encodes to JSON that decodes to the same record, whose encoding is
// stable, and to binary that decodes to the same values.
func FuzzDecodeRecordJSON(f *testing.F) {
	f.Add([]byte(specRecordJSON))
	for _, name := range []string{"json_record.golden", "json_pid4cat.golden", "json_pid4cat_pretty.golden"} {
		if b, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(b)
		}
	}
	f.Add(AppendRecordJSON(nil, "h/ü", codecSeedValues(f)))
	f.Add([]byte(`{"handle":"1/x","values":[{"index":1,"type":"X","data":"a","ttl":"2001-09-09T01:46:40+02:00","timestamp":5}]}`))
	f.Add([]byte(`{"handle":"1/x","values":[{"index":1,"type":"X","data":{"format":"hex","value":"00ff"},"references":[{"handle":"a","index":2}]}]}`))
	f.Add([]byte(`{"responseCode":1,"handle":"a\u00e9\/\n","values":[{"index":1,"type":"X","data":{"format":"admin","value":{"handle":"0.NA/1","index":1,"permissions":"101"}}},{"index":2,"type":"Y","data":{"format":"vlist","value":[]},"ttl":"2001-02-29T00:00:00Z"}]}`))
	f.Add([]byte(`{"handle":"\ud83d\ude00","values":[{"index":1,"type":"X","data":{"format":"base64","value":"AAEC\n/w=="},"timestamp":"2001-09-09T01:46:40Z","ttl":-1}],"values":[]}`))
	// Malformed near-misses the one-pass fast path must reject by itself.
	for _, s := range []string{
		`{"handle":"1/x","values":[],"x":01}`,
		`{"handle":"1/x","values":[],"x":nul}`,
		`{"handle":"1/x","values":[],"x":"\q"}`,
		`{"handle":"1/x","values":[],"x":"a` + "\x01" + `"}`,
		`{"handle":"1/x","values":[],"x":[1,]}`,
		`{"handle":"1/x","values":[],"x":{"a" 1}}`,
		`{"handle":"1/x","values":[{"index":1,"type":"X","data":"a","ttl":1.}]}`,
		`{"handle":"1/x","values":[{"index":1,"type":"X","data":"a","timestamp":-}]}`,
		`{"handle":"1/x","values":[{"index":1,"type":"X","data":"a","z":"\u12g4"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, _, ok := fastRecordJSON(b); ok && !json.Valid(b) {
			t.Fatalf("fast path accepted invalid JSON %q", b)
		}
		h, vs, err := DecodeRecordJSON(b)
		// RecordDecoder, after another record, agrees with DecodeRecordJSON.
		var d RecordDecoder
		d.Decode([]byte(specRecordJSON))
		if hd, vsd, errd := d.Decode(b); (errd == nil) != (err == nil) || (err != nil && errd.Error() != err.Error()) || hd != h || len(vsd) != len(vs) {
			t.Fatalf("RecordDecoder = %q, %d values, %v; DecodeRecordJSON %q, %d values, %v", hd, len(vsd), errd, h, len(vs), err)
		} else {
			for i := range vs {
				if !vsd[i].Equal(&vs[i]) {
					t.Fatalf("value %d: RecordDecoder %+v, DecodeRecordJSON %+v", i, vsd[i], vs[i])
				}
			}
		}
		// The fast path must agree with the encoding/json path whenever it answers.
		hs, vss, errs := decodeRecordJSONStd(b)
		if (err == nil) != (errs == nil) || (err != nil && err.Error() != errs.Error()) {
			t.Fatalf("DecodeRecordJSON err %v, encoding/json path err %v", err, errs)
		}
		if err == nil {
			if h != hs || len(vs) != len(vss) {
				t.Fatalf("DecodeRecordJSON = %q, %d values; encoding/json path %q, %d values", h, len(vs), hs, len(vss))
			}
			for i := range vs {
				if !vs[i].Equal(&vss[i]) {
					t.Fatalf("value %d: fast %+v, encoding/json path %+v", i, vs[i], vss[i])
				}
			}
		}
		if err != nil {
			var je *JSONError
			if !errors.As(err, &je) {
				t.Fatalf("DecodeRecordJSON error %v is not a *JSONError", err)
			}
			return
		}
		enc := AppendRecordJSON(nil, h, vs)
		if !json.Valid(enc) {
			t.Fatalf("AppendRecordJSON wrote invalid JSON: %s", enc)
		}
		h2, vs2, err := DecodeRecordJSON(enc)
		if err != nil || h2 != h || len(vs2) != len(vs) {
			t.Fatalf("re-decode of %s: %q, %d values, %v", enc, h2, len(vs2), err)
		}
		for i := range vs {
			if !vs2[i].Equal(&vs[i]) {
				t.Fatalf("JSON round trip value %d: %+v, want %+v", i, vs2[i], vs[i])
			}
		}
		if enc2 := AppendRecordJSON(nil, h2, vs2); !bytes.Equal(enc2, enc) {
			t.Fatalf("encoding not stable:\n%s\n%s", enc, enc2)
		}
		bin, _, err := decodeValuesOwned(AppendValues(nil, vs))
		if err != nil || len(bin) != len(vs) {
			t.Fatalf("binary of decoded JSON does not decode: %v", err)
		}
		for i := range vs {
			if !bin[i].Equal(&vs[i]) {
				t.Fatalf("binary round trip value %d: %+v, want %+v", i, bin[i], vs[i])
			}
		}
		var c bytes.Buffer
		if err := json.Compact(&c, AppendPrettyJSON(nil, enc)); err != nil || !bytes.Equal(c.Bytes(), enc) {
			t.Fatalf("pretty form does not compact back: %v", err)
		}
	})
}

// FuzzAppendJSONString: the output is valid JSON that decodes to the input (with
// invalid UTF-8 replaced), and for valid UTF-8 matches encoding/json without HTML
// escaping byte for byte (both follow the same rules as Gson).
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "abc", "<&>=", "\x00\x1f\x7f", "\u2028\u2029", "ü\xff", "\"\\/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("AppendJSONString(%q) = %s: %v", s, got, err)
		}
		if want := toValidPerByte(s); back != want {
			t.Fatalf("AppendJSONString(%q) decodes to %q, want %q", s, back, want)
		}
		if utf8.ValidString(s) {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(s); err != nil {
				t.Fatal(err)
			}
			if want := bytes.TrimSuffix(buf.Bytes(), []byte("\n")); !bytes.Equal(got, want) {
				t.Fatalf("AppendJSONString(%q) = %s, encoding/json = %s", s, got, want)
			}
		}
	})
}

// toValidPerByte replaces each invalid UTF-8 byte with U+FFFD.
func toValidPerByte(s string) string {
	var b []byte
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}

// FuzzDecodeValueJSON: decodeOneValueJSON's fast path agrees with the encoding/json
// path, and accepted values round-trip through AppendValueJSON.
func FuzzDecodeValueJSON(f *testing.F) {
	for _, v := range codecSeedValues(f) {
		f.Add(AppendValueJSON(nil, &v))
	}
	f.Add([]byte(`{"index":1,"type":"X","data":{"format":"hex","value":"00ff"},"permissions":"0101","ttl":"2038-01-19T03:14:07Z","timestamp":"2106-02-07T06:28:15Z"}`))
	f.Add([]byte(`{"index":1,"type":"X","data":"a","x":[tru]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := fastJSON{Scanner: jsontext.Scanner{B: b}}
		if _, e, ok := p.value(p.Space(0)); ok && p.Space(e) == len(b) && !json.Valid(b) {
			t.Fatalf("fast path accepted invalid JSON %q", b)
		}
		v, err := decodeOneValueJSON(b)
		vs, errs := decodeValueJSON(b, 0)
		if (err == nil) != (errs == nil) || (err != nil && err.Error() != errs.Error()) {
			t.Fatalf("decodeOneValueJSON err %v, encoding/json path err %v", err, errs)
		}
		if err != nil {
			return
		}
		if !v.Equal(&vs) {
			t.Fatalf("decodeOneValueJSON = %+v, encoding/json path %+v", v, vs)
		}
		enc := AppendValueJSON(nil, &v)
		v2, err := decodeOneValueJSON(enc)
		if err != nil || !v2.Equal(&v) {
			t.Fatalf("round trip of %s: %+v, %v; want %+v", enc, v2, err, v)
		}
	})
}
