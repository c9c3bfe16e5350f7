package read

import (
	"encoding/base64"
	"strings"

	"pidnode/registry"
)

// LinkStates reads a listing's state filter: absent (given false), the
// states that need a curator's look (broken and recovering); "all", every
// state that is listed (nil); or one of broken, recovering and failing.
// ok is false for any other value.
func LinkStates(state string, given bool) (states []string, ok bool) {
	if !given {
		return []string{registry.LinkBroken, registry.LinkRecovering}, true
	}
	switch s := strings.ToLower(state); s {
	case registry.LinkBroken, registry.LinkRecovering, registry.LinkFailing:
		return []string{s}, true
	case "all":
		return nil, true
	}
	return nil, false
}

// Links returns a page of the link checker's results in namespace ns
// under prefix: at most limit targets in the states (nil: all), from the
// opaque cursor on (""; the start), and the cursor of the next page (""
// at the end). A cursor no page gave is ErrBadCursor.
func (r *Reader) Links(prefix, ns string, states []string, cursor string, limit int) (targets []registry.LinkResult, next string, err error) {
	from := ""
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil || len(b) == 0 {
			return nil, "", refuse(ErrBadCursor, "invalid cursor: use next_cursor of the previous page")
		}
		from = string(b)
	}
	nsp, err := r.reg.NamespaceKey(prefix, ns)
	if err != nil {
		return nil, "", err
	}
	err = r.reg.View(func(tx registry.Tx) error {
		var n string
		var err error
		targets, n, err = tx.NamespaceLinks(nsp, states, from, limit)
		if n != "" {
			next = base64.RawURLEncoding.EncodeToString([]byte(n))
		}
		return err
	})
	return targets, next, err
}
