package handlev

import (
	"slices"
	"testing"
)

func TestNewPublic(t *testing.T) {
	const (
		pub  = PermDefault                     // 1110
		priv = PermAdminRead | PermAdminWrite  // 1100
		adm  = PermAdminRead                   // 1000
		pw   = PermPublicWrite | PermAdminRead // public write only: no public read
	)
	v := func(i int32, typ, data string, perm Perm) Value {
		return Value{Index: i, Type: typ, Data: []byte(data), Perm: perm}
	}
	tests := []struct {
		name    string
		values  []Value
		status  Status
		indexes []int32 // of the public values, in order
		target  int32   // index of the target value, -1 for none
		alias   string
	}{
		{"empty", nil, StatusNone, nil, -1, ""},
		{"one URL", []Value{v(1, "URL", "https://a", pub)}, StatusNone, []int32{1}, 1, ""},
		{"URL after URL.*", []Value{v(1, "URL.meta", "https://m", pub), v(2, "url", "https://a", pub)}, StatusNone, []int32{1, 2}, 2, ""},
		{"only subtypes", []Value{v(1, "EMAIL", "x", pub), v(2, "Url.Landing", "https://l", pub), v(3, "URL.meta", "https://m", pub)}, StatusNone, []int32{1, 2, 3}, 2, ""},
		{"private URL skipped", []Value{v(1, "URL", "https://secret", priv), v(2, "URL", "https://b", pub)}, StatusNone, []int32{2}, 2, ""},
		{"private URL, public subtype", []Value{v(1, "URL", "https://secret", priv), v(2, "URL.x", "https://b", pub)}, StatusNone, []int32{2}, 2, ""},
		{"only private URL", []Value{v(1, "URL", "https://secret", adm), v(2, "EMAIL", "e", pub)}, StatusNone, []int32{2}, -1, ""},
		{"public write only is not public", []Value{v(1, "URL", "https://w", pw)}, StatusNone, []int32{}, -1, ""},
		{"URL. without a name is no subtype", []Value{v(1, "URL.", "https://dot", pub), v(2, "URLX", "https://x", pub)}, StatusNone, []int32{1, 2}, -1, ""},
		{"submitted", []Value{v(1, "URL", "https://a", pub), v(2, "STATUS", "submitted", pub)}, StatusSubmitted, []int32{1, 2}, 1, ""},
		{"private status still decides", []Value{v(1, "URL", "https://a", pub), v(2, "STATUS", "OBSOLETED", priv)}, StatusObsoleted, []int32{1}, 1, ""},
		{"deprecated", []Value{v(1, "STATUS", "DEPRECATED", pub)}, StatusDeprecated, []int32{1}, -1, ""},
		{"first public valid alias", []Value{v(1, "HS_ALIAS", "21.T1/secret", priv), v(2, "hs_alias", "", pub), v(3, "HS_ALIAS", "21.T1/b", pub), v(4, "HS_ALIAS", "21.T1/c", pub)}, StatusNone, []int32{2, 3, 4}, -1, "21.T1/b"},
		{"alias with a control character", []Value{v(1, "HS_ALIAS", "21.T1/\x01", pub)}, StatusNone, []int32{1}, -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := Record{Handle: "21.T1/X", Values: tt.values}
			p := NewPublic(&rec)
			if p.Status != tt.status || p.Hidden() != (tt.status == StatusSubmitted) || p.Gone() != tt.status.Tombstoned() {
				t.Errorf("Status = %v (hidden %v, gone %v), want %v", p.Status, p.Hidden(), p.Gone(), tt.status)
			}
			var got []int32
			for _, x := range p.Values {
				if x.Perm&PermPublicRead == 0 {
					t.Errorf("value %d without public read in Values", x.Index)
				}
				got = append(got, x.Index)
			}
			if !slices.Equal(got, tt.indexes) {
				t.Errorf("Values indexes = %v, want %v", got, tt.indexes)
			}
			switch tv := p.TargetValue(); {
			case tt.target < 0 && tv != nil:
				t.Errorf("target = value %d, want none", tv.Index)
			case tt.target >= 0 && (tv == nil || tv.Index != tt.target):
				t.Errorf("target = %v, want value %d", tv, tt.target)
			}
			if string(p.Alias) != tt.alias {
				t.Errorf("Alias = %q, want %q", p.Alias, tt.alias)
			}
		})
	}
}

// TestNewPublicSharesAllPublic: a record whose values are all public is not
// copied (the common case costs no allocation on a cache miss).
func TestNewPublicSharesAllPublic(t *testing.T) {
	rec := Record{Values: []Value{{Index: 1, Type: "URL", Data: []byte("https://a"), Perm: PermDefault}}}
	if n := testing.AllocsPerRun(100, func() { _ = NewPublic(&rec) }); n != 0 {
		t.Errorf("NewPublic allocates %v times for an all-public record, want 0", n)
	}
	if p := NewPublic(&rec); &p.Values[0] != &rec.Values[0] {
		t.Error("NewPublic copied an all-public record's values")
	}
}

func TestChooseTargetFilter(t *testing.T) {
	vs := []Value{{Index: 1, Type: "URL"}, {Index: 2, Type: "URL.meta"}, {Index: 3, Type: "URL"}}
	if got := ChooseTarget(vs, func(v *Value) bool { return v.Index != 1 }); got != 2 {
		t.Errorf("ChooseTarget(skip 1) = %d, want 2 (the second URL)", got)
	}
	if got := ChooseTarget(vs, func(v *Value) bool { return v.Index == 2 }); got != 1 {
		t.Errorf("ChooseTarget(only 2) = %d, want 1 (the subtype)", got)
	}
	if got := ChooseTarget(vs, func(*Value) bool { return false }); got != -1 {
		t.Errorf("ChooseTarget(none) = %d, want -1", got)
	}
}
