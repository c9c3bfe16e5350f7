package store

import (
	"testing"

	"pidnode/handlev"
)

// TestDecodeStoredAllocs: a loaded record is two objects, the pointer-free
// copy its handle, data and type names alias and its []Value, however many
// values it has; each value with references adds its []Ref.
func TestDecodeStoredAllocs(t *testing.T) {
	vs := make([]handlev.Value, 8)
	for i := range vs {
		vs[i] = handlev.Value{Index: int32(i + 1), Type: "X-TYPE-" + string(rune('A'+i)), Data: []byte("https://example.org/some/data"), TTL: 86400, Perm: handlev.PermDefault}
	}
	plain := Stored{Version: 3, Record: handlev.Record{Handle: "21.T11148/SVC/TBR1/2345", Values: vs}}
	withRefs := plain
	withRefs.Record.Values = append([]handlev.Value{{Index: 99, Type: handlev.TypeURL, Data: []byte("x"), Refs: []handlev.Ref{{Handle: "0.NA/21.T11148", Index: 200}}}}, vs...)
	tests := []struct {
		name string
		s    Stored
		want float64
	}{
		{"eight values", plain, 2},
		{"one value with references", withRefs, 3},
		{"no values", Stored{Version: 1, Record: handlev.Record{Handle: "21.T11148/EMPTY"}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := appendStored(nil, &tt.s)
			got := testing.AllocsPerRun(100, func() {
				if _, err := decodeStored(b); err != nil {
					t.Fatal(err)
				}
			})
			if got != tt.want {
				t.Errorf("decodeStored: %v allocations, want %v", got, tt.want)
			}
			s, err := decodeStored(b)
			if err != nil {
				t.Fatal(err)
			}
			for i := range b {
				b[i] = 0xEE
			}
			if s.Record.Handle != tt.s.Record.Handle || len(s.Record.Values) != len(tt.s.Record.Values) {
				t.Fatalf("decodeStored = %q with %d values, want %q with %d", s.Record.Handle, len(s.Record.Values), tt.s.Record.Handle, len(tt.s.Record.Values))
			}
			for i := range s.Record.Values {
				if !s.Record.Values[i].Equal(&tt.s.Record.Values[i]) {
					t.Errorf("value %d = %+v, want %+v (aliases the input?)", i, s.Record.Values[i], tt.s.Record.Values[i])
				}
			}
		})
	}
}
