package handlev

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pidnode/internal/jsontext"
)

// The package's -update flag rewrites golden files under testdata/. Defined only if
// another test file of the package has not defined it already (package-level
// variables initialise before init functions run).
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files under testdata/")
	}
}

func updatingGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// checkGolden compares got with testdata/name, or rewrites the file under -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if updatingGolden() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./handlev -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file\ngot:  %s\nwant: %s", name, got, want)
	}
}

func mustTime(t testing.TB, s string) int64 {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm.Unix()
}

// specRecordJSON is the example of docs/handle-protocol.md §1.1, joined onto one line as
// the reference server writes it. Kept here as well as in the golden file so that
// -update cannot silently move away from docs/handle-protocol.md §1.1.
const specRecordJSON = `{"responseCode":1,"handle":"123/abc","values":[` +
	`{"index":100,"type":"HS_ADMIN","data":{"format":"admin","value":{"handle":"0.NA/123","index":200,"permissions":"111111111111"}},"ttl":86400,"timestamp":"2001-09-09T01:46:40Z"},` +
	`{"index":1,"type":"URL","data":{"format":"string","value":"http://example.org/x?a=1&b=<2>"},"ttl":86400,"timestamp":"2001-09-09T01:46:40Z"},` +
	`{"index":2,"type":"BLOB","data":{"format":"base64","value":"AAEC/w=="},"permissions":"1100","ttl":"2033-05-18T03:33:20Z"},` +
	`{"index":3,"type":"HS_VLIST","data":{"format":"vlist","value":[{"handle":"0.NA/123","index":300}]},"ttl":86400,"timestamp":"2001-09-09T01:46:40Z","references":[{"handle":"123/ref","index":1}]}]}`

func specRecordValues() []Value {
	return []Value{
		{Index: 100, Type: TypeAdmin, Data: AppendAdmin(nil, Admin{Mask: AdminAll, Handle: "0.NA/123", Index: 200}),
			TTL: 86400, Timestamp: 1000000000, Perm: PermDefault},
		vectorValue(),
		{Index: 2, Type: "BLOB", Data: []byte{0x00, 0x01, 0x02, 0xFF}, Perm: PermAdminRead | PermAdminWrite,
			TTLType: TTLAbsolute, TTL: 2000000000},
		{Index: 3, Type: TypeVList, Data: AppendVList(nil, []Ref{{Handle: "0.NA/123", Index: 300}}),
			TTL: 86400, Timestamp: 1000000000, Perm: PermDefault, Refs: []Ref{{Handle: "123/ref", Index: 1}}},
	}
}

// pid4catDocJSON is the first six values of the record in docs/metadata-model.md, joined.
const pid4catDocJSON = `{"index":1,"type":"URL","data":{"format":"string","value":"http://Mytest2.com"},"ttl":86400,"timestamp":"2025-03-11T09:43:14Z"},` +
	`{"index":10,"type":"EMAIL","data":{"format":"string","value":"abc@xyz.com"},"ttl":86400,"timestamp":"2025-03-11T10:32:45Z"},` +
	`{"index":11,"type":"STATUS","data":{"format":"string","value":"REGISTERED"},"ttl":86400,"timestamp":"2025-03-11T10:33:39Z"},` +
	`{"index":12,"type":"SCHEMA_VER","data":{"format":"string","value":"v1.0.1"},"ttl":86400,"timestamp":"2025-03-11T10:34:03Z"},` +
	`{"index":13,"type":"METADATA_LICENSE","data":{"format":"string","value":"CC0-1.0"},"ttl":86400,"timestamp":"2025-03-11T09:45:25Z"},` +
	`{"index":14,"type":"RESOURCE","data":{"format":"string","value":"{\"label\":\"Resource label\",\"description\":\"Resource description\",\"resource_category\":\"SAMPLE\",\"representation_variants\":[{\"variant_url\":\"https://example.org/resource\",\"media_type\":\"text/turtle\",\"encoding_format\":\"UTF-8\",\"size\":12345}]}"},"ttl":86400,"timestamp":"2025-03-11T09:45:26Z"}`

