package admin

import (
	"testing"
)

func TestSmokeCreateReadUpdate(t *testing.T) {
	e := newEnv(t)
	res := e.snaa(map[string]any{"namespace": "K7Q"})
	key := res.Key.Secret
	r := e.want(e.do("PUT", "/pid/v2/handles/21.12345/K7Q/", key, validPayload()), 201)
	var id Identifier
	r.json(t, &id)
	t.Logf("%s\n%v", r.Body, r.Header)
	r = e.want(e.do("GET", r.Header.Get("Location"), key, nil), 200)
	t.Logf("%s", r.Body)
	r = e.want(e.do("PUT", "/pid/v2/handles/21.12345/K7Q/"+id.ID, key, map[string]any{"metadata": map[string]any{"status": "OBSOLETED"}}), 200)
	t.Logf("%s", r.Body)
	ent, err := e.cache.Get([]byte("21.12345/SVC/K7Q/" + id.ID))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", ent.Record) // Record: the same in every version of cache.Entry
}
