package hdl_test

import (
	"context"
	"net"
	"testing"

	"pidnode/handlev/hsmsg"
	"pidnode/resolver/hdl"
)

// TestSignedRateLimit: beyond its burst of signed replies (the rate is so low
// that nothing refills during the test), a source's certified requests get RC 3
// unsigned, over TCP and UDP alike; its plain requests and another source's
// certified ones are still answered.
func TestSignedRateLimit(t *testing.T) {
	const burst = 3
	key := signKey(t)
	n := startNodeWith(t, func(c *hdl.Config) {
		c.SignKey = key
		c.SignedRate, c.SignedBurst = 1e-6, burst
	}, records()...)
	resolve := func(local string, udp bool, flags uint32) *hdl.Response {
		t.Helper()
		c := n.client(udp)
		c.LocalIP = net.ParseIP(local)
		rep, err := c.Resolve(context.Background(), "20.500.1/SMALL", nil, nil, flags)
		if err != nil {
			t.Fatalf("resolve from %s (udp=%v): %v", local, udp, err)
		}
		return rep
	}
	ct := hsmsg.FlagsJava | hsmsg.FlagCT
	for i := range burst {
		rep := resolve("127.0.0.1", i%2 == 1, ct)
		if rep.Header.ResponseCode != hsmsg.RCSuccess || rep.VerifySignature(&key.PublicKey) != nil {
			t.Fatalf("signed request %d of the burst: RC %d %q", i+1, rep.Header.ResponseCode, rep.ErrorMessage)
		}
	}
	for _, udp := range []bool{false, true} {
		rep := resolve("127.0.0.1", udp, ct)
		if rep.Header.ResponseCode != hsmsg.RCServerTooBusy {
			t.Errorf("signed request beyond the burst (udp=%v): RC %d, want %d", udp, rep.Header.ResponseCode, hsmsg.RCServerTooBusy)
		}
		if rep.Header.OpFlag&hsmsg.FlagCT != 0 || len(rep.Credential) != 0 {
			t.Errorf("too-busy reply (udp=%v) is signed or claims CT", udp)
		}
		if rep := resolve("127.0.0.1", udp, hsmsg.FlagsJava); rep.Header.ResponseCode != hsmsg.RCSuccess {
			t.Errorf("plain request (udp=%v) after the limit: RC %d", udp, rep.Header.ResponseCode)
		}
	}
	if rep := resolve("127.0.0.2", false, ct); rep.Header.ResponseCode != hsmsg.RCSuccess || rep.VerifySignature(&key.PublicKey) != nil {
		t.Errorf("another source's signed request: RC %d %q", rep.Header.ResponseCode, rep.ErrorMessage)
	}
	if st := n.srv.Stats(); st.TooBusy != 2 {
		t.Errorf("Stats.TooBusy = %d, want 2", st.TooBusy)
	}
}
