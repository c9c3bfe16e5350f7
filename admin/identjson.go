package admin

import (
	"net/http"
	"sync"
)

// replyBufs holds the buffers of writeIdentifier; one larger than
// maxPooledReply is dropped rather than kept.
var replyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

const maxPooledReply = 64 << 10

// writeIdentifier is writeJSON of an Identifier (Identifier.AppendJSON).
func writeIdentifier(w http.ResponseWriter, status int, ident *Identifier) {
	bp := replyBufs.Get().(*[]byte)
	b, ok := ident.AppendJSON((*bp)[:0])
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
