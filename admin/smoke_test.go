package admin

import (
	"bytes"
	"strings"
	"testing"

	"pidnode/handlev"
)

// TestSmokeCreateReadUpdate: the create → read → update round trip an SNAA
// makes first, with what each reply must say, and the cache (the resolver's
// view) holding the update at once.
func TestSmokeCreateReadUpdate(t *testing.T) {
	e := newEnv(t)
	res := e.snaa(map[string]any{"namespace": "K7Q"})
	key := res.Key.Secret
	r := e.want(e.do("PUT", "/pid/v2/handles/21.12345/K7Q/", key, validPayload()), 201)
	var id Identifier
	r.json(t, &id)
	if id.ID == "" || id.Handle != "21.12345/svc/K7Q/"+id.ID || id.Prefix != "21.12345" || id.Namespace != "K7Q" {
		t.Errorf("created identifier %+v: want handle 21.12345/svc/K7Q/<id>", id)
	}
	if id.URL != "https://landing.example.org/item/42" || id.Version != 1 || id.Metadata["status"] != "REGISTERED" ||
		id.Metadata["curation_contact"] != "pids@example.org" || id.Created.IsZero() || !id.Updated.Equal(id.Created) {
		t.Errorf("created identifier %+v: want the payload's URL and metadata, version 1", id)
	}
	if want := "https://pid.example.org/21.12345/K7Q/" + id.ID; id.Links.Resolve != want || id.Links.NoRedirect != want+"?noredirect" ||
		id.Links.API != "https://pid.example.org/api/handles/"+id.Handle {
		t.Errorf("links %+v", id.Links)
	}
	loc := r.Header.Get("Location")
	if loc != "/pid/v2/handles/21.12345/K7Q/"+id.ID || r.Header.Get("Etag") != `"1"` ||
		!strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Errorf("create headers %v: want Location of the identifier and ETag \"1\"", r.Header)
	}
	created := r.Body

	r = e.want(e.do("GET", loc, key, nil), 200)
	if !bytes.Equal(bytes.TrimSpace(r.Body), bytes.TrimSpace(created)) || r.Header.Get("Etag") != `"1"` {
		t.Errorf("GET %s = %s (ETag %s), want the create's body %s", loc, r.Body, r.Header.Get("Etag"), created)
	}

	r = e.want(e.do("PUT", loc, key, map[string]any{"metadata": map[string]any{"status": "OBSOLETED"}}), 200)
	var up Identifier
	r.json(t, &up)
	if up.Handle != id.Handle || up.Version != 2 || up.Metadata["status"] != "OBSOLETED" || up.URL != id.URL ||
		up.Metadata["curation_contact"] != "pids@example.org" || !up.Created.Equal(id.Created) || r.Header.Get("Etag") != `"2"` {
		t.Errorf("updated identifier %+v (ETag %s): want version 2, status OBSOLETED, the rest kept", up, r.Header.Get("Etag"))
	}

	k, _, err := e.namer.Key(id.Handle)
	if err != nil {
		t.Fatal(err)
	}
	ent, err := e.cache.Get([]byte(k))
	if err != nil {
		t.Fatal(err)
	}
	if !ent.Found || ent.Record.Status() != handlev.StatusObsoleted || string(valueAt(ent.Record, 1)) != id.URL {
		t.Errorf("cache after update: found=%v %+v, want status OBSOLETED and URL %s", ent.Found, ent.Record, id.URL)
	}
}
