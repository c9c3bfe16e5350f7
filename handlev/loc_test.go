package handlev

import (
	"errors"
	"strings"
	"testing"
)

// locSeeds are 10320/loc values as records carry them, well-formed and not.
var locSeeds = []string{
	`<locations><location href="https://a.example/x" weight="1"/></locations>`,
	`<?xml version="1.0" encoding="UTF-8"?>
<locations chooseby="locatt,country,weighted" http_sc="303">
  <!-- mirrors -->
  <location href="https://eu.example/x" country="de" weight="0.5" view="html"/>
  <location href="https://us.example/x" country="us" weight="0.5"/>
  <location href="https://meta.example/x.ttl" role="metadata" media-type="text/turtle" http_role="conneg"/>
  <location href_template="https://t.example/r?id={hdl}&amp;p={hdl:path}" score="2"/>
</locations>`,
	`<locations><location href="a"></locations>`,
	`<Locations><Location HREF='https://a.example/'></Location></Locations> trailing <junk`,
	`<loc/>`,
	`text<locations/>`,
	`<locations><location href="&bogus;"/></locations>`,
	`<!DOCTYPE locations [<!ENTITY e "x">]><locations><location href="&e;"/></locations>`,
	`<?xml version="1.0" encoding="ISO-8859-1"?><locations/>`,
	``,
}

func TestParseLocations(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string // substring of the error, "" for none
		locs    int
		check   func(t *testing.T, l LocList)
	}{
		{name: "one location", in: locSeeds[0], locs: 1, check: func(t *testing.T, l LocList) {
			if h, _ := l.Locs[0].Attr("href"); h != "https://a.example/x" {
				t.Errorf("href = %q", h)
			}
		}},
		{name: "full example", in: locSeeds[1], locs: 4, check: func(t *testing.T, l LocList) {
			if c, _ := l.Attr("chooseby"); c != "locatt,country,weighted" {
				t.Errorf("chooseby = %q", c)
			}
			if h, _ := l.Locs[3].Attr("href_template"); h != "https://t.example/r?id={hdl}&p={hdl:path}" {
				t.Errorf("entity not decoded: %q", h)
			}
			if r, ok := l.Locs[2].Attr("ROLE"); !ok || r != "metadata" {
				t.Errorf("attribute names should compare case-insensitively: %q %v", r, ok)
			}
		}},
		{name: "case of element names", in: locSeeds[3], locs: 1},
		{name: "nested and unknown elements skipped", in: `<locations><x><location href="https://no.example/"/></x><location href="https://yes.example/"><y/></location></locations>`, locs: 1,
			check: func(t *testing.T, l LocList) {
				if h, _ := l.Locs[0].Attr("href"); h != "https://yes.example/" {
					t.Errorf("href = %q", h)
				}
			}},
		{name: "namespace declarations dropped", in: `<locations xmlns="urn:x" xmlns:a="urn:a"><location a:b="1" href="https://a.example/"/></locations>`, locs: 1,
			check: func(t *testing.T, l LocList) {
				if len(l.Attrs) != 0 || len(l.Locs[0].Attrs) != 1 {
					t.Errorf("attrs %v / %v, want none and href only", l.Attrs, l.Locs[0].Attrs)
				}
			}},
		{name: "unclosed element", in: locSeeds[2], wantErr: "not well-formed"},
		{name: "other root", in: locSeeds[4], wantErr: "root element is <loc>"},
		{name: "text before root", in: locSeeds[5], wantErr: "text outside"},
		{name: "unknown entity", in: locSeeds[6], wantErr: "not well-formed"},
		{name: "DTD entity not expanded", in: locSeeds[7], wantErr: "not well-formed"},
		{name: "other encoding", in: locSeeds[8], wantErr: "not well-formed"},
		{name: "empty", in: locSeeds[9], wantErr: "no <locations>"},
		{name: "truncated", in: `<locations><location href="x"/>`, wantErr: "unexpected EOF"},
		{name: "too long", in: "<locations>" + strings.Repeat(" ", MaxLocBytes) + "</locations>", wantErr: "longer than"},
		{name: "at most MaxLocations", in: "<locations>" + strings.Repeat(`<location href="https://a.example/"/>`, MaxLocations+5) + "</locations>", locs: MaxLocations},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseLocations([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrLoc) {
					t.Fatalf("ParseLocations(%.60q) error = %v, want one containing %q wrapping ErrLoc", tc.in, err, tc.wantErr)
				}
				if len(l.Locs) != 0 || len(l.Attrs) != 0 {
					t.Errorf("ParseLocations(%.60q) returned %d locations with its error, want none", tc.in, len(l.Locs))
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseLocations(%.60q) = %v", tc.in, err)
			}
			if len(l.Locs) != tc.locs {
				t.Fatalf("ParseLocations(%.60q): %d locations, want %d", tc.in, len(l.Locs), tc.locs)
			}
			if tc.check != nil {
				tc.check(t, l)
			}
		})
	}
}

func TestAppendHrefTemplate(t *testing.T) {
	tests := []struct{ tmpl, handle, want string }{
		{"https://x.example/?h={hdl}", "21.T1/A B/ü", "https://x.example/?h=21.T1%2FA%20B%2F%C3%BC"},
		{"https://x.example/{hdl:path}/view", "21.T1/a/b", "https://x.example/21.T1/a/b/view"},
		{"https://x.example/{hdl}{hdl:path}", "1/2", "https://x.example/1%2F21/2"},
		{"https://x.example/{other}/{hdl", "1/2", "https://x.example/{other}/{hdl"},
		{"no placeholder", "1/2", "no placeholder"},
	}
	for _, tc := range tests {
		if got := string(AppendHrefTemplate(nil, tc.tmpl, tc.handle)); got != tc.want {
			t.Errorf("AppendHrefTemplate(%q, %q) = %q, want %q", tc.tmpl, tc.handle, got, tc.want)
		}
	}
}

func TestIsURLType(t *testing.T) {
	for typ, want := range map[string]bool{"URL": true, "url": true, "URL.mirror": true, "Url.x.y": true,
		"URL.": false, "URLS": false, "UR": false, "": false, "EMAIL": false, "10320/loc": false} {
		if got := IsURLType(typ); got != want {
			t.Errorf("IsURLType(%q) = %v, want %v", typ, got, want)
		}
	}
}

// FuzzParseLocations: no input makes the parser panic; an error is always a
// *LocError; a parsed list holds at most MaxLocations locations, and the
// parse is deterministic.
func FuzzParseLocations(f *testing.F) {
	for _, s := range locSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseLocations(data)
		if err != nil {
			var le *LocError
			if !errors.As(err, &le) || !errors.Is(err, ErrLoc) {
				t.Fatalf("ParseLocations(%q) error %v is not a *LocError", data, err)
			}
			return
		}
		if len(l.Locs) > MaxLocations {
			t.Fatalf("ParseLocations(%q): %d locations", data, len(l.Locs))
		}
		l2, err := ParseLocations(data)
		if err != nil || len(l2.Locs) != len(l.Locs) || len(l2.Attrs) != len(l.Attrs) {
			t.Fatalf("ParseLocations(%q) is not deterministic", data)
		}
		for i := range l.Locs {
			for j, a := range l.Locs[i].Attrs {
				if a != l2.Locs[i].Attrs[j] {
					t.Fatalf("ParseLocations(%q) is not deterministic", data)
				}
			}
		}
	})
}
