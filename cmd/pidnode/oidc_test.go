package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewOIDC: without --oidc-issuer there is no relying party; an issuer
// without client id or redirect URL, a readable secret file and an
// unreachable provider are start-up errors that say what to fix.
func TestNewOIDC(t *testing.T) {
	ctx := context.Background()
	if o, err := newOIDC(ctx, OIDCConfig{}); o != nil || err != nil {
		t.Fatalf("newOIDC() without an issuer = %v, %v", o, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + l.Addr().String()
	l.Close()
	secret := filepath.Join(t.TempDir(), "oidc.secret")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cfg  OIDCConfig
		want string
	}{
		{"no client id", OIDCConfig{OIDCIssuer: gone, OIDCRedirectURL: "https://a/console/oidc/callback"}, "--oidc-client-id"},
		{"readable secret", OIDCConfig{OIDCIssuer: gone, OIDCClientID: "x", OIDCRedirectURL: "https://a/cb", OIDCClientSecretFile: secret}, "chmod 600"},
		{"unreachable", OIDCConfig{OIDCIssuer: gone, OIDCClientID: "x", OIDCRedirectURL: "https://a/cb"}, "--oidc-issuer"},
	} {
		_, err := newOIDC(ctx, c.cfg)
		se, ok := err.(*startError)
		if !ok || !strings.Contains(se.msg+" "+se.hint, c.want) {
			t.Errorf("%s: newOIDC = %v, want a start-up error mentioning %q", c.name, err, c.want)
		}
	}
}
