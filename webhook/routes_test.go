package webhook

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The routes themselves are tested through the API that registers them
// (admin's TestWebhookRoutes and the engine's tests), which checks the
// caller's key and namespace first.

// FuzzWebhookRequest: the registration decoder (the API's strict JSON
// decoding, here encoding/json's with unknown fields refused, then
// checkRequest) never panics, and what it accepts is a URL it would
// connect to and known kinds.
func FuzzWebhookRequest(f *testing.F) {
	for _, s := range []string{
		`{"url":"https://hooks.example.org/in","kinds":["handle.create","linkcheck.broken"],"description":"ci","after":12}`,
		`{"url":"http://[::1]:8080/x"}`, `{"url":"https://u@h/"}`, `{"kinds":null}`, `[]`, `{"url":"https://h/","after":1e30}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var req Request
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if dec.Decode(&req) != nil {
			return
		}
		req, err := checkRequest(req)
		if err != nil {
			return
		}
		if msg := checkURL(req.URL); msg != "" {
			t.Fatalf("accepted url %q: %s", req.URL, msg)
		}
		if len(req.Kinds) == 0 {
			t.Fatalf("accepted without kinds: %s", b)
		}
	})
}
