package handlev

import (
	"reflect"
	"testing"
	"unsafe"
)

// derivedValues numbers vs from 1, as a record's values.
func derivedValues(vs ...Value) []Value {
	for i := range vs {
		vs[i].Index = int32(i + 1)
	}
	return vs
}

func resourceValue(data string, perm Perm) Value {
	return Value{Type: TypeResource, Data: []byte(data), Perm: perm}
}

// checkDerived asserts that the derived data of vs gives, for the first
// public RESOURCE value, exactly what ReadResource parses from it, and that
// it refuses to describe any other value.
func checkDerived(t *testing.T, vs []Value) {
	t.Helper()
	d := Derived(AppendDerived(nil, vs))
	i := firstPublicResource(vs)
	for j := range vs {
		got, ok, known := d.Resource(&vs[j], nil)
		if j != i {
			if known && (vs[j].Index != vs[i].Index || len(vs[j].Data) != len(vs[i].Data)) {
				t.Fatalf("Derived.Resource(value %d) known, derived from value %d", j, i)
			}
			continue
		}
		want, _, wantOK := ReadResource(vs[j].Data, nil)
		if !known {
			// Only a value whose strings ReadResource decodes out of the
			// data (escapes) is left to parse.
			if wantOK && aliasesData(want, vs[j].Data) {
				t.Fatalf("Derived.Resource(%q) not known for the value it was derived from (%x)", vs[j].Data, d)
			}
			continue
		}
		if ok != wantOK || !reflect.DeepEqual(got, want) {
			t.Fatalf("Derived.Resource(%q) = %#v, %v; ReadResource = %#v, %v", vs[j].Data, got, ok, want, wantOK)
		}
	}
}

// aliasesData reports whether every string of r lies in data.
func aliasesData(r Resource, data []byte) bool {
	in := func(s []byte) bool {
		if s == nil {
			return true
		}
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
		p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
		return len(data) > 0 && p >= lo && p+uintptr(len(s)) <= lo+uintptr(len(data))
	}
	ok := in(r.Label) && in(r.Description) && in(r.Category)
	for _, v := range r.Variants {
		ok = ok && in(v.URL) && in(v.MediaType)
	}
	return ok
}

func TestDerivedMatchesReadResource(t *testing.T) {
	pid4cat := `{"label":"L","description":"D <b>","resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://a.example/x.ttl","media_type":"text/turtle","encoding_format":"UTF-8","size":12},{"variant_url":"https://a.example/x.jsonld","media_type":"application/ld+json"}]}`
	tests := []struct {
		name string
		vs   []Value
	}{
		{"none", derivedValues(Value{Type: TypeURL, Data: []byte("https://a.example/"), Perm: PermDefault})},
		{"pid4cat", derivedValues(Value{Type: TypeURL, Data: []byte("https://a.example/"), Perm: PermDefault}, resourceValue(pid4cat, PermDefault))},
		{"not an object", derivedValues(resourceValue(`["label"]`, PermDefault))},
		{"empty strings and arrays", derivedValues(resourceValue(`{"label":"","description":"","resource_category":"","representation_variants":[]}`, PermDefault))},
		{"escapes", derivedValues(resourceValue(`{"label":"\u00e9\ud83d\ude00\ud800","resource_category":"S\u0041MPLE"}`, PermDefault))},
		{"other types", derivedValues(resourceValue(`{"label":5,"description":null,"representation_variants":[1,{"variant_url":5},null,{"variant_url":"u"}]}`, PermDefault))},
		{"first is private", derivedValues(resourceValue(`{"label":"secret"}`, PermAdminRead|PermAdminWrite), resourceValue(pid4cat, PermDefault))},
		{"only private", derivedValues(resourceValue(`{"label":"secret"}`, PermAdminRead))},
		{"two public", derivedValues(resourceValue(`{"label":"first"}`, PermDefault), resourceValue(pid4cat, PermDefault))},
		{"type case", derivedValues(Value{Type: "resource", Data: []byte(pid4cat), Perm: PermDefault})},
		{"same index, other data", []Value{resourceValue(`{"label":"a"}`, PermAdminRead), resourceValue(`{"label":"bb"}`, PermDefault)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkDerived(t, tc.vs) })
	}
}

// TestDerivedUnknown: no derived data, another layout, or data derived
// from another value send the caller to ReadResource.
func TestDerivedUnknown(t *testing.T) {
	val := resourceValue(`{"label":"a"}`, PermDefault)
	val.Index = 3
	other := val
	other.Index = 4
	good := Derived(AppendDerived(nil, []Value{val}))
	for name, d := range map[string]Derived{
		"nil":           nil,
		"other version": append(Derived{derivedVersion + 1}, good[1:]...),
		"other value":   Derived(AppendDerived(nil, []Value{other})),
		"other length":  Derived(AppendDerived(nil, []Value{resourceValue(`{"label":"ab"}`, PermDefault)})),
		"truncated":     good[:len(good)-1],
		"no resource":   Derived(AppendDerived(nil, nil)),
	} {
		if _, _, known := d.Resource(&val, nil); known {
			t.Errorf("%s: Derived(%x).Resource known", name, d)
		}
	}
}

// FuzzDerived: for any RESOURCE data, what AppendDerived stores reads back
// as ReadResource parses it; and Derived.Resource never panics on any bytes.
func FuzzDerived(f *testing.F) {
	for _, s := range []string{
		`{"label":"x","resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://a.example/","media_type":"text/turtle","size":1}]}`,
		`{"resource_category":"S\u0041\ud83d\ude00\ud800","representation_variants":[1,{"variant_url":5},null,{"media_type":"a/b"}],"x":[true,false,null,-1.5e+3,{"a":[]}]}`,
		`{"representation_variants":{}, "resource_category":null}`, `[1]`, `{"a":1}x`, `{"label":"","representation_variants":[{}]}`,
	} {
		f.Add([]byte(s), uint8(PermDefault))
	}
	f.Fuzz(func(t *testing.T, b []byte, perm uint8) {
		vs := derivedValues(Value{Type: TypeURL, Data: []byte("https://a.example/"), Perm: PermDefault},
			resourceValue(string(b), Perm(perm&0x0F)), resourceValue(`{"label":"second"}`, PermDefault))
		checkDerived(t, vs)
		val := Value{Type: TypeResource, Index: int32(len(b)), Data: b}
		Derived(b).Resource(&val, nil)
	})
}
