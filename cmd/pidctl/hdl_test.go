package main

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/resolver/hdl"
	"pidnode/store"
)

// startHDL runs a real native-protocol listener (TCP and UDP on one port) over a
// cache over bbolt in t.TempDir(), holding one record.
func startHDL(t *testing.T) string {
	t.Helper()
	namer, err := handlev.NewNamer(handlev.NamerConfig{Prefix: "21.11148", Extra: []string{"20.500.1"}})
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(store.Config{Path: filepath.Join(t.TempDir(), "pid.db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	rec := handlev.Record{Handle: "20.500.1/DEMO", Values: []handlev.Value{
		{Index: 1, Type: "URL", Data: []byte("https://example.org/demo"), TTL: 86400, Perm: handlev.PermDefault},
		{Index: 2, Type: "EMAIL", Data: []byte("pid@example.org"), TTL: 86400, Perm: handlev.PermDefault},
		{Index: 100, Type: "HS_ADMIN", Data: handlev.AppendAdmin(nil, handlev.Admin{Mask: 0x0FFF, Handle: "0.NA/20.500.1", Index: 200}), TTL: 86400, Perm: handlev.PermDefault},
	}}
	if err := db.Update(func(tx *store.Tx) error { return tx.PutRecord("20.500.1/DEMO", &store.Stored{Record: rec, Version: 1}) }); err != nil {
		t.Fatal(err)
	}
	c, err := cache.New(cache.Config{Source: db})
	if err != nil {
		t.Fatal(err)
	}
	var ln net.Listener
	var pc net.PacketConn
	for i := 0; i < 20 && pc == nil; i++ {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if pc, err = net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)); err != nil {
			ln.Close()
			pc = nil
		}
	}
	if pc == nil {
		t.Fatal("no port pair")
	}
	srv, err := hdl.New(hdl.Config{Cache: c, Namer: namer, Site: hdl.SiteConfig{Port: ln.Addr().(*net.TCPAddr).Port}})
	if err != nil {
		t.Fatal(err)
	}
	go srv.ServeTCP(ln)
	go srv.ServeUDP(pc)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return ln.Addr().String()
}

func TestHDLResolve(t *testing.T) {
	addr := startHDL(t)
	tests := []struct {
		name        string
		args        []string
		code        int
		out, errOut string
	}{
		{"tcp", []string{"resolve", "20.500.1/demo", "--server", addr}, 0,
			"20.500.1/demo\t3 values\n1\tURL\thttps://example.org/demo\n2\tEMAIL\tpid@example.org\n100\tHS_ADMIN\thandle=0.NA/20.500.1 index=200 perms=0fff\n", ""},
		{"udp, flags first", []string{"resolve", "--udp", "--server", addr, "20.500.1/DEMO"}, 0,
			"20.500.1/DEMO\t3 values\n1\tURL\thttps://example.org/demo\n2\tEMAIL\tpid@example.org\n100\tHS_ADMIN\thandle=0.NA/20.500.1 index=200 perms=0fff\n", ""},
		{"type filter", []string{"resolve", "20.500.1/DEMO", "--server", addr, "--type", "EMAIL"}, 0,
			"20.500.1/DEMO\t1 values\n2\tEMAIL\tpid@example.org\n", ""},
		{"index filter json", []string{"resolve", "20.500.1/DEMO", "--server", addr, "--index", "1", "--json"}, 0,
			`{"responseCode":1,"handle":"20.500.1/DEMO","values":[{"index":1,"type":"URL","data":{"format":"string","value":"https://example.org/demo"},"ttl":86400}]}` + "\n", ""},
		{"not found", []string{"resolve", "20.500.1/NOPE", "--server", addr}, 1, "", "RC 100 HANDLE NOT FOUND"},
		{"prefix not served", []string{"resolve", "99.1/X", "--server", addr, "--udp"}, 1, "", "RC 301 SERVER NOT RESPONSIBLE FOR HANDLE"},
		{"siteinfo", []string{"siteinfo", "--server", addr}, 0, "protocol 2.11 serial 1 primary true\nattribute desc=pidnode\nserver 1 127.0.0.1 no key\n  interface query TCP port", ""},
		{"no handle", []string{"resolve", "--server", addr}, 2, "", "want exactly one HANDLE"},
		{"unknown subcommand", []string{"frobnicate"}, 2, "", "unknown subcommand"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(append([]string{"hdl"}, tc.args...), &out, &errOut)
			if code != tc.code {
				t.Fatalf("pidctl hdl %v = %d, want %d; stderr %q", tc.args, code, tc.code, errOut.String())
			}
			if !strings.HasPrefix(out.String(), tc.out) {
				t.Errorf("stdout = %q, want prefix %q", out.String(), tc.out)
			}
			if !strings.Contains(errOut.String(), tc.errOut) {
				t.Errorf("stderr = %q, want %q", errOut.String(), tc.errOut)
			}
		})
	}
}
