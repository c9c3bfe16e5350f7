package model

import (
	"strings"
	"testing"

	"pidnode/handlev"
)

// TestTargetURLRule: the URLs an attacker got acknowledged with 201 although
// the resolver would not redirect to them are refused, naming the part at
// fault; ordinary URLs still pass.
func TestTargetURLRule(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"https://\u202eevil.org/", "its host has a bidirectional control or invisible character"},
		{"https://e\u200dvil.org/", "its host has a bidirectional control or invisible character"},
		{"https://[fe80::1%25eth0]/", "its host has an IPv6 zone identifier"},
		{"https://a.org:/", "its port is empty"},
		{"https://a.org:99999/", "its port is out of range 1-65535"},
		{"https://a.org:0/", "its port is out of range 1-65535"},
		{"http://0x7f.1/", "its host ends in a number but is not a dotted-decimal IPv4 address"},
		{"https://a..org/", "its host has an empty label"},
		{"https://example.org/", ""},
		{"https://example.org:8443/a?b=c#d", ""},
		{"http://[2001:db8::1]/x", ""},
		{"https://bücher.example/", ""},
		{"https://192.0.2.7/", ""},
	} {
		got := checkHTTPURL(tc.url)
		switch {
		case tc.want == "" && got != "":
			t.Errorf("checkHTTPURL(%q) = %q, want accepted", tc.url, got)
		case tc.want != "" && !strings.Contains(got, tc.want):
			t.Errorf("checkHTTPURL(%q) = %q, want it to say %q", tc.url, got, tc.want)
		}
	}
}

// FuzzAcceptedURLRedirects: whatever URL the admin API accepts, the resolver
// builds a Location for — the one rule holds on both sides.
func FuzzAcceptedURLRedirects(f *testing.F) {
	for _, s := range []string{"https://example.org/", "http://a.org:80/x?y#z", "https://[::1]:8/", "https://bücher.example/p",
		"https://a.org:/", "https://\u202eevil.org/", "HTTPS://EXAMPLE.ORG/%zz", "https://u:p@h.org/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if checkHTTPURL(s) != "" {
			return
		}
		if loc, err := handlev.AppendTargetURL(nil, []byte(s)); err != nil || len(loc) == 0 {
			t.Fatalf("accepted %q, but the resolver builds no Location: %v", s, err)
		}
	})
}
