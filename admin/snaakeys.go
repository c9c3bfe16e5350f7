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
// Issuing and revoking go through the operator routes' paths (issueKeyAs,
// revokeKeyAs), audited as the SNAA's key, so that every limit on keys
// holds for both.

// snaaKeyRoutes registers the routes on base b.
func (s *Server) snaaKeyRoutes(b *base) {
	p := b.path
	s.handle("GET", p+"/keys", s.snaa(b, s.ownKeys))
	s.handle("POST", p+"/keys", s.snaa(b, s.issueOwnKey))
	s.methodFallback(p+"/keys", "GET, POST")
	s.handle("DELETE", p+"/keys/{key_id}", s.snaa(b, s.revokeOwnKey))
	s.methodFallback(p+"/keys/{key_id}", "DELETE")
}

func (s *Server) ownKeys(w http.ResponseWriter, r *http.Request, b *base) error {
	r.SetPathValue("id", principalOf(r).snaa.ID)
	return s.listKeys(w, r)
}

func (s *Server) issueOwnKey(w http.ResponseWriter, r *http.Request, b *base) error {
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

// revokeOwnKey revokes one of the caller's keys: revokeKeyAs finds the key
// among its SNAA's only (404 otherwise). Revoking the key of the request
// itself is allowed; it fails from the next request on.
func (s *Server) revokeOwnKey(w http.ResponseWriter, r *http.Request, b *base) error {
	p := principalOf(r)
	if err := s.revokeKeyAs(p.actor(), p.snaa.ID, r.PathValue("key_id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