// pid4catValues is a full record under the default model (docs/metadata-model.md): the
// six documented values plus related identifiers, a change log with non-ASCII and
// HTML-significant characters, and the HS_ADMIN value.
func pid4catValues(t testing.TB) []Value {
	s := func(idx int32, typ, data, ts string) Value {
		return Value{Index: idx, Type: typ, Data: []byte(data), TTL: 86400, Timestamp: mustTime(t, ts), Perm: PermDefault}
	}
	return []Value{
		s(1, TypeURL, "http://Mytest2.com", "2025-03-11T09:43:14Z"),
		s(10, TypeEmail, "abc@xyz.com", "2025-03-11T10:32:45Z"),
		s(11, TypeStatus, "REGISTERED", "2025-03-11T10:33:39Z"),
		s(12, "SCHEMA_VER", "v1.0.1", "2025-03-11T10:34:03Z"),
		s(13, "METADATA_LICENSE", "CC0-1.0", "2025-03-11T09:45:25Z"),
		s(14, "RESOURCE", `{"label":"Resource label","description":"Resource description","resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://example.org/resource","media_type":"text/turtle","encoding_format":"UTF-8","size":12345}]}`, "2025-03-11T09:45:26Z"),
		s(15, TypeRelated, `[{"relation_type":"IS_PART_OF","related_identifier":{"type":"DoiIdentifier","identifier":"10.1234/abc","resolving_url":"https://doi.org/10.1234/abc"},"datetime_log":"2025-03-11T09:45:26Z"}]`, "2025-03-11T09:45:26Z"),
		s(16, "CHANGES", `[{"datetime_log":"2025-03-11T10:33:39Z","has_agent":{"name":"Jürgen Müller <ops&lab>","email_address":"jm@example.org","role":"TRUSTEE"},"changed_field":"STATUS","description":"a=b\nsecond line\ttab"}]`, "2025-03-11T10:33:39Z"),
		{Index: 100, Type: TypeAdmin, Data: AppendAdmin(nil, Admin{Mask: AdminAll &^ AdminDeleteNA &^ AdminAddNA, Handle: "0.NA/21.T11978", Index: 200}),
			TTL: 86400, Timestamp: mustTime(t, "2025-03-11T09:43:14Z"), Perm: PermAdminRead | PermAdminWrite},
	}
}

func TestJSONGoldenSpecRecord(t *testing.T) {
	got := AppendRecordJSON(nil, "123/abc", specRecordValues())
	if string(got) != specRecordJSON {
		t.Fatalf("AppendRecordJSON differs from docs/handle-protocol.md §1.1\ngot:  %s\nwant: %s", got, specRecordJSON)
	}
	checkGolden(t, "json_record.golden", got)

	h, vs, err := DecodeRecordJSON(got)
	if err != nil || h != "123/abc" {
		t.Fatalf("DecodeRecordJSON = %q, %v", h, err)
	}
	assertValuesEqual(t, vs, specRecordValues())
}

func TestJSONGoldenPid4cat(t *testing.T) {
	vs := pid4catValues(t)
	if got := AppendValuesJSON(nil, vs[:6]); string(got) != "["+pid4catDocJSON+"]" {
		t.Fatalf("AppendValuesJSON differs from docs/metadata-model.md\ngot:  %s\nwant: [%s]", got, pid4catDocJSON)
	}
	got := AppendRecordJSON(nil, "21.T11978/TEST/KBKA-BEM9", vs)
	checkGolden(t, "json_pid4cat.golden", got)
	checkGolden(t, "json_pid4cat_pretty.golden", AppendPrettyJSON(nil, got))

	h, dec, err := DecodeRecordJSON(got)
	if err != nil || h != "21.T11978/TEST/KBKA-BEM9" {
		t.Fatalf("DecodeRecordJSON = %q, %v", h, err)
	}
	assertValuesEqual(t, dec, vs)
}

