package model

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"pidnode/handlev"
)

func defaultModel(t testing.TB) *Model {
	t.Helper()
	m, err := LoadModel(DefaultModel)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func relatedIDs(n, size int) []any {
	out := make([]any, n)
	for i := range out {
		id := fmt.Sprintf("ex:%d-", i)
		out[i] = map[string]any{"relation_type": "CITES", "related_identifier": map[string]any{
			"type": "ExampleIdentifier", "identifier": id + strings.Repeat("a", size-len(id))}}
	}
	return out
}

// A payload valid for the schema whose field is larger, as stored, than the
// store keeps per value fails the checks, naming the field and the limit;
// one just under the limit passes and is stored.
func TestValueSizeLimit(t *testing.T) {
	m := defaultModel(t)
	limit := fmt.Sprint(handlev.MaxLength)
	for _, tc := range []struct {
		n    int
		fail bool
	}{{500, false}, {700, true}} {
		p := validPayload()
		p["metadata"].(map[string]any)["related_identifiers"] = relatedIDs(tc.n, 400)
		obj, err := DecodeObject(mustJSONf(p))
		if err != nil {
			t.Fatal(err)
		}
		w, err := m.CheckCreate(obj)
		var ve *ValidationError
		if !tc.fail {
			if err != nil {
				t.Fatalf("%d items: %v", tc.n, err)
			}
			vals, _ := m.Build(BuildInput{Display: "21.1/svc/X/Y", AdminHandle: "21.1/svc/X/ADMIN", URL: *w.Payload.URL, Metadata: w.Meta, Now: time.Unix(1e9, 0), Create: true})
			if err := m.CheckRecord("21.1/svc/X/Y", vals); err != nil {
				t.Errorf("%d items: CheckRecord = %v", tc.n, err)
			}
			continue
		}
		if !errors.As(err, &ve) || len(ve.Errors) != 1 || ve.Errors[0].Field != "metadata.related_identifiers" || !strings.Contains(ve.Errors[0].Message, limit) {
			t.Errorf("%d items: CheckCreate = %v, want one error on metadata.related_identifiers naming %s", tc.n, err, limit)
		}
		// The same through Merge, on an update.
		if _, _, err := m.Merge(Content{URL: w0(p)}, mustWrite(t, map[string]any{"metadata": p["metadata"]})); !errors.As(err, &ve) || ve.Errors[0].Field != "metadata.related_identifiers" {
			t.Errorf("Merge = %v", err)
		}
	}
}

func w0(p map[string]any) *string { u := p["url"].(string); return &u }

func mustWrite(t *testing.T, obj map[string]any) *Write {
	t.Helper()
	w, err := CheckPayload(obj)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// CheckRecord refuses what the store would: too many values, a value over
// the limit (named by field), a record whose export line is too long.
func TestCheckRecord(t *testing.T) {
	m := defaultModel(t)
	val := func(idx int32, n int) handlev.Value {
		return handlev.Value{Index: idx, Type: "X", Data: []byte(strings.Repeat("\x01", n)), TTL: 86400}
	}
	many := make([]handlev.Value, handlev.MaxValues+1)
	for i := range many {
		many[i] = val(int32(1000+i), 1)
	}
	huge := make([]handlev.Value, 80)
	for i := range huge {
		huge[i] = val(int32(1000+i), handlev.MaxLength)
	}
	for _, tc := range []struct {
		name  string
		vals  []handlev.Value
		field string
	}{
		{"small", []handlev.Value{val(1, 10), val(15, 10)}, ""},
		{"too many values", many, "(record)"},
		{"related over the limit", []handlev.Value{val(15, handlev.MaxLength+1)}, "metadata.related_identifiers"},
		{"change log over the limit", []handlev.Value{val(16, handlev.MaxLength+1)}, "(change log)"},
		{"unmanaged value over the limit", []handlev.Value{val(7, handlev.MaxLength+1)}, "(value 7)"},
		{"export line too long", huge, "(record)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := m.CheckRecord("21.1/svc/X/Y", tc.vals)
			var ve *ValidationError
			switch {
			case tc.field == "" && err != nil:
				t.Errorf("CheckRecord = %v, want nil", err)
			case tc.field != "" && (!errors.As(err, &ve) || ve.Errors[0].Field != tc.field):
				t.Errorf("CheckRecord = %v, want an error on %s", err, tc.field)
			}
		})
	}
}

// recordJSONBound is never below the real length of the export line.
func TestRecordJSONBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		vals := make([]handlev.Value, rng.IntN(5))
		for j := range vals {
			data := make([]byte, rng.IntN(40))
			for k := range data {
				data[k] = byte(rng.IntN(256))
			}
			v := handlev.Value{Index: rng.Int32(), Type: string(data[:len(data)/3]), Data: data,
				TTLType: handlev.TTLType(rng.IntN(2)), TTL: rng.Int32(), Timestamp: rng.Int64N(1 << 32), Perm: handlev.Perm(rng.IntN(16))}
			if rng.IntN(3) == 0 {
				v.Type, v.Data = handlev.TypeAdmin, handlev.AppendAdmin(nil, handlev.Admin{Mask: 0x0FFF, Handle: string(data), Index: rng.Int32()})
			}
			for range rng.IntN(3) {
				v.Refs = append(v.Refs, handlev.Ref{Handle: string(data[:rng.IntN(len(data)+1)]), Index: rng.Int32()})
			}
			vals[j] = v
		}
		display := string(rune(rng.IntN(0x20))) + "21.1/x"
		n := len(`{"handle":,"values":}`) + len(handlev.AppendValuesJSON(handlev.AppendJSONString(nil, display), vals))
		if b := recordJSONBound(display, vals); b < n {
			t.Fatalf("case %d: bound %d < length %d for %+v", i, b, n, vals)
		}
	}
}

func TestModelChangeLogLimit(t *testing.T) {
	_, err := LoadModel([]byte(strings.Replace(string(DefaultModel), `"max_bytes": 65536`, `"max_bytes": 300000`, 1)))
	if err == nil || !strings.Contains(err.Error(), "changes.max_bytes") {
		t.Errorf("LoadModel with max_bytes over the value limit = %v", err)
	}
}

// TestCanonBound: the bound is never below the encoding's length.
func TestCanonBound(t *testing.T) {
	m, err := LoadModel(DefaultModel)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{
		string(mustJSONf(validPayload())),
		`{"metadata":{"resource_info":{"label":"\u2028\u2029\u0000<>&\"\\ é😀","x":[1,-0,1.5e3,{"y":null,"z":[],"w":true}],"\u0001k":{}}}}`,
		`{"metadata":{"resource_info":[[],{},"",0,false]}}`,
	} {
		obj, err := DecodeObject([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		x := obj["metadata"].(map[string]any)["resource_info"]
		enc := appendCanon(nil, x, m.Field("resource_info").Schema)
		if b := canonBound(x, 1<<30); b < len(enc) {
			t.Errorf("canonBound = %d, encoding %s has %d bytes", b, enc, len(enc))
		}
	}
}
