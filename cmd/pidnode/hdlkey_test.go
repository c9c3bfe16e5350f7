package main

import (
	"bytes"
	"context"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"pidnode/handlev/hsmsg"
	"pidnode/resolver/hdl"
)

// TestSignKeyFromFirstStart: a node started without --hdl-key creates
// DATA/hdl.key (mode 0600) on its first start, publishes its public half in
// GET_SITE_INFO and signs certified replies with it; a restart keeps the same
// key, and `pidnode siteinfo --data` prints it too.
func TestSignKeyFromFirstStart(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(data, hdlKeyFile)
	check := func(n *runningNode) *hdl.Response {
		t.Helper()
		c := &hdl.Client{Addr: n.addr["hdl"], Timeout: 5 * time.Second}
		rep, err := c.SiteInfo(context.Background(), hsmsg.FlagsJava|hsmsg.FlagCT)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Header.ResponseCode != hsmsg.RCSuccess || rep.Site == nil || len(rep.Site.Servers) != 1 {
			t.Fatalf("certified GET_SITE_INFO: RC %d %q", rep.Header.ResponseCode, rep.ErrorMessage)
		}
		pub, err := hsmsg.ParseRSAPublicKey(rep.Site.Servers[0].PublicKey)
		if err != nil {
			t.Fatalf("site info's public key: %v", err)
		}
		key, err := hdl.LoadKey(path)
		if err != nil {
			t.Fatal(err)
		}
		if !pub.Equal(&key.PublicKey) {
			t.Error("site info publishes another key than " + path)
		}
		if err := rep.VerifySignature(pub); err != nil {
			t.Errorf("certified reply does not verify with the published key: %v", err)
		}
		return rep
	}

	n := startBinary(t, data)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("no signing key in the data directory after the first start: %v", err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("%s mode %04o, want 0600", path, perm)
	}
	before, _ := os.ReadFile(path)
	check(n)
	n.stop(t)

	n = startBinary(t, data)
	check(n)
	n.stop(t)
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a restart replaced the signing key")
	}

	out, err := exec.Command(pidnodeBin(t), "siteinfo", "--hdl-addr", "192.0.2.1:2641", "--data", data).Output()
	if err != nil {
		t.Fatalf("pidnode siteinfo: %v", err)
	}
	key, err := hdl.LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := hdl.SiteInfoJSON(hdl.SiteConfig{Address: netip.MustParseAddr("192.0.2.1"), Port: 2641}, &key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	if got := bytes.TrimSpace(out); !bytes.Equal(got, want) {
		t.Errorf("pidnode siteinfo --data:\n%s\nwant\n%s", got, want)
	}
}