func assertValuesEqual(t *testing.T, got, want []Value) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d values, want %d", len(got), len(want))
	}
	for i := range want {
		if !got[i].Equal(&want[i]) {
			t.Errorf("value %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestAppendJSONString(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", `""`},
		{"plain", "abc", `"abc"`},
		{"no html escaping", `<a href="x">&=' </a>`, `"<a href=\"x\">&=' </a>"`},
		{"backslash", `a\b`, `"a\\b"`},
		{"short escapes", "\b\t\n\f\r", `"\b\t\n\f\r"`},
		{"control chars lower-case hex", "\x00\x01\x0b\x1f", `"\u0000\u0001\u000b\u001f"`},
		{"DEL raw", "\x7f", "\"\x7f\""},
		{"non-ASCII raw", "Jürgen € 😀", `"Jürgen € 😀"`},
		{"line and paragraph separators", "a\u2028b\u2029c", `"a\u2028b\u2029c"`},
		{"invalid UTF-8", "a\xffb", "\"a\uFFFDb\""},
		{"truncated sequence", "\xe2\x82", "\"\uFFFD\uFFFD\""},
		{"mixed", "x\"y\xc3\xa9\x01z", `"x\"yé\u0001z"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AppendJSONString([]byte("pre"), tt.in); string(got) != "pre"+tt.want {
				t.Errorf("AppendJSONString(%q) = %s, want %s", tt.in, got[3:], tt.want)
			}
		})
	}
}

func TestAppendValueJSONFormats(t *testing.T) {
	tests := []struct {
		name string
		v    Value
		want string
	}{
		{"string with allowed controls", Value{Index: 5, Type: "DESC", Data: []byte("a\tb\nc\x13"), TTL: 60, Perm: PermDefault},
			`{"index":5,"type":"DESC","data":{"format":"string","value":"a\tb\nc\u0013"},"ttl":60}`},
		{"base64 for 0x14", Value{Index: 5, Type: "X", Data: []byte{0x14}, TTL: 60, Perm: PermDefault},
			`{"index":5,"type":"X","data":{"format":"base64","value":"FA=="},"ttl":60}`},
		{"base64 for DEL", Value{Index: 5, Type: "X", Data: []byte("a\x7f"), TTL: 60, Perm: PermDefault},
			`{"index":5,"type":"X","data":{"format":"base64","value":"YX8="},"ttl":60}`},
		{"base64 for invalid UTF-8", Value{Index: 5, Type: "X", Data: []byte("\xc3"), TTL: 60, Perm: PermDefault},
			`{"index":5,"type":"X","data":{"format":"base64","value":"ww=="},"ttl":60}`},
		{"empty data", Value{Index: 5, Type: "X", TTL: 60, Perm: PermDefault},
			`{"index":5,"type":"X","data":{"format":"string","value":""},"ttl":60}`},
		{"all permissions", Value{Index: -2, Type: "X", Perm: 0x0F},
			`{"index":-2,"type":"X","data":{"format":"string","value":""},"permissions":"1111","ttl":0}`},
		{"no permissions", Value{Index: 0, Type: "X", Perm: 0},
			`{"index":0,"type":"X","data":{"format":"string","value":""},"permissions":"0000","ttl":0}`},
		{"public write only", Value{Index: 0, Type: "X", Perm: PermPublicWrite},
			`{"index":0,"type":"X","data":{"format":"string","value":""},"permissions":"0001","ttl":0}`},
		{"absolute ttl epoch", Value{Index: 1, Type: "X", TTLType: TTLAbsolute, Perm: PermDefault},
			`{"index":1,"type":"X","data":{"format":"string","value":""},"ttl":"1970-01-01T00:00:00Z"}`},
		{"absolute ttl before 1970", Value{Index: 1, Type: "X", TTLType: TTLAbsolute, TTL: -1, Perm: PermDefault},
			`{"index":1,"type":"X","data":{"format":"string","value":""},"ttl":"1969-12-31T23:59:59Z"}`},
		{"leap day timestamp", Value{Index: 1, Type: "X", TTL: 1, Timestamp: 951782400, Perm: PermDefault},
			`{"index":1,"type":"X","data":{"format":"string","value":""},"ttl":1,"timestamp":"2000-02-29T00:00:00Z"}`},
		{"max int4 timestamp", Value{Index: 1, Type: "X", TTL: 1, Timestamp: 0xFFFFFFFF, Perm: PermDefault},
			`{"index":1,"type":"X","data":{"format":"string","value":""},"ttl":1,"timestamp":"2106-02-07T06:28:15Z"}`},
		{"admin lower-case type", Value{Index: 100, Type: "hs_admin", Data: AppendAdmin(nil, Admin{AdminReadValue | AdminAddHandle, "0.NA/1", 300}), TTL: 1, Perm: PermDefault},
			`{"index":100,"type":"hs_admin","data":{"format":"admin","value":{"handle":"0.NA/1","index":300,"permissions":"010000000001"}},"ttl":1}`},
		{"admin with high mask bits falls back", Value{Index: 100, Type: TypeAdmin, Data: AppendAdmin(nil, Admin{0x1000, "a", 1}), TTL: 1, Perm: PermDefault},
			`{"index":100,"type":"HS_ADMIN","data":{"format":"base64","value":"EAAAAAABYQAAAAE="},"ttl":1}`},
		{"admin legacy padding falls back", Value{Index: 100, Type: TypeAdmin, Data: append(AppendAdmin(nil, Admin{1, "a", 1}), 0, 0), TTL: 1, Perm: PermDefault},
			`{"index":100,"type":"HS_ADMIN","data":{"format":"base64","value":"AAEAAAABYQAAAAEAAA=="},"ttl":1}`},
		{"admin undecodable text", Value{Index: 100, Type: TypeAdmin, Data: []byte("not admin"), TTL: 1, Perm: PermDefault},
			`{"index":100,"type":"HS_ADMIN","data":{"format":"string","value":"not admin"},"ttl":1}`},
		{"empty vlist", Value{Index: 3, Type: TypeVList, Data: AppendVList(nil, nil), TTL: 1, Perm: PermDefault},
			`{"index":3,"type":"HS_VLIST","data":{"format":"vlist","value":[]},"ttl":1}`},
		{"vlist two", Value{Index: 3, Type: TypeVList, Data: AppendVList(nil, []Ref{{"a/b", 1}, {"ü/\"", -7}}), TTL: 1, Perm: PermDefault},
			`{"index":3,"type":"HS_VLIST","data":{"format":"vlist","value":[{"handle":"a/b","index":1},{"handle":"ü/\"","index":-7}]},"ttl":1}`},
		{"vlist truncated falls back", Value{Index: 3, Type: TypeVList, Data: []byte{0, 0, 0, 1}, TTL: 1, Perm: PermDefault},
			`{"index":3,"type":"HS_VLIST","data":{"format":"base64","value":"AAAAAQ=="},"ttl":1}`},
		{"site is base64", Value{Index: 1, Type: TypeSite, Data: []byte{0, 1, 2, 11}, TTL: 1, Perm: PermDefault},
			`{"index":1,"type":"HS_SITE","data":{"format":"base64","value":"AAECCw=="},"ttl":1}`},
		{"references", Value{Index: 1, Type: TypeURL, Data: []byte("x"), TTL: 1, Perm: PermDefault, Refs: []Ref{{"1/a", 1}, {"1/b", 2}}},
			`{"index":1,"type":"URL","data":{"format":"string","value":"x"},"ttl":1,"references":[{"handle":"1/a","index":1},{"handle":"1/b","index":2}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppendValueJSON(nil, &tt.v)
			if string(got) != tt.want {
				t.Fatalf("AppendValueJSON(%+v)\ngot  %s\nwant %s", tt.v, got, tt.want)
			}
			if !json.Valid(got) {
				t.Fatalf("AppendValueJSON output is not valid JSON: %s", got)
			}
			dec, err := decodeOneValueJSON(got)
			if err != nil {
				t.Fatalf("decodeOneValueJSON(%s): %v", got, err)
			}
			if !dec.Equal(&tt.v) {
				t.Fatalf("decodeOneValueJSON(AppendValueJSON(v)) = %+v, want %+v", dec, tt.v)
			}
		})
	}
}

func TestAppendValuesJSONEmpty(t *testing.T) {
	if got := string(AppendValuesJSON(nil, nil)); got != "[]" {
		t.Errorf("AppendValuesJSON(nil) = %s, want []", got)
	}
	if got := string(AppendRecordJSON(nil, "1/<x>", nil)); got != `{"responseCode":1,"handle":"1/<x>","values":[]}` {
		t.Errorf("AppendRecordJSON(empty) = %s", got)
	}
}

func TestDecodeJSONAccepts(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Value
	}{
		{"bare string data and defaults", `{"index":1,"type":"URL","data":"http://x"}`,
			Value{Index: 1, Type: "URL", Data: []byte("http://x"), TTL: DefaultTTL, Perm: PermDefault}},
		{"hex", `{"index":1,"type":"X","data":{"format":"hex","value":"00fF"},"ttl":5}`,
			Value{Index: 1, Type: "X", Data: []byte{0, 0xFF}, TTL: 5, Perm: PermDefault}},
		{"unpadded base64", `{"index":1,"type":"X","data":{"format":"base64","value":"AAEC/w"}}`,
			Value{Index: 1, Type: "X", Data: []byte{0, 1, 2, 0xFF}, TTL: DefaultTTL, Perm: PermDefault}},
		{"integer timestamp and nulls", `{"index":1,"type":"X","data":"","timestamp":1000000000,"references":null,"permissions":null}`,
			Value{Index: 1, Type: "X", TTL: DefaultTTL, Timestamp: 1000000000, Perm: PermDefault}},
		{"ISO ttl with offset and fraction", `{"index":1,"type":"X","data":"","ttl":"2033-05-18T05:33:20.9+02:00"}`,
			Value{Index: 1, Type: "X", TTLType: TTLAbsolute, TTL: 2000000000, Perm: PermDefault}},
		{"admin 16 bits", `{"index":100,"type":"HS_ADMIN","data":{"format":"admin","value":{"handle":"0.NA/1","index":200,"permissions":"1000000000000001"}}}`,
			Value{Index: 100, Type: "HS_ADMIN", Data: AppendAdmin(nil, Admin{0x8001, "0.NA/1", 200}), TTL: DefaultTTL, Perm: PermDefault}},
		{"unknown keys ignored, whitespace", ` { "index" : 7 , "type":"X", "data":"a", "extra":{"x":[1]} } `,
			Value{Index: 7, Type: "X", Data: []byte("a"), TTL: DefaultTTL, Perm: PermDefault}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeOneValueJSON([]byte(tt.in))
			if err != nil {
				t.Fatalf("decodeOneValueJSON(%s): %v", tt.in, err)
			}
			if !got.Equal(&tt.want) {
				t.Fatalf("decodeOneValueJSON(%s) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
	h, vs, err := DecodeRecordJSON([]byte(`{"handle":"1/x","values":[]}`))
	if err != nil || h != "1/x" || len(vs) != 0 {
		t.Fatalf("DecodeRecordJSON without responseCode = %q, %v, %v", h, vs, err)
	}
}

func TestDecodeJSONErrors(t *testing.T) {
	v := func(s string) string {
		return `{"handle":"1/x","values":[{"index":1,"type":"X","data":"a"},` + s + `]}`
	}
	tests := []struct {
		name  string
		in    string
		value int
		field string
		is    error
	}{
		{"not JSON", `{"handle":`, -1, "", nil},
		{"not an object", `[1]`, -1, "", nil},
		{"null", `null`, -1, "", nil},
		{"trailing garbage", `{"handle":"1/x","values":[]} x`, -1, "", nil},
		{"bad responseCode", `{"responseCode":100,"handle":"1/x","values":[]}`, -1, "responseCode", nil},
		{"string responseCode", `{"responseCode":"1","handle":"1/x","values":[]}`, -1, "responseCode", nil},
		{"no handle", `{"values":[]}`, -1, "handle", nil},
		{"empty handle", `{"handle":"","values":[]}`, -1, "handle", nil},
		{"handle number", `{"handle":1,"values":[]}`, -1, "handle", nil},
		{"no values", `{"handle":"1/x"}`, -1, "values", nil},
		{"values object", `{"handle":"1/x","values":{}}`, -1, "values", nil},
		{"value not object", v(`3`), 1, "", nil},
		{"no index", v(`{"type":"X","data":"a"}`), 1, "index", nil},
		{"index string", v(`{"index":"1","type":"X","data":"a"}`), 1, "index", nil},
		{"index fraction", v(`{"index":1.5,"type":"X","data":"a"}`), 1, "index", nil},
		{"index out of range", v(`{"index":2147483648,"type":"X","data":"a"}`), 1, "index", nil},
		{"index huge", v(`{"index":99999999999999999999,"type":"X","data":"a"}`), 1, "index", nil},
		{"no type", v(`{"index":1,"data":"a"}`), 1, "type", nil},
		{"no data", v(`{"index":1,"type":"X"}`), 1, "data", nil},
		{"null data", v(`{"index":1,"type":"X","data":null}`), 1, "data", nil},
		{"data number", v(`{"index":1,"type":"X","data":5}`), 1, "data", nil},
		{"unknown format", v(`{"index":1,"type":"X","data":{"format":"site","value":{}}}`), 1, "data.format", nil},
		{"no format", v(`{"index":1,"type":"X","data":{"value":"a"}}`), 1, "data.format", nil},
		{"no value", v(`{"index":1,"type":"X","data":{"format":"string"}}`), 1, "data.value", nil},
		{"bad base64", v(`{"index":1,"type":"X","data":{"format":"base64","value":"!!"}}`), 1, "data.value", nil},
		{"bad hex", v(`{"index":1,"type":"X","data":{"format":"hex","value":"0g"}}`), 1, "data.value", nil},
		{"string value number", v(`{"index":1,"type":"X","data":{"format":"string","value":1}}`), 1, "data.value", nil},
		{"admin missing permissions", v(`{"index":1,"type":"HS_ADMIN","data":{"format":"admin","value":{"handle":"a","index":1}}}`), 1, "data.value.permissions", nil},
		{"admin bad permissions", v(`{"index":1,"type":"HS_ADMIN","data":{"format":"admin","value":{"handle":"a","index":1,"permissions":"12"}}}`), 1, "data.value.permissions", nil},
		{"admin index range", v(`{"index":1,"type":"HS_ADMIN","data":{"format":"admin","value":{"handle":"a","index":-2147483649,"permissions":"1"}}}`), 1, "data.value.index", nil},
		{"vlist not array", v(`{"index":1,"type":"HS_VLIST","data":{"format":"vlist","value":{}}}`), 1, "data.value", nil},
		{"vlist entry handle", v(`{"index":1,"type":"HS_VLIST","data":{"format":"vlist","value":[{"handle":"a","index":1},{"index":1}]}}`), 1, "data.value[1].handle", nil},
		{"permissions length", v(`{"index":1,"type":"X","data":"a","permissions":"111"}`), 1, "permissions", nil},
		{"permissions chars", v(`{"index":1,"type":"X","data":"a","permissions":"1x10"}`), 1, "permissions", nil},
		{"ttl bool", v(`{"index":1,"type":"X","data":"a","ttl":true}`), 1, "ttl", nil},
		{"ttl bad date", v(`{"index":1,"type":"X","data":"a","ttl":"tomorrow"}`), 1, "ttl", nil},
		{"ttl date out of int32", v(`{"index":1,"type":"X","data":"a","ttl":"2040-01-01T00:00:00Z"}`), 1, "ttl", nil},
		{"timestamp before 1970", v(`{"index":1,"type":"X","data":"a","timestamp":"1969-12-31T23:59:59Z"}`), 1, "timestamp", nil},
		{"timestamp after int4", v(`{"index":1,"type":"X","data":"a","timestamp":4294967296}`), 1, "timestamp", nil},
		{"references object", v(`{"index":1,"type":"X","data":"a","references":{}}`), 1, "references", nil},
		{"reference index", v(`{"index":1,"type":"X","data":"a","references":[{"handle":"a","index":"1"}]}`), 1, "references[0].index", nil},
		{"data too long", v(`{"index":1,"type":"X","data":"` + strings.Repeat("a", MaxLength+1) + `"}`), 1, "data", ErrTooLong},
		{"too many references", v(`{"index":1,"type":"X","data":"a","references":[` + strings.TrimSuffix(strings.Repeat(`{"handle":"a","index":1},`, MaxRefs+1), ",") + `]}`), 1, "references", ErrTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := DecodeRecordJSON([]byte(tt.in))
			var je *JSONError
			if !errors.As(err, &je) {
				t.Fatalf("DecodeRecordJSON(%.80s) err = %v, want *JSONError", tt.in, err)
			}
			if je.Value != tt.value || je.Field != tt.field {
				t.Errorf("DecodeRecordJSON(%.80s) err = %v (value %d field %q), want value %d field %q", tt.in, err, je.Value, je.Field, tt.value, tt.field)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("DecodeRecordJSON(%.80s) err = %v, want wrapping %v", tt.in, err, tt.is)
			}
		})
	}
}

func TestJSONErrorMessage(t *testing.T) {
	_, err := decodeOneValueJSON([]byte(`{"index":1,"type":"X","data":{"format":"site","value":""}}`))
	want := `handlev: json value 0 field "data.format": unsupported format "site"`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

func TestJSONNoAliasing(t *testing.T) {
	in := AppendRecordJSON(nil, "1/x", []Value{{Index: 1, Type: "X", Data: []byte("abc"), Refs: []Ref{{"r/1", 1}}}})
	_, vs, err := DecodeRecordJSON(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i] = ' '
	}
	if string(vs[0].Data) != "abc" || vs[0].Type != "X" || vs[0].Refs[0].Handle != "r/1" {
		t.Fatalf("decoded value changed with its input: %+v", vs[0])
	}
}

func TestAppendPrettyJSON(t *testing.T) {
	in := `{"responseCode":1,"handle":"1/a","values":[{"index":1,"type":"URL","data":{"format":"string","value":"x,{\"y\":[1]}: \\"},"ttl":86400,"references":[]}],"empty":{}}`
	want := `{
  "responseCode": 1,
  "handle": "1/a",
  "values": [
    {
      "index": 1,
      "type": "URL",
      "data": {
        "format": "string",
        "value": "x,{\"y\":[1]}: \\"
      },
      "ttl": 86400,
      "references": []
    }
  ],
  "empty": {}
}`
	got := AppendPrettyJSON(nil, []byte(in))
	if string(got) != want {
		t.Fatalf("AppendPrettyJSON\ngot:\n%s\nwant:\n%s", got, want)
	}
	// Re-indenting indented JSON is stable, and compacting gives the input back.
	if again := AppendPrettyJSON(nil, got); string(again) != want {
		t.Errorf("AppendPrettyJSON(pretty) not stable:\n%s", again)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, got); err != nil || buf.String() != in {
		t.Errorf("json.Compact(pretty) = %s, %v; want %s", buf.String(), err, in)
	}
}

func TestAppendPrettyJSONMalformedNoPanic(t *testing.T) {
	for _, in := range []string{``, `"`, `"\`, `}}]]`, `{"a":"b\`, `[[[`, `{`} {
		_ = AppendPrettyJSON(nil, []byte(in))
	}
}

