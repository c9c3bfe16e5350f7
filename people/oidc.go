package people

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"pidnode/internal/cfgerr"
)

// OIDCConfig configures NewOIDC: the provider the operator registered
// this node with (the console's callback URL as its redirect URI).
type OIDCConfig struct {
	// Issuer is the provider's issuer URL (its discovery document is
	// Issuer + "/.well-known/openid-configuration"). Required.
	Issuer string
	// ClientID and ClientSecret are this node's registration. ClientID
	// is required.
	ClientID, ClientSecret string
	// RedirectURL is the console's callback, e.g.
	// https://admin.example.org/console/oidc/callback. Required.
	RedirectURL string
	// HTTPClient makes the requests to the provider; if nil, one with a
	// 10-second timeout.
	HTTPClient *http.Client
	// Now is the clock the ID token's expiry is checked against; if nil,
	// time.Now.
	Now func() time.Time
}

// OIDC is the relying party of an OpenID Connect provider (OpenID Connect
// Core 1.0, authorisation code flow). Safe for concurrent use.
type OIDC struct {
	client   *http.Client
	verifier *oidc.IDTokenVerifier
	oauth    oauth2.Config
}

// NewOIDC fetches the provider's discovery document (its issuer must be
// cfg.Issuer exactly) and returns the relying party.
func NewOIDC(ctx context.Context, cfg OIDCConfig) (*OIDC, error) {
	for _, f := range []struct{ name, v string }{{"Issuer", cfg.Issuer}, {"ClientID", cfg.ClientID}, {"RedirectURL", cfg.RedirectURL}} {
		if f.v == "" {
			return nil, cfgerr.Required("people", f.name, ErrConfig)
		}
	}
	o := &OIDC{client: cfg.HTTPClient}
	if o.client == nil {
		o.client = &http.Client{Timeout: 10 * time.Second}
	}
	prov, err := oidc.NewProvider(oidc.ClientContext(ctx, o.client), cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("people: OpenID Connect discovery of %s: %w", cfg.Issuer, err)
	}
	o.verifier = prov.VerifierContext(oidc.ClientContext(context.Background(), o.client),
		&oidc.Config{ClientID: cfg.ClientID, Now: cfg.Now})
	o.oauth = oauth2.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, RedirectURL: cfg.RedirectURL,
		Endpoint: prov.Endpoint(), Scopes: []string{oidc.ScopeOpenID, "email"}}
	return o, nil
}

// AuthURL is the provider's authorisation URL for a sign-in with state and
// nonce, which the caller keeps (bound to the browser) to check the
// callback with.
func (o *OIDC) AuthURL(state, nonce string) string {
	return o.oauth.AuthCodeURL(state, oidc.Nonce(nonce))
}

// Exchange redeems the authorisation code of a callback at the provider's
// token endpoint and returns the subject of its verified ID token (Verify).
func (o *OIDC) Exchange(ctx context.Context, code, nonce string) (string, error) {
	ctx = oidc.ClientContext(ctx, o.client)
	tok, err := o.oauth.Exchange(ctx, code)
	if err != nil {
		return "", &Error{Kind: ErrOIDC, Detail: "the identity provider refused the sign-in: " + err.Error()}
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return "", refuse(ErrOIDC, "the identity provider sent no ID token")
	}
	return o.Verify(ctx, raw, nonce)
}

// Verify checks an ID token: its signature by a key of the provider's key
// set, its issuer, its audience (this node's client id), its expiry, and
// that its nonce is nonce (OpenID Connect Core 1.0 §3.1.3.7); it returns
// the subject. Any failure is ErrOIDC.
func (o *OIDC) Verify(ctx context.Context, raw, nonce string) (string, error) {
	idt, err := o.verifier.Verify(oidc.ClientContext(ctx, o.client), raw)
	if err != nil {
		return "", refuse(ErrOIDC, "the ID token is not valid: "+err.Error())
	}
	if nonce == "" || subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1 {
		return "", refuse(ErrOIDC, "the ID token's nonce is not this sign-in's")
	}
	if idt.Subject == "" {
		return "", refuse(ErrOIDC, "the ID token names no subject")
	}
	return idt.Subject, nil
}
