package outbound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestPublic(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"93.184.215.14", true},
		{"8.8.8.8", true},
		{"2606:4700::6810:85e5", true},
		{"127.0.0.1", false},
		{"127.1.2.3", false},
		{"10.0.0.1", false},
		{"172.16.5.4", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false}, // cloud metadata service
		{"100.100.100.200", false}, // shared address space, also a metadata service
		{"0.0.0.0", false},
		{"255.255.255.255", false},
		{"224.0.0.1", false},
		{"192.0.2.10", false},
		{"198.18.0.1", false},
		{"::1", false},
		{"::", false},
		{"fe80::1", false},
		{"fd00:ec2::254", false},
		{"ff02::1", false},
		{"2001:db8::1", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:8.8.8.8", true},
		{"64:ff9b::a00:1", false},   // NAT64 of 10.0.0.1
		{"64:ff9b::808:808", true},  // NAT64 of 8.8.8.8
		{"2002:c0a8:101::1", false}, // 6to4 of 192.168.1.1
	} {
		if got := Public(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("Public(%s) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}

func TestPolicyAllow(t *testing.T) {
	p := NewPolicy([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/8"), netip.MustParsePrefix("fd00::/8")})
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1", true}, {"127.9.9.9", true}, {"::ffff:127.0.0.1", true}, {"fd12::1", true},
		{"10.0.0.1", false}, {"::1", false}, {"8.8.8.8", true},
	} {
		err := p.Check(netip.MustParseAddr(tc.addr))
		if (err == nil) != tc.ok {
			t.Errorf("Check(%s) = %v, want allowed=%v", tc.addr, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrDenied) {
			t.Errorf("Check(%s) = %v, want ErrDenied", tc.addr, err)
		}
	}
}

// server is a loopback HTTP server on addr (127.0.0.1:0 or another
// loopback address) recording what it was sent.
func server(t *testing.T, addr string, h http.HandlerFunc) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("listen %s: %v", addr, err)
	}
	s := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
	s.Start()
	t.Cleanup(s.Close)
	return s.URL
}

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

func TestLoopbackRefusedUnlessAllowed(t *testing.T) {
	u := server(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })
	for _, target := range []string{u, strings.Replace(u, "127.0.0.1", "localhost", 1)} {
		_, err := NewClient(Config{Timeout: 5 * time.Second}).Get(target)
		if !errors.Is(err, ErrDenied) || Classify(err) != ClassDenied {
			t.Errorf("GET %s without allowance: err %v (class %q), want denied", target, err, Classify(err))
		}
		resp, err := NewClient(Config{Allow: loopback, Timeout: 5 * time.Second}).Get(target)
		if err != nil {
			t.Fatalf("GET %s with 127.0.0.0/8 allowed: %v", target, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 204 {
			t.Errorf("GET %s: status %d, want 204", target, resp.StatusCode)
		}
	}
}

func TestRedirectToDeniedAddressRefused(t *testing.T) {
	inner := server(t, "127.0.0.2:0", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
	outer := server(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, inner, http.StatusFound) })
	c := NewClient(Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Timeout: 5 * time.Second})
	_, err := c.Get(outer)
	var d *DeniedError
	if !errors.As(err, &d) || d.Addr != netip.MustParseAddr("127.0.0.2") {
		t.Fatalf("GET %s redirecting to %s: err %v, want DeniedError for 127.0.0.2", outer, inner, err)
	}
}

func TestNoCredentialsNoCookies(t *testing.T) {
	type seen struct{ auth, cookie, ua string }
	got := make(chan seen, 4)
	var u string
	u = server(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.Header.Get("Authorization"), r.Header.Get("Cookie"), r.Header.Get("User-Agent")}
		if r.URL.Path == "/start" {
			http.SetCookie(w, &http.Cookie{Name: "s", Value: "1"})
			http.Redirect(w, r, strings.Replace(u, "http://", "http://user:pw@", 1)+"/next", http.StatusFound)
		}
	})
	req, _ := http.NewRequest("GET", strings.Replace(u, "http://", "http://alice:secret@", 1)+"/start", nil)
	req.Header.Set("Cookie", "a=b")
	req.Header.Set("Authorization", "Bearer x")
	resp, err := NewClient(Config{Allow: loopback, UserAgent: "pidnode-test (ops@example.org)"}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for i := 0; i < 2; i++ {
		s := <-got
		if s.auth != "" || s.cookie != "" {
			t.Errorf("request %d sent Authorization %q, Cookie %q; want neither", i, s.auth, s.cookie)
		}
		if s.ua != "pidnode-test (ops@example.org)" {
			t.Errorf("request %d User-Agent %q", i, s.ua)
		}
	}
}

func TestRedirectLimitAndNone(t *testing.T) {
	var u string
	u = server(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, u+"/again", http.StatusFound) // a loop
	})
	_, err := NewClient(Config{Allow: loopback, MaxRedirects: 3}).Get(u)
	if !errors.Is(err, ErrTooManyRedirects) || Classify(err) != ClassRedirects {
		t.Errorf("redirect loop: err %v, want ErrTooManyRedirects", err)
	}
	resp, err := NewClient(Config{Allow: loopback, MaxRedirects: -1}).Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Errorf("MaxRedirects -1: status %d, want the 302 itself", resp.StatusCode)
	}
}

func TestSchemeRefused(t *testing.T) {
	u := server(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "ftp://127.0.0.1/file")
		w.WriteHeader(http.StatusFound)
	})
	c := NewClient(Config{Allow: loopback})
	if _, err := c.Get(u); Classify(err) != ClassScheme && Classify(err) != ClassOther {
		t.Errorf("redirect to ftp: err %v (class %q)", err, Classify(err))
	}
	if _, err := c.Get("file:///etc/passwd"); !errors.Is(err, ErrScheme) {
		t.Errorf("file URL: err %v, want ErrScheme", err)
	}
}

func TestClassify(t *testing.T) {
	// A port nothing listens on: connection refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := NewClient(Config{Allow: loopback, Timeout: 2 * time.Second})
	if _, err := c.Get("http://" + addr + "/"); Classify(err) != ClassConnect {
		t.Errorf("closed port: class %q (%v), want connect", Classify(err), err)
	}
	// A TLS server whose certificate nobody trusts.
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ts.Close()
	if _, err := c.Get(ts.URL); Classify(err) != ClassTLS {
		t.Errorf("untrusted certificate: class %q (%v), want tls", Classify(err), err)
	}
	// A server that never answers.
	block := make(chan struct{})
	slow := server(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) { <-block })
	defer close(block)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", slow, nil)
	if _, err := c.Do(req); Classify(err) != ClassTimeout {
		t.Errorf("silent server: class %q (%v), want timeout", Classify(err), err)
	}
	// A failed lookup (not made here: tests send nothing beyond loopback).
	dnsErr := &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}}
	if Classify(dnsErr) != ClassDNS {
		t.Errorf("failed lookup: class %q, want dns", Classify(dnsErr))
	}
	if Classify(nil) != "" || Classify(fmt.Errorf("x")) != ClassOther {
		t.Error("Classify(nil) or of an unknown error")
	}
}