func TestJSONRoundTripAllFormats(t *testing.T) {
	vs := append(specRecordValues(), pid4catValues(t)...)
	vs = append(vs,
		Value{Index: 9, Type: "BIN", Data: []byte{0xff, 0xfe, 0x00}, TTLType: TTLAbsolute, TTL: -100, Timestamp: 1, Perm: PermPublicWrite},
		Value{Index: -9, Type: "ü\u2028", Data: []byte("\u2029 <&> \\ \"")},
	)
	b := AppendRecordJSON(nil, "h/ü", vs)
	h, got, err := DecodeRecordJSON(b)
	if err != nil || h != "h/ü" {
		t.Fatalf("DecodeRecordJSON = %q, %v", h, err)
	}
	assertValuesEqual(t, got, vs)
	// And through binary.
	wire := AppendValues(nil, got)
	back, _, err := decodeValuesOwned(wire)
	if err != nil {
		t.Fatal(err)
	}
	assertValuesEqual(t, back, vs)
	if again := AppendRecordJSON(nil, h, back); !bytes.Equal(again, b) {
		t.Errorf("JSON → binary → JSON changed the bytes:\n%s\n%s", again, b)
	}
}

func TestAppendJSONZeroAllocs(t *testing.T) {
	vs := append(specRecordValues(), pid4catValues(t)...)
	vs = append(vs, Value{Index: 9, Type: "X\n", Data: []byte("é\x01\u2028"), Refs: []Ref{{"a\xff", 1}}})
	dst := make([]byte, 0, 64<<10)
	for i := range vs {
		v := &vs[i]
		if n := testing.AllocsPerRun(100, func() { dst = AppendValueJSON(dst[:0], v) }); n != 0 {
			t.Errorf("AppendValueJSON(%s) allocates %v times", v.Type, n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { dst = AppendRecordJSON(dst[:0], "1/x", vs) }); n != 0 {
		t.Errorf("AppendRecordJSON allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { dst = AppendValues(dst[:0], vs) }); n != 0 {
		t.Errorf("AppendValues allocates %v times", n)
	}
	compact := AppendRecordJSON(nil, "1/x", vs)
	if n := testing.AllocsPerRun(100, func() { dst = AppendPrettyJSON(dst[:0], compact) }); n != 0 {
		t.Errorf("AppendPrettyJSON allocates %v times", n)
	}
}

// The fast decoder must handle the records pidnode itself writes, so imports of
// exports never take the slow path.
func TestFastJSONCoversOwnOutput(t *testing.T) {
	vs := append(specRecordValues(), pid4catValues(t)...)
	vs = append(vs, Value{Index: 9, Type: "X\n\"", Data: []byte("é\x13\u2028 <&>"), Refs: []Ref{{"a/ü", 1}}, TTLType: TTLAbsolute, TTL: -1})
	in := AppendRecordJSON(nil, "21.T11978/TEST/KBKA-BEM9", vs)
	h, got, ok := fastRecordJSON(in)
	if !ok || h != "21.T11978/TEST/KBKA-BEM9" {
		t.Fatalf("fastRecordJSON gave up on %s", in)
	}
	assertValuesEqual(t, got, vs)
	for i := range vs {
		one := AppendValueJSON(nil, &vs[i])
		p := fastJSON{Scanner: jsontext.Scanner{B: one}}
		if v, e, ok := p.value(0); !ok || e != len(one) || !v.Equal(&vs[i]) {
			t.Errorf("fastJSON.value(%s) = %+v, %v", one, v, ok)
		}
		// What AppendValueJSON writes takes the path without the object walk.
		p = fastJSON{Scanner: jsontext.Scanner{B: one}}
		if v, e, ok := p.valueInOrder(0); !ok || e != len(one) || !v.Equal(&vs[i]) {
			t.Errorf("fastJSON.valueInOrder(%s) = %+v, %v", one, v, ok)
		}
	}
}

// TestFastJSONStringsAtEveryOffset: string data with an escape, a multi-byte
// rune or the closing quote at every offset of the eight-byte words the fast
// path copies decodes as the encoding/json path decodes it, and takes the
// path without the object walk.
func TestFastJSONStringsAtEveryOffset(t *testing.T) {
	for _, special := range []string{`\"`, `\\`, `\/`, `\n`, `\u00e9`, `\ud83d\ude00`, "é", "😀", "\u2028", ""} {
		for n := 0; n <= 20; n++ {
			for tail := 0; tail <= 9; tail++ {
				str := strings.Repeat("a", n) + special + strings.Repeat("b", tail)
				b := []byte(`{"handle":"1/x","values":[{"index":1,"type":"X","data":{"format":"string","value":"` + str + `"},"ttl":5}]}`)
				checkFastAgrees(t, b)
				one := b[len(`{"handle":"1/x","values":[`) : len(b)-2]
				p := fastJSON{Scanner: jsontext.Scanner{B: one}}
				v, _, ok := p.valueInOrder(0)
				want, err := decodeValueJSON(one, 0)
				if special == `\ud83d\ude00` { // surrogate pair: left to the encoding/json path
					if ok {
						t.Errorf("valueInOrder(%s) took a surrogate escape", one)
					}
					continue
				}
				if !ok || err != nil || !v.Equal(&want) {
					t.Fatalf("valueInOrder(%s) = %+v, %v; encoding/json path %+v, %v", one, v, ok, want, err)
				}
			}
		}
	}
}

// sharedDecoder is reused by every checkFastAgrees call.
var sharedDecoder RecordDecoder

// checkFastAgrees decodes b with DecodeRecordJSON (fast path first) and with
// the encoding/json path and fails unless both give the same result or the
// same error; the fast path must never accept what json.Valid rejects.
func checkFastAgrees(t *testing.T, b []byte) {
	t.Helper()
	if _, _, ok := fastRecordJSON(b); ok && !json.Valid(b) {
		t.Fatalf("fast path accepted invalid JSON %q", b)
	}
	h, vs, err := DecodeRecordJSON(b)
	hs, vss, errs := decodeRecordJSONStd(b)
	if (err == nil) != (errs == nil) || (err != nil && err.Error() != errs.Error()) {
		t.Fatalf("%q: DecodeRecordJSON err %v, encoding/json path err %v", b, err, errs)
	}
	// A RecordDecoder that decoded another record before gives the same.
	hd, vsd, errd := sharedDecoder.Decode(b)
	if (errd == nil) != (err == nil) || (err != nil && err.Error() != errd.Error()) || hd != h || len(vsd) != len(vs) {
		t.Fatalf("%q: RecordDecoder = %q, %d values, %v; DecodeRecordJSON %q, %d values, %v", b, hd, len(vsd), errd, h, len(vs), err)
	}
	for i := range vs {
		if !vs[i].Equal(&vsd[i]) {
			t.Fatalf("%q: value %d: RecordDecoder %+v, DecodeRecordJSON %+v", b, i, vsd[i], vs[i])
		}
	}
	if err == nil {
		if h != hs || len(vs) != len(vss) {
			t.Fatalf("%q: DecodeRecordJSON = %q, %d values; encoding/json path %q, %d values", b, h, len(vs), hs, len(vss))
		}
		for i := range vs {
			if !vs[i].Equal(&vss[i]) {
				t.Fatalf("%q: value %d: fast %+v, encoding/json path %+v", b, i, vs[i], vss[i])
			}
		}
	}
}

// TestFastJSONMalformed: the one-pass decoder validates as it goes, with no
// json.Valid before it. Every truncation of a record and every single-byte
// replacement by a byte that matters to the JSON grammar decodes exactly as
// the encoding/json path decodes it (same values or same error).
func TestFastJSONMalformed(t *testing.T) {
	vs := append(specRecordValues(), pid4catValues(t)...)
	vs = append(vs, Value{Index: 9, Type: "X\n\"", Data: []byte("é\x13\u2028 <&>"), Refs: []Ref{{"a/ü", 1}}, TTLType: TTLAbsolute, TTL: -1})
	recs := [][]byte{
		AppendRecordJSON(nil, "21.T11978/TEST/KBKA-BEM9", vs),
		[]byte(specRecordJSON),
		[]byte(` {"handle":"1/x","x":[1,-2.5e+3,true,false,null,{"a":[]},"\u00e9\t"],"values":[{"index":-0,"type":"X","data":"a","q":{},"ttl":null,"timestamp":null,"permissions":null,"references":null}]} `),
		[]byte(`{"handle":"1/x","values":[{"index":1,"type":"HS_ADMIN","data":{"value":{"x":0.5,"handle":"0.NA/1","index":2,"permissions":"1"},"format":"admin"}},{"index":2,"type":"V","data":{"format":"vlist","value":[{"handle":"a","index":1,"y":[]}]}}]}`),
		[]byte(`{"handle":"1/x","values":[{"index":1,"type":"B","data":{"format":"base64","value":"AAEC/w=="},"ttl":"2001-09-09T01:46:40Z","timestamp":7}]}`),
		// Times repeat (the fast path remembers the last one), within and out of range.
		[]byte(`{"handle":"1/x","values":[{"index":1,"type":"X","data":"a","ttl":"2001-09-09T01:46:40Z","timestamp":"2001-09-09T01:46:40Z"},{"index":2,"type":"X","data":"a","ttl":"2099-09-09T01:46:40Z","timestamp":"2099-09-09T01:46:40Z"}]}`),
		// The members in AppendValueJSON's order, every optional one present
		// (short enough that every byte is truncated at and replaced).
		[]byte(`{"handle":"1/x","values":[{"index":1,"type":"X","data":{"format":"string","value":"a\"b"},"permissions":"1010","ttl":5,"timestamp":7}]}`),
		[]byte(`{"handle":"1/x","values":[{"index":1,"type":"X","data":"s","ttl":"2001-09-09T01:46:40Z","references":[{"handle":"a","index":1}]}]}`),
		[]byte(`{"handle":"1/x","values":[{"index":1,"type":"X","data":"a","timestamp":"\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000"}]}`),
	}
	subst := []byte("\"\\{}[]:,019-+.Etnu \n\x00\x1f\xff/")
	for _, rec := range recs {
		step := 1 + len(rec)/200 // every byte of the small records, a sample of the large one
		for n := 0; n <= len(rec); n += step {
			checkFastAgrees(t, rec[:n])
		}
		b := bytes.Clone(rec)
		for i := 0; i < len(b); i += step {
			orig := b[i]
			for _, c := range subst {
				if c == orig {
					continue
				}
				b[i] = c
				checkFastAgrees(t, b)
			}
			b[i] = orig
		}
	}
	// Nesting deeper than the fast path walks goes to encoding/json.
	deep := `{"handle":"1/x","values":[],"x":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`
	checkFastAgrees(t, []byte(deep))
	if _, _, err := DecodeRecordJSON([]byte(deep)); err != nil {
		t.Errorf("deep nesting: %v", err)
	}
}

// TestRecordDecoderReuse: a RecordDecoder reused across records of different
// sizes gives what DecodeRecordJSON gives for each, and a record decoded after
// a larger one does not see the larger one's values.
func TestRecordDecoderReuse(t *testing.T) {
	big := AppendRecordJSON(nil, "21.T11978/TEST/BIG", append(specRecordValues(), pid4catValues(t)...))
	small := []byte(`{"handle":"1/x","values":[{"index":1,"type":"X","data":"a"}]}`)
	var d RecordDecoder
	for _, in := range [][]byte{small, big, small, big, []byte(specRecordJSON), small} {
		wantH, want, err := DecodeRecordJSON(in)
		if err != nil {
			t.Fatal(err)
		}
		h, got, err := d.Decode(in)
		if err != nil || h != wantH {
			t.Fatalf("Decode = %q, %v; want %q", h, err, wantH)
		}
		assertValuesEqual(t, got, want)
	}
}

// decodeOneValueJSON decodes one Handle JSON value object as DecodeRecordJSON
// decodes each of its values: the fast path, then the encoding/json path for
// anything it gives up on. Errors are *JSONError with Value 0; the result
// does not alias b.
func decodeOneValueJSON(b []byte) (Value, error) {
	p := fastJSON{Scanner: jsontext.Scanner{B: b}}
	if v, e, ok := p.value(p.Space(0)); ok && p.Space(e) == len(b) {
		return v, nil
	}
	return decodeValueJSON(b, 0)
}
