package hdldns

import (
	"errors"
	"testing"
)

func TestAppendHandle(t *testing.T) {
	tests := []struct {
		name, prefix, sub string
		want              string
		err               error
	}{
		{"apex", "21.T12345", "", "21.T12345", nil},
		{"reference example", "21.T12345", "4XJ29MPAC.K7Q.svc", "21.T12345/svc/K7Q/4XJ29MPAC", nil},
		{"lower case kept (the key folds it)", "21.T12345", "4xj29mpac.k7q.svc", "21.T12345/svc/k7q/4xj29mpac", nil},
		{"one label", "21.T12345", "abc", "21.T12345/abc", nil},
		{"hx slash inside a segment", "21.T12345", "hx--a-2fb", "21.T12345/a/b", nil},
		{"hx upper-case marker and digits", "21.T12345", "HX--A-2Fb", "21.T12345/A/b", nil},
		{"hx dash as -2d", "21.T12345", "hx--2024-2d01.x", "21.T12345/x/2024-01", nil},
		{"hx empty body", "21.T12345", "hx--", "21.T12345/", nil},
		{"hx non-ascii byte", "21.T12345", "hx--caf-c3-a9", "21.T12345/caf\xc3\xa9", nil},
		{"hx trailing dash", "21.T12345", "hx--ab-", "", errBadName},
		{"hx short escape", "21.T12345", "hx--ab-2", "", errBadName},
		{"hx non-hex escape", "21.T12345", "hx--ab-zz", "", errBadName},
		{"hx double dash", "21.T12345", "hx--a--2f", "", errBadName},
		{"not hx: single dash marker", "21.T12345", "hx-a-2f", "21.T12345/hx-a-2f", nil},
		{"escaped dot stays in the label", "21.T12345", `a\.b.c`, "21.T12345/c/a.b", nil},
		{"decimal escape", "21.T12345", `a\047b`, "21.T12345/a/b", nil},
		{"escaped backslash", "21.T12345", `a\\b`, `21.T12345/a\b`, nil},
		{"decimal escape out of range", "21.T12345", `a\300`, "", errBadName},
		{"short decimal escape", "21.T12345", `a\04`, "", errBadName},
		{"lone trailing backslash", "21.T12345", `a\`, "", errBadName},
		{"empty label", "21.T12345", "a..b", "", errBadName},
		{"leading dot", "21.T12345", ".a", "", errBadName},
		{"hx after presentation escape", "21.T12345", `hx--a\0452f`, "21.T12345/a/", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := appendHandle(nil, tt.prefix, tt.sub)
			if !errors.Is(err, tt.err) {
				t.Fatalf("appendHandle(%q, %q) error = %v, want %v", tt.prefix, tt.sub, err, tt.err)
			}
			if err == nil && string(got) != tt.want {
				t.Errorf("appendHandle(%q, %q) = %q, want %q", tt.prefix, tt.sub, got, tt.want)
			}
		})
	}
}

func TestAppendHandleTooManyLabels(t *testing.T) {
	sub := "a"
	for range maxLabels {
		sub += ".a"
	}
	if _, err := appendHandle(nil, "21.1", sub); !errors.Is(err, errBadName) {
		t.Errorf("appendHandle(%d labels) error = %v, want errBadName", maxLabels+1, err)
	}
}

func TestFindZone(t *testing.T) {
	zones, err := buildZones(&Config{Zones: []Zone{
		{Name: "hdl.example.org", Prefix: "21.T12345"},
		{Name: "Sub.HDL.example.org.", Prefix: "21.12345"},
		{Name: "other.test", Prefix: "21.1"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{zones: zones}
	tests := []struct {
		name, qname       string
		wantZone, wantSub string
		wantNil           bool
	}{
		{"apex", "hdl.example.org.", "hdl.example.org.", "", false},
		{"apex mixed case", "HdL.ExAmple.ORG.", "hdl.example.org.", "", false},
		{"below", "a.b.hdl.example.org.", "hdl.example.org.", "a.b", false},
		{"longest zone wins", "x.sub.hdl.example.org.", "sub.hdl.example.org.", "x", false},
		{"nested apex", "SUB.hdl.example.org.", "sub.hdl.example.org.", "", false},
		{"not on a label boundary", "xhdl.example.org.", "", "", true},
		{"escaped dot is no boundary", `a\.hdl.example.org.`, "", "", true},
		{"escaped backslash then boundary", `a\\.hdl.example.org.`, "hdl.example.org.", `a\\`, false},
		{"outside", "example.org.", "", "", true},
		{"other zone", "q.other.test.", "other.test.", "q", false},
		{"root", ".", "", "", true},
		{"not fully qualified", "hdl.example.org", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			z, sub := s.findZone(tt.qname)
			if tt.wantNil {
				if z != nil {
					t.Fatalf("findZone(%q) = %q, %q; want no zone", tt.qname, z.name, sub)
				}
				return
			}
			if z == nil || z.name != tt.wantZone || sub != tt.wantSub {
				name := "<nil>"
				if z != nil {
					name = z.name
				}
				t.Fatalf("findZone(%q) = %q, %q; want %q, %q", tt.qname, name, sub, tt.wantZone, tt.wantSub)
			}
		})
	}
}

func TestTypeMatches(t *testing.T) {
	tests := []struct {
		name string
		t    string
		qt   uint16
		want bool
	}{
		{"mnemonic", "TXT", 16, true},
		{"mnemonic lower case", "txt", 16, true},
		{"generic", "TYPE16", 16, true},
		{"generic lower case", "type65280", 65280, true},
		{"generic other type", "TYPE1", 16, false},
		{"generic plus sign", "TYPE+16", 16, false},
		{"generic empty", "TYPE", 16, false},
		{"generic too big", "TYPE65536", 0, false},
		{"other mnemonic", "A", 16, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mn, known := typeString(tt.qt)
			if got := typeMatches(tt.t, tt.qt, mn, known); got != tt.want {
				t.Errorf("typeMatches(%q, %d) = %v, want %v", tt.t, tt.qt, got, tt.want)
			}
		})
	}
}
