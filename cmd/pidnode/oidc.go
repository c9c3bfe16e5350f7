package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"pidnode/people"
)

// OIDCConfig are the settings of institutional sign-in (docs/product.md
// §4.6), embedded in Config (their TOML keys are top-level like the
// others). With an issuer, people sign in through the OpenID Connect
// provider instead of a password.
type OIDCConfig struct {
	OIDCIssuer           string `toml:"oidc_issuer"`
	OIDCClientID         string `toml:"oidc_client_id"`
	OIDCClientSecretFile string `toml:"oidc_client_secret_file"`
	OIDCRedirectURL      string `toml:"oidc_redirect_url"`
}

func (c *Config) oidcSettings() []setting {
	str := func(name, help string, p *string) setting {
		return setting{name: name, help: help, set: func(v string) error { *p = v; return nil }, get: func() string { return *p }}
	}
	oc := &c.OIDCConfig
	return []setting{
		str("oidc-issuer", "OpenID Connect issuer URL people sign in through instead of a password (empty = passwords)", &oc.OIDCIssuer),
		str("oidc-client-id", "this node's client id at the OpenID Connect provider", &oc.OIDCClientID),
		str("oidc-client-secret-file", "file holding this node's client secret at the OpenID Connect provider", &oc.OIDCClientSecretFile),
		str("oidc-redirect-url", "the console's callback as registered at the provider, https://ADMIN-HOST/console/oidc/callback", &oc.OIDCRedirectURL),
	}
}

// newOIDC builds the OpenID Connect relying party of the settings (nil
// without --oidc-issuer), fetching the provider's discovery document.
func newOIDC(ctx context.Context, oc OIDCConfig) (*people.OIDC, error) {
	if oc.OIDCIssuer == "" {
		return nil, nil
	}
	if oc.OIDCClientID == "" || oc.OIDCRedirectURL == "" {
		return nil, &startError{msg: "--oidc-issuer needs --oidc-client-id and --oidc-redirect-url",
			hint: "register this node at the provider with the redirect URI https://ADMIN-HOST/console/oidc/callback"}
	}
	var secret string
	if oc.OIDCClientSecretFile != "" {
		if err := checkSecretFile("OpenID Connect client secret file", oc.OIDCClientSecretFile, "--oidc-client-secret-file"); err != nil {
			return nil, err
		}
		b, err := os.ReadFile(oc.OIDCClientSecretFile)
		if err != nil {
			return nil, fileError("OpenID Connect client secret file", oc.OIDCClientSecretFile, "oidc-client-secret-file", err)
		}
		secret = strings.TrimSpace(string(b))
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	o, err := people.NewOIDC(ctx, people.OIDCConfig{Issuer: oc.OIDCIssuer, ClientID: oc.OIDCClientID,
		ClientSecret: secret, RedirectURL: oc.OIDCRedirectURL})
	if err != nil {
		return nil, &startError{msg: fmt.Sprintf("OpenID Connect provider %s: %v", oc.OIDCIssuer, err),
			hint: "check --oidc-issuer (it must be the issuer exactly as the provider names itself) and that the provider is reachable", err: err}
	}
	return o, nil
}
