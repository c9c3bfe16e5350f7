package hdldns_test

import (
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// TestServeDNSAllocs: a cached TXT or URI answer allocates nothing in the
// handler (docs/architecture.md practice 6). miekg/dns's own unpacking and per-packet
// goroutine are outside it.
func TestServeDNSAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	fx := newOffline(t, nil)
	loadAnswerData(t, fx)
	tests := []struct {
		name string
		q    *dns.Msg
		tcp  bool
	}{
		{"TXT over UDP", query(nameRef, dns.TypeTXT, 0), false},
		{"TXT with EDNS0", query(strings.ToLower(nameRef), dns.TypeTXT, 1232), false},
		{"URI over TCP", query(nameRef, dns.TypeURI, 0), true},
		{"short form, found under the Alt key", query("4XJ29MPAC.K7Q."+zoneTest, dns.TypeTXT, 0), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &discardWriter{captureWriter{tcp: tt.tcp}}
			fx.srv.ServeDNS(w, tt.q) // fill the cache and the pool
			if n := testing.AllocsPerRun(200, func() { fx.srv.ServeDNS(w, tt.q) }); n != 0 {
				t.Errorf("ServeDNS allocates %.1f times per query, want 0", n)
			}
		})
	}
}
