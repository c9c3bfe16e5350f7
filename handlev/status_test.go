package handlev

import "testing"

// TestRecordStatusCaseFolding: Record.Status finds the STATUS value by its type
// and reads its text ignoring ASCII case only (as the resolver compares types,
// docs/handle-protocol.md §1.4). Unicode folding would also map U+017F (ſ) to
// 's' and U+212A (Kelvin sign) to 'k', so a type or status spelled with them
// must not count: those bytes are not the ASCII letters a Handle client writes.
func TestRecordStatusCaseFolding(t *testing.T) {
	rec := func(vs ...Value) Record { return Record{Handle: "21.T1/x", Values: vs} }
	v := func(typ, data string) Value { return Value{Index: 1, Type: typ, Data: []byte(data)} }
	tests := []struct {
		name string
		r    Record
		want Status
	}{
		{"upper", rec(v("STATUS", "REGISTERED")), StatusRegistered},
		{"lower type and text", rec(v("status", "registered")), StatusRegistered},
		{"mixed", rec(v("StAtUs", "oBsOlEtEd")), StatusObsoleted},
		{"submitted", rec(v("Status", "Submitted")), StatusSubmitted},
		{"deprecated", rec(v("STATUS", "deprecated")), StatusDeprecated},
		{"no STATUS value", rec(v("URL", "REGISTERED")), StatusNone},
		{"empty record", rec(), StatusNone},
		{"unknown text", rec(v("STATUS", "ACTIVE")), StatusNone},
		{"text with trailing space", rec(v("STATUS", "REGISTERED ")), StatusNone},
		{"subtype is not STATUS", rec(v("STATUS.old", "REGISTERED")), StatusNone},
		{"long s in the text", rec(v("STATUS", "ſubmitted")), StatusNone},
		{"long s in the type", rec(v("ſtatus", "SUBMITTED")), StatusNone},
		{"Kelvin sign is not K", rec(v("STATUS", "\u212Aeep")), StatusNone},
		{"dotted capital I", rec(v("STATUS", "REG\u0130STERED")), StatusNone},
		{"first STATUS value wins", rec(v("URL", "x"), v("status", "obsoleted"), v("STATUS", "REGISTERED")), StatusObsoleted},
		{"a non-ASCII type before it is skipped", rec(v("ſtatus", "DEPRECATED"), v("Status", "registered")), StatusRegistered},
	}
	for _, tt := range tests {
		if got := tt.r.Status(); got != tt.want {
			t.Errorf("%s: Status() = %v (%q), want %v (%q)", tt.name, got, got.String(), tt.want, tt.want.String())
		}
	}
	for _, s := range []string{"submitted", "REGISTERED", "Obsoleted", "dePRECATED"} {
		st, ok := ParseStatus([]byte(s))
		if !ok || !equalASCIIFold(st.String(), s) {
			t.Errorf("ParseStatus(%q) = %v %v", s, st, ok)
		}
	}
	if st, ok := ParseStatus([]byte("ſubmitted")); ok {
		t.Errorf("ParseStatus(ſubmitted) = %v, want not a status", st)
	}
}

// equalASCIIFold is the test's own ASCII-only comparison.
func equalASCIIFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
