package main

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAdminKeyRefusalByBoundAddress: the node decides whether its plain admin
// listener refuses bearer keys from the address the listener is bound to
// (serve.go's isLoopback of the listener's Addr), not from the client's. A
// wildcard bind (0.0.0.0, and [::] where the host has IPv6) is a network
// address: keys are refused with a 403 problem even when the client comes in
// through 127.0.0.1, and accepted with --admin-insecure; a 127.0.0.1 bind
// accepts them. This runs on any host, unlike
// TestAdminRefusesKeysOverPlainHTTP, which needs an interface address.
func TestAdminKeyRefusalByBoundAddress(t *testing.T) {
	plain := &http.Client{Timeout: 10 * time.Second}
	type bind struct{ addr, dial string }
	binds := []bind{{"0.0.0.0:0", "127.0.0.1"}}
	if ln, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		ln.Close()
		binds = append(binds, bind{"[::]:0", "::1"})
	}
	for _, b := range binds {
		for _, insecure := range []bool{false, true} {
			args := []string{"--admin-addr", b.addr, "--dns-addr", "", "--hdl-addr", ""}
			if insecure {
				args = append(args, "--admin-insecure")
			}
			n, cancel, done := startTestNode(t, t.TempDir(), args...)
			_, port, err := net.SplitHostPort(n.addr("admin"))
			if err != nil {
				stopTestNode(t, cancel, done)
				t.Fatal(err)
			}
			base := "http://" + net.JoinHostPort(b.dial, port)
			code, body := call(t, plain, "GET", base+"/ops/v1/snaas", n.opKey, nil)
			switch {
			case !insecure && (code != 403 || !strings.Contains(string(body), "plain HTTP")):
				t.Errorf("bound %s, via %s: operator key got %d %s, want 403 problem", b.addr, b.dial, code, body)
			case insecure && code != 200:
				t.Errorf("bound %s with --admin-insecure: operator key got %d %s, want 200", b.addr, code, body)
			}
			// A wrong key is refused the same way before it is even checked.
			if code, _ := call(t, plain, "GET", base+"/ops/v1/snaas", "not-a-key", nil); !insecure && code != 403 {
				t.Errorf("bound %s: a wrong key got %d, want 403", b.addr, code)
			}
			if code := readyzEventually(t, plain, base); code != 200 {
				t.Errorf("bound %s insecure=%v: keyless /readyz = %d", b.addr, insecure, code)
			}
			stopTestNode(t, cancel, done)
		}
	}
	// The contrast: bound to loopback, the same request is served.
	n, cancel, done := startTestNode(t, t.TempDir(), "--dns-addr", "", "--hdl-addr", "")
	defer stopTestNode(t, cancel, done)
	if code, body := call(t, plain, "GET", "http://"+n.addr("admin")+"/ops/v1/snaas", n.opKey, nil); code != 200 {
		t.Errorf("bound to loopback: operator key got %d %s, want 200", code, body)
	}
}
