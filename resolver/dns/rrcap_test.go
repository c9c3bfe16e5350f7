package hdldns_test

import (
	"fmt"
	"testing"

	"github.com/miekg/dns"

	"pidnode/handlev"
	hdldns "pidnode/resolver/dns"
)

// TestMaxRRsPerAnswer: a record with more DNS.A values than MaxRRsPerAnswer is
// answered with exactly MaxRRsPerAnswer of them, the first ones in value order
// that parse (values that do not parse take no place), on the first query and
// on the second, which comes from the entry's memo; another type of the same
// record is not affected.
func TestMaxRRsPerAnswer(t *testing.T) {
	const handle = "21.T12345/svc/DNS/MANYRECS1"
	const name = "MANYRECS1.DNS.svc." + zoneTest
	f := newFixture(t, nil)
	vals := []handlev.Value{val(handlev.TypeURL, "https://example.org/many", 3600), status(handlev.StatusRegistered)}
	var want []string
	for i := range hdldns.MaxRRsPerAnswer + 36 {
		if i%10 == 3 { // interleaved values that do not parse
			vals = append(vals, val("DNS.A", fmt.Sprintf("not-an-address-%d", i), 300))
		}
		a := fmt.Sprintf("198.51.%d.%d", 100+i/200, 1+i%200)
		vals = append(vals, val("DNS.A", a, 300))
		if len(want) < hdldns.MaxRRsPerAnswer {
			want = append(want, a)
		}
	}
	vals = append(vals, val("DNS.AAAA", "2001:db8::1", 300), val("DNS.AAAA", "2001:db8::2", 300))
	f.put(t, handle, vals...)

	for round := range 2 { // the second answer comes from the memo
		r := f.exchange(t, "tcp", query(name, dns.TypeA, 0))
		if r.Rcode != dns.RcodeSuccess || r.Truncated {
			t.Fatalf("round %d: rcode %d, TC %v", round, r.Rcode, r.Truncated)
		}
		if len(r.Answer) != hdldns.MaxRRsPerAnswer {
			t.Fatalf("round %d: %d A records, want MaxRRsPerAnswer = %d", round, len(r.Answer), hdldns.MaxRRsPerAnswer)
		}
		for i, rr := range r.Answer {
			a, ok := rr.(*dns.A)
			if !ok || a.A.String() != want[i] {
				t.Fatalf("round %d: answer %d is %v, want A %s (the first %d that parse, in value order)", round, i, rr, want[i], hdldns.MaxRRsPerAnswer)
			}
		}
	}
	r := f.exchange(t, "tcp", query(name, dns.TypeAAAA, 0))
	if len(r.Answer) != 2 {
		t.Fatalf("AAAA: %v, want the record's 2", r.Answer)
	}
}
