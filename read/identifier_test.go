package read

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"pidnode/model"
	"pidnode/write"
)

// jsonStrings are strings that JSON writes in every way: HTML characters,
// escapes, control characters, U+2028, non-ASCII, invalid UTF-8.
var jsonStrings = []string{"", "plain", `"q" \ /`, "<b>&</b>", "\x00\x1f\t\n\x7f", "é日本😀", "\u2028\u2029", "bad \xff", "21.12345/svc/K7Q/AB-CD"}

// randJSON is a random value as model.DecodeAny gives them.
func randJSON(r *rand.Rand, depth int) any {
	k := r.IntN(7)
	if depth > 3 {
		k = r.IntN(4)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return jsonStrings[r.IntN(len(jsonStrings))]
	case 3:
		return []json.Number{"0", "-0", "12345", "1.5e-3", "99999999999999999999"}[r.IntN(5)]
	case 4, 5:
		m := map[string]any{}
		for i := r.IntN(8); i > 0; i-- {
			m[jsonStrings[r.IntN(len(jsonStrings))]+string(rune('a'+r.IntN(26)))] = randJSON(r, depth+1)
		}
		return m
	default:
		a := []any{}
		for i := r.IntN(4); i > 0; i-- {
			a = append(a, randJSON(r, depth+1))
		}
		return a
	}
}

// TestIdentifierJSON: AppendJSON writes what encoding/json writes.
func TestIdentifierJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	str := func() string { return jsonStrings[r.IntN(len(jsonStrings))] }
	zones := []*time.Location{time.UTC, time.FixedZone("A", 3600), time.FixedZone("B", -5*3600-1800)}
	for i := 0; i < 500; i++ {
		meta, _ := randJSON(r, 1).(map[string]any)
		if i%50 == 0 {
			meta = nil
		}
		tm := time.Unix(r.Int64N(1<<35), r.Int64N(2)*r.Int64N(1e9)).In(zones[r.IntN(len(zones))])
		ident := &Identifier{Handle: str(), Prefix: str(), Namespace: str(), ID: str(), URL: str(), Metadata: meta,
			Version: r.Uint64(), Created: tm, Updated: tm.Add(time.Duration(r.Int64N(1e12))),
			Links: Links{Resolve: str(), API: str(), NoRedirect: str()}}
		want, err := marshal(ident)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := ident.AppendJSON([]byte("pre"))
		if !ok || !bytes.Equal(got[3:], want) {
			t.Fatalf("AppendJSON (ok %v) =\n%s\nmarshal =\n%s", ok, got[3:], want)
		}
	}
	// What AppendJSON leaves to encoding/json.
	for _, ident := range []*Identifier{
		{Metadata: map[string]any{"x": 1.5}},
		{Created: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if _, ok := ident.AppendJSON(nil); ok {
			t.Errorf("AppendJSON accepted %+v", ident)
		}
	}
}

// TestAuditContentJSON: write.AuditContentJSON writes json.Marshal(write.AuditContent(c)).
func TestAuditContentJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 500; i++ {
		m, _ := randJSON(r, 1).(map[string]any)
		c := model.Content{Metadata: m}
		if i%3 != 0 {
			u := jsonStrings[r.IntN(len(jsonStrings))]
			c.URL = &u
		}
		if i%7 == 0 {
			c.Metadata = map[string]any{"x": 1.5, "y": "<"} // left to encoding/json
		}
		want, err := json.Marshal(write.AuditContent(c))
		if err != nil {
			t.Fatal(err)
		}
		got, meta, err := write.AuditContentJSON(c)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("write.AuditContentJSON = %s, %v; json.Marshal: %s", got, err, want)
		}
		// The metadata's JSON for the reply is the reply's.
		ident := &Identifier{Metadata: c.Metadata}
		ref, _ := ident.AppendJSON(nil)
		ident.MetaJSON = meta
		if reply, _ := ident.AppendJSON(nil); meta != nil && !bytes.Equal(reply, ref) {
			t.Fatalf("reply with metaJSON %s, without %s", reply, ref)
		}
	}
}

// TestSplitDisplay: the cut is that of strings.SplitN.
func TestSplitDisplay(t *testing.T) {
	for _, h := range []string{"", "a", "a/b", "a/b/c", "21.12345/svc/K7Q/AB-CD", "p/s/n/i/d/e", "/", "//", "///", "a//b/", "p/s/n/"} {
		var want [3]string
		switch parts := strings.SplitN(h, "/", 4); len(parts) {
		case 4:
			want = [3]string{parts[0], parts[2], parts[3]}
		case 3:
			want = [3]string{parts[0], parts[1], parts[2]}
		default:
			want = [3]string{h, "", ""}
		}
		if p, n, i := SplitDisplay(h); [3]string{p, n, i} != want {
			t.Errorf("SplitDisplay(%q) = %q %q %q, want %q", h, p, n, i, want)
		}
	}
}

// marshal is encoding/json without HTML escaping, as the API writes.
func marshal(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// TestPlain: Plain gives what a JSON round trip gives (numbers as float64),
// for values as model.DecodeAny gives them.
func TestPlain(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 500; i++ {
		v := randJSON(r, 1)
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(`\ufffd`)) {
			continue // invalid UTF-8, which no stored record holds
		}
		var want any
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if got := Plain(v); !reflect.DeepEqual(got, want) {
			t.Fatalf("Plain(%#v) = %#v, want %#v", v, got, want)
		}
	}
	in := map[string]any{"n": json.Number("1.50"), "a": []any{json.Number("3")}}
	if got := Plain(in); !reflect.DeepEqual(got, map[string]any{"n": 1.5, "a": []any{3.0}}) || in["n"] != json.Number("1.50") {
		t.Errorf("Plain(%v) = %v; the input must stay as it was", in, got)
	}
}
