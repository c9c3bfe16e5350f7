package admin

import (
	"net/http"
	"strconv"
	"sync"

	"pidnode/internal/stdjson"
)

// appendJSON appends ident's reply body as marshal writes it (encoding/json
// without HTML escaping, the members in Identifier's order, a newline after),
// without reflection: the create reply's encoding was a large part of a
// create's CPU. ok is false for an Identifier stdjson cannot encode as
// encoding/json would (metadata of other Go types, a time outside RFC 3339):
// the caller then uses marshal.
func (ident *Identifier) appendJSON(dst []byte) (_ []byte, ok bool) {
	dst = append(dst, `{"handle":`...)
	dst = stdjson.AppendString(dst, ident.Handle, false)
	dst = append(dst, `,"prefix":`...)
	dst = stdjson.AppendString(dst, ident.Prefix, false)
	dst = append(dst, `,"namespace":`...)
	dst = stdjson.AppendString(dst, ident.Namespace, false)
	dst = append(dst, `,"id":`...)
	dst = stdjson.AppendString(dst, ident.ID, false)
	dst = append(dst, `,"url":`...)
	dst = stdjson.AppendString(dst, ident.URL, false)
	dst = append(dst, `,"metadata":`...)
	if ident.metaJSON != nil {
		dst = append(dst, ident.metaJSON...)
	} else if dst, ok = stdjson.AppendObject(dst, ident.Metadata, false); !ok {
		return dst, false
	}
	dst = append(dst, `,"version":`...)
	dst = strconv.AppendUint(dst, ident.Version, 10)
	dst = append(dst, `,"created":`...)
	if dst, ok = stdjson.AppendTime(dst, ident.Created); !ok {
		return dst, false
	}
	dst = append(dst, `,"updated":`...)
	if dst, ok = stdjson.AppendTime(dst, ident.Updated); !ok {
		return dst, false
	}
	dst = append(dst, `,"links":{"resolve":`...)
	dst = stdjson.AppendString(dst, ident.Links.Resolve, false)
	dst = append(dst, `,"api":`...)
	dst = stdjson.AppendString(dst, ident.Links.API, false)
	dst = append(dst, `,"noredirect":`...)
	dst = stdjson.AppendString(dst, ident.Links.NoRedirect, false)
	return append(dst, "}}\n"...), true
}

// replyBufs holds the buffers of writeIdentifier; one larger than
// maxPooledReply is dropped rather than kept.
var replyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

const maxPooledReply = 64 << 10

// writeIdentifier is writeJSON of an Identifier (appendJSON).
func writeIdentifier(w http.ResponseWriter, status int, ident *Identifier) {
	bp := replyBufs.Get().(*[]byte)
	b, ok := ident.appendJSON((*bp)[:0])
	if !ok {
		replyBufs.Put(bp)
		writeJSON(w, status, ident)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b) // copies b: http.ResponseWriter does not retain it
	if cap(b) <= maxPooledReply {
		*bp = b
		replyBufs.Put(bp)
	}
}
