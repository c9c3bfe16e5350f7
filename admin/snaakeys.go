package admin

import "net/http"

// An SNAA's own keys (docs/product.md §4): with one of its keys an SNAA
// lists its keys, issues another and revokes one, as the console's keys page
// does, so that it can rotate keys without the operator:
//
//	GET    {base}/keys            its keys (never a secret)
//	POST   {base}/keys            issue one: {"name"} → 201, the secret shown once
//	DELETE {base}/keys/{key_id}   revoke one of its keys: 204
//
// Issuing and revoking go through the operator routes' paths (package
// access's Keys.Issue and Keys.Revoke), audited as the SNAA's key, so that
// every limit on keys holds for both.

// snaaKeyRoutes registers the routes on base b.
func (s *snaaAPI) keyRoutes(rt *router, b *base) {
	p := b.path
	rt.handle("GET", p+"/keys", s.snaa(b, s.ownKeys),
		op{summary: "The calling SNAA's keys (never a secret); the same on either base", auth: "snaa", ok: 200, okSchema: "KeyList", tag: "snaa"})
	rt.handle("POST", p+"/keys", s.snaa(b, s.issueOwnKey),
		op{summary: "Issue the calling SNAA another key (rotation); the only time its secret is shown; the same on either base", auth: "snaa", request: "KeyRequest", ok: 201, okSchema: "IssuedKey", tag: "snaa"})
	rt.methodFallback(p+"/keys", "GET, POST")
	rt.handle("DELETE", p+"/keys/{key_id}", s.snaa(b, s.revokeOwnKey),
		op{summary: "Revoke one of the calling SNAA's keys (the calling key too); it fails from the next request on; the same on either base", auth: "snaa", ok: 204, tag: "snaa"})
	rt.methodFallback(p+"/keys/{key_id}", "DELETE")
}

func (s *snaaAPI) ownKeys(w http.ResponseWriter, r *http.Request, b *base) error {
	return s.writeKeys(w, principalOf(r).snaa.ID)
}

func (s *snaaAPI) issueOwnKey(w http.ResponseWriter, r *http.Request, b *base) error {
	req, err := readJSON[KeyRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	p := principalOf(r)
	ik, err := s.issueKeyAs(p.actor(), p.snaa.ID, req.Name)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, ik)
	return nil
}

// revokeOwnKey revokes one of the caller's keys: Keys.Revoke finds the key
// among its SNAA's only (404 otherwise). Revoking the key of the request
// itself is allowed; it fails from the next request on.
func (s *snaaAPI) revokeOwnKey(w http.ResponseWriter, r *http.Request, b *base) error {
	p := principalOf(r)
	if err := s.keys.Revoke(p.actor(), p.snaa.ID, r.PathValue("key_id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
