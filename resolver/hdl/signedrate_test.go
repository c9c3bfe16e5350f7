package hdl_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"pidnode/handlev/hsmsg"
	"pidnode/resolver/hdl"
)

// TestSignedRateLimit: beyond its burst of signed replies, a source whose
// turn would not come within SignedWait (the rate is so low that nothing
// refills for ages) gets RC 3 unsigned for its certified requests, over TCP
// and UDP alike, at once; its plain requests and another source's certified
// ones are still answered.
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

// TestSignedRatePaced: a certified client in the loop past its source's
// budget, one request after the other over TCP and UDP as the CNRI resolver
// sends them, and then several at once, gets every reply signed and
// verifiable: requests beyond the budget wait for their turn instead of
// getting an unsigned RC 3 the client would report as a bad signature.
func TestSignedRatePaced(t *testing.T) {
	const rate, burst, sequential = 20, 2, 12
	key := signKey(t)
	n := startNodeWith(t, func(c *hdl.Config) {
		c.SignKey = key
		c.SignedRate, c.SignedBurst = rate, burst
	}, records()...)
	resolve := func(local string, udp bool) error {
		c := n.client(udp)
		c.LocalIP = net.ParseIP(local)
		rep, err := c.Resolve(context.Background(), "20.500.1/SMALL", nil, nil, hsmsg.FlagsJava|hsmsg.FlagCT)
		if err != nil {
			return err
		}
		if err := rep.VerifySignature(&key.PublicKey); err != nil {
			return fmt.Errorf("RC %d %q: signature: %v", rep.Header.ResponseCode, rep.ErrorMessage, err)
		}
		if rep.Header.ResponseCode != hsmsg.RCSuccess && rep.Header.ResponseCode != hsmsg.RCServerTooBusy {
			return fmt.Errorf("RC %d %q, want 1 (or a signed 3)", rep.Header.ResponseCode, rep.ErrorMessage)
		}
		return nil
	}
	start := time.Now()
	for i := range sequential {
		udp := i%2 == 1
		if err := resolve("127.0.0.1", udp); err != nil {
			t.Fatalf("certified request %d of %d in a row (udp=%v): %v", i+1, sequential, udp, err)
		}
	}
	// The budget, not luck, let them through: the ones past the burst waited.
	if min := time.Duration(sequential-burst-1) * time.Second / rate; time.Since(start) < min {
		t.Errorf("%d certified requests took %v, want at least %v at %d/s after a burst of %d", sequential, time.Since(start), min, rate, burst)
	}

	// Several at once from another source, TCP and UDP mixed: more than the
	// burst, fewer than SignedWait (1 s) of budget.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			if err := resolve("127.0.0.2", i%2 == 1); err != nil {
				errs <- fmt.Errorf("parallel certified request %d (udp=%v): %v", i, i%2 == 1, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := n.srv.Stats()
	if st.TooBusy != 0 || st.SignedWaits == 0 {
		t.Errorf("Stats.TooBusy = %d, SignedWaits = %d; want 0 and some", st.TooBusy, st.SignedWaits)
	}
}

// TestSignedWaitShutdown: a UDP request waiting for its turn does not hold up
// Shutdown; it ends with the server.
func TestSignedWaitShutdown(t *testing.T) {
	key := signKey(t)
	n := startNodeWith(t, func(c *hdl.Config) {
		c.SignKey = key
		c.SignedRate, c.SignedBurst, c.SignedWait = 0.2, 1, 10*time.Second // the next turn is 5 s away
	}, records()...)
	c := n.client(true)
	ct := hsmsg.FlagsJava | hsmsg.FlagCT
	if _, err := c.Resolve(context.Background(), "20.500.1/SMALL", nil, nil, ct); err != nil {
		t.Fatal(err)
	}
	c.Timeout = 300 * time.Millisecond
	if rep, err := c.Resolve(context.Background(), "20.500.1/SMALL", nil, nil, ct); err == nil {
		t.Fatalf("request past the burst answered at once: RC %d", rep.Header.ResponseCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	if err := n.srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with a waiting request: %v after %v", err, time.Since(start))
	}
}
