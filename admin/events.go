package admin

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"pidnode/internal/route"
	"pidnode/registry"
)

// The change feed of a namespace (docs/product.md §4.3): GET
// …/handles/{prefix}/{ns}/events lists the audit entries of the namespace's
// identifier writes in sequence order, from the per-namespace audit index, as
// JSON, JSON Lines or a Server-Sent Events stream that stays open. The
// sequence number is the cursor: ?after=SEQ, or Last-Event-ID on a stream's
// reconnection. A cluster numbers an entry alike on every node, so a cursor
// is valid on every node.

// Defaults New uses for zero event stream fields of Config.
//
// DefaultEventStreamsPerSNAA is two keys' worth, so that a key being
// rotated in can open its streams before the old key's close, and no more,
// so that an SNAA's extra keys buy no share of the node's streams.
const (
	DefaultEventStreamsPerKey  = 4
	DefaultEventStreamsPerSNAA = 2 * DefaultEventStreamsPerKey
	DefaultEventStreams        = 256
	DefaultEventHeartbeat      = 15 * time.Second
)

// eventWriteWait bounds one write to a stream's client: a client that reads
// nothing for this long loses its stream. It replaces the listener's
// WriteTimeout, which would end every stream after its first minute.
const eventWriteWait = 30 * time.Second

// Event is one change in a namespace's feed.
type Event struct {
	Seq     uint64      `json:"seq"`
	Time    time.Time   `json:"time"`
	Action  string      `json:"action"`
	Handle  string      `json:"handle"`
	KeyID   string      `json:"key_id,omitempty"`
	KeyName string      `json:"key_name,omitempty"`
	Before  *EventState `json:"before,omitempty"`
	After   *EventState `json:"after,omitempty"`
}

// EventState is what an event shows of an identifier before or after the
// write: its landing page URL and its metadata status; for the link
// checker's events (linkcheck.broken, linkcheck.recovered) the URL checked
// and its check.
type EventState struct {
	URL       string          `json:"url,omitempty"`
	Status    string          `json:"status,omitempty"`
	Linkcheck *EventLinkcheck `json:"linkcheck,omitempty"`
}

// EventLinkcheck is a link check's result in an event (docs/product.md §4.4):
// the check as its audit entry holds it.
type EventLinkcheck = registry.LinkCheck

// EventPage is the JSON reply of the feed: the events and the cursor of the
// next page (the last event's seq, or the request's after when there is
// none), so that a client can always ask again with ?after=next_after.
type EventPage struct {
	Events    []Event `json:"events"`
	NextAfter uint64  `json:"next_after"`
}

// eventOf builds the feed's view of an identifier write's audit entry, whose
// before and after are write.AuditContent's (url, metadata).
func eventOf(e *AuditEntry) Event {
	_, kid, _ := strings.Cut(e.Actor, " key:")
	return Event{Seq: e.Seq, Time: e.Time.UTC(), Action: e.Action, Handle: e.Target, KeyID: kid, KeyName: e.KeyName,
		Before: eventState(e.Before), After: eventState(e.After)}
}

// FeedEvent is the change feed's event of an audit entry, the objects a
// webhook delivery carries (cmd hands it to webhook.Config.Event).
func FeedEvent(e *registry.AuditEntry) any {
	ev := eventOf(e)
	return &ev
}

func eventState(v any) *EventState {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	var st EventState
	st.URL, _ = m["url"].(string)
	if md, ok := m["metadata"].(map[string]any); ok {
		st.Status, _ = md["status"].(string)
	}
	if lc, ok := m["linkcheck"]; ok {
		// Re-encoded from the decoded entry: a link check's state is small.
		if b, err := json.Marshal(lc); err == nil {
			var x EventLinkcheck
			if json.Unmarshal(b, &x) == nil {
				st.Linkcheck = &x
			}
		}
	}
	return &st
}

// Feed formats (eventFormat).
const (
	feedJSON = iota
	feedLines
	feedSSE
)

// eventFormat picks the feed's format from Accept: the first media range
// (in the client's order, q=0 ranges skipped) that names one, JSON if none
// does. ctype is the Content-Type of the reply: a JSON Lines client gets the
// JSON Lines type it asked for (jsonLinesTypes, as the bulk route takes).
func eventFormat(accept string) (format int, ctype string) {
	offered := append([]string{"text/event-stream", "application/json"}, jsonLinesTypes...)
	switch mt := route.FirstAccepted(accept, offered); mt {
	case "text/event-stream":
		return feedSSE, mt
	case "", "application/json":
		return feedJSON, "application/json"
	default:
		return feedLines, mt
	}
}

// DefaultEventLimit and MaxEventLimit bound ?limit= of the feed.
const (
	DefaultEventLimit = 100
	MaxEventLimit     = 1000
)

// eventParams reads the feed's cursor and page size: ?after= (a sequence
// number, default 0: from the start), overridden by a Last-Event-ID header
// (a reconnecting EventSource sends its original URL and the last id it
// saw), and ?limit= (1–MaxEventLimit, default DefaultEventLimit; in a stream
// the size of each read). A bad value is a 400 naming the parameter.
func eventParams(q url.Values, lastEventID []string) (after uint64, limit int, p *Problem) {
	bad := func(field, msg string) *Problem {
		pr := problem(http.StatusBadRequest, "%s %s", field, msg)
		pr.Errors = []FieldError{{Field: field, Message: msg}}
		return pr
	}
	if v, ok := q["after"]; ok {
		if len(v) != 1 {
			return 0, 0, bad("after", "must be given once")
		}
		n, ok := parseSeq(v[0])
		if !ok {
			return 0, 0, bad("after", "must be a sequence number: a decimal integer from 0 to 18446744073709551615")
		}
		after = n
	}
	if len(lastEventID) > 0 {
		if len(lastEventID) != 1 {
			return 0, 0, bad("Last-Event-ID", "must be given once")
		}
		n, ok := parseSeq(strings.TrimSpace(lastEventID[0]))
		if !ok {
			return 0, 0, bad("Last-Event-ID", "must be the id of an event of this feed: a decimal integer")
		}
		after = n
	}
	limit = DefaultEventLimit
	if v, ok := q["limit"]; ok {
		if len(v) != 1 {
			return 0, 0, bad("limit", "must be given once")
		}
		n, ok := parseSeq(v[0])
		if !ok || n < 1 || n > MaxEventLimit {
			return 0, 0, bad("limit", "must be an integer from 1 to "+strconv.Itoa(MaxEventLimit))
		}
		limit = int(n)
	}
	return after, limit, nil
}

// parseSeq parses a sequence number: ASCII digits only (no sign, no
// spaces), at most 20 of them, within uint64.
func parseSeq(s string) (uint64, bool) {
	if s == "" || len(s) > 20 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// eventsRoute is the namespace route GET …/{ns}/events.
func eventsRoute(s *Server) nsRoute {
	return nsRoute{name: "events", h: func(w http.ResponseWriter, r *http.Request, p *principal, t target, _ string) error {
		return s.events(w, r, p, t)
	}, ops: []nsOp{{"GET", "events", op{summary: "The namespace's change feed: every identifier write (create, update, bulk item) from the audit log, in sequence order, with time, action, handle, key, and URL and status before and after. " +
		"As JSON (a page and next_after), as JSON Lines (Accept: application/jsonl or application/x-ndjson), or as a Server-Sent Events stream (Accept: text/event-stream: id is the sequence number, event the action, data the Event; " +
		"the stream stays open and sends each new write as it commits, with a comment line as heartbeat). Sequence numbers are the same on every node of a cluster, so a cursor is valid on any node. " +
		"A key may hold " + strconv.Itoa(s.streams.maxKey) + " streams at once (429 beyond), the node " + strconv.Itoa(s.streams.limit) + " (503 beyond)",
		auth: "snaa", ok: 200, okSchema: "EventPage", feed: true, errs: []int{503},
		query: []param{{"after", "sequence number to start after (default 0: from the first event); the last seq you received"},
			{"limit", "1–" + strconv.Itoa(MaxEventLimit) + ", default " + strconv.Itoa(DefaultEventLimit) + "; in a stream, the size of each read"}},
		headers: []param{{"Accept", "application/json (default), application/jsonl or application/x-ndjson (JSON Lines), or text/event-stream (Server-Sent Events)"},
			{"Last-Event-ID", "a stream's resumption point: the id of the last event received (sent by a reconnecting EventSource); overrides after"}},
		tag: "snaa"}}}}
}

// events serves GET …/handles/{prefix}/{ns}/events.
func (s *Server) events(w http.ResponseWriter, r *http.Request, p *principal, t target) error {
	after, limit, perr := eventParams(r.URL.Query(), r.Header.Values("Last-Event-ID"))
	if perr != nil {
		return perr
	}
	nsp, err := s.reg.NamespaceKey(t.prefix, t.ns)
	if err != nil {
		return err
	}
	format, ctype := eventFormat(r.Header.Get("Accept"))
	if format == feedSSE {
		return s.eventStream(w, r, p, nsp, after, limit)
	}
	es, err := s.readEvents(nsp, after, limit)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	if format == feedLines {
		var b []byte
		for i := range es {
			line, err := marshal(&es[i])
			if err != nil {
				return err
			}
			b = append(b, line...)
		}
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(http.StatusOK)
		_, err := w.Write(b)
		return err
	}
	page := EventPage{Events: es, NextAfter: after}
	if len(es) > 0 {
		page.NextAfter = es[len(es)-1].Seq
	}
	writeJSON(w, http.StatusOK, &page)
	return nil
}

// readEvents returns up to limit events of the namespace nsp after seq after.
func (s *Server) readEvents(nsp string, after uint64, limit int) ([]Event, error) {
	var entries []AuditEntry
	err := s.reg.View(func(tx registry.Tx) (err error) {
		entries, err = tx.NamespaceAudit(nsp, after, limit)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]Event, len(entries))
	for i := range entries {
		out[i] = eventOf(&entries[i])
	}
	return out, nil
}

// eventStreams counts the open event streams, per key, per SNAA and in
// all, against Config.EventStreamsPerKey, Config.EventStreamsPerSNAA and
// Config.EventStreams. Safe for concurrent use.
type eventStreams struct {
	mu                     sync.Mutex
	perKey, perSNAA        map[string]int
	total                  int
	maxKey, maxSNAA, limit int
}

// acquire takes a stream slot for key of SNAA snaa, or returns the problem
// to answer and the limit that refused (refusedKeyStreams…): 429 when the
// key or its SNAA holds its share, 503 when the node holds its limit.
func (l *eventStreams) acquire(key, snaa string) (release func(), reason int, p *Problem) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perKey[key] >= l.maxKey {
		return nil, refusedKeyStreams, problem(http.StatusTooManyRequests,
			"this key already has %d open event streams, the most one key may hold; close one, or page with ?after= instead", l.maxKey).
			with("Retry-After", "10")
	}
	if l.perSNAA[snaa] >= l.maxSNAA {
		return nil, refusedSNAAStreams, problem(http.StatusTooManyRequests,
			"the keys of SNAA %s already have %d open event streams together, the most one SNAA may hold; close one, or page with ?after= instead", snaa, l.maxSNAA).
			with("Retry-After", "10")
	}
	if l.total >= l.limit {
		return nil, refusedNodeStreams, problem(http.StatusServiceUnavailable,
			"this node serves %d event streams, its limit; retry later or page with ?after=", l.limit).
			with("Retry-After", "10")
	}
	if l.perKey == nil {
		l.perKey, l.perSNAA = map[string]int{}, map[string]int{}
	}
	l.perKey[key]++
	l.perSNAA[snaa]++
	l.total++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.total--
		if l.perKey[key]--; l.perKey[key] <= 0 {
			delete(l.perKey, key)
		}
		if l.perSNAA[snaa]--; l.perSNAA[snaa] <= 0 {
			delete(l.perSNAA, snaa)
		}
	}, 0, nil
}

// eventStream serves the feed as Server-Sent Events (text/event-stream):
// each event as "id: <seq>", "event: <action>" and "data: <Event JSON>",
// first those after after, then each new one as its write commits. It
// sleeps on the namespace's commit signal (registry.WaitNamespaceAudit), so
// an idle stream costs no reads; a comment line every Config.EventHeartbeat
// keeps proxies from closing it. It also wakes when keys or SNAAs change on
// this node (authCache.changes: an operator write here, or one applied from
// another node), and looks its key up again then. The stream ends when the
// client goes, the key is revoked or its SNAA suspended, or the listener
// drains (the client reconnects elsewhere with Last-Event-ID).
func (s *Server) eventStream(w http.ResponseWriter, r *http.Request, p *principal, nsp string, after uint64, batch int) error {
	ctx := r.Context()
	drain := drainingOf(ctx)
	select {
	case <-drain:
		return problem(http.StatusServiceUnavailable, "this node is shutting down; reconnect to another node").with("Retry-After", "1")
	default:
	}
	release, reason, perr := s.streams.acquire(p.key.ID, p.snaa.ID)
	if perr != nil {
		s.metrics.refused(reason)
		return perr
	}
	defer release()
	// Taken before the key is looked up again: a revocation committed
	// after the request's own look-up either shows in this one or closes
	// authChanged.
	authChanged := s.keys.Changes()
	if !s.streamKeyValid(p) {
		return invalidToken("this API key was revoked, or its SNAA suspended, as the stream opened")
	}
	s.metrics.eventStreams.Add(1)
	defer s.metrics.eventStreams.Add(-1)

	// The listener's WriteTimeout, set when the request was read, would cut
	// the stream after its first minute: each write sets its own deadline
	// (eventWriteWait) instead. Its ReadTimeout does not reach a stream:
	// net/http clears the read deadline once the request is read, to watch
	// the connection for the client's going.
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: pass each event on at once
	w.WriteHeader(http.StatusOK)
	send := func(b []byte) bool {
		if err := rc.SetWriteDeadline(time.Now().Add(eventWriteWait)); err != nil && err != http.ErrNotSupported {
			return false
		}
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	// retry: how long a client waits before it reconnects (milliseconds).
	if !send([]byte("retry: 2000\n\n")) {
		return nil
	}
	beat := time.NewTicker(s.evBeat)
	defer beat.Stop()
	var buf []byte
	for {
		wake := s.reg.WaitNamespaceAudit(nsp) // before the read: see its doc
		es, err := s.readEvents(nsp, after, batch)
		if err != nil {
			s.log.Error("event stream read failed", "err", err)
			return nil
		}
		buf = buf[:0]
		for i := range es {
			if buf, err = appendSSE(buf, &es[i]); err != nil {
				s.log.Error("event stream encoding failed", "err", err)
				return nil
			}
			after = es[i].Seq
		}
		if len(buf) > 0 && !send(buf) {
			return nil
		}
		if len(es) == batch {
			continue // more are waiting
		}
	wait:
		for {
			select {
			case <-wake:
				break wait
			case <-ctx.Done():
				return nil
			case <-drain:
				return nil
			case <-authChanged:
				authChanged = s.keys.Changes()
				if !s.streamKeyValid(p) {
					return nil
				}
			case <-beat.C:
				if !s.streamKeyValid(p) || !send([]byte(": keep-alive\n\n")) {
					return nil
				}
			}
		}
	}
}

// streamKeyValid reports whether the key a stream was opened with (by
// bearer key or console session) is still valid and its SNAA not
// suspended. A look-up after a change of keys or SNAAs reads the store
// once per key; the others hit the auth cache.
func (s *Server) streamKeyValid(p *principal) bool {
	var sum [32]byte
	if n, err := hex.Decode(sum[:], []byte(p.key.Hash)); err != nil || n != len(sum) {
		return false
	}
	_, sn, err := s.keys.LookupSum(sum)
	return err == nil && !sn.Suspended
}

// appendSSE appends one event as a Server-Sent Events message. The JSON has
// no newline inside (marshal's trailing one is the data line's end).
func appendSSE(dst []byte, e *Event) ([]byte, error) {
	js, err := marshal(e)
	if err != nil {
		return dst, err
	}
	dst = append(dst, "id: "...)
	dst = strconv.AppendUint(dst, e.Seq, 10)
	dst = append(dst, "\nevent: "...)
	dst = append(dst, e.Action...)
	dst = append(dst, "\ndata: "...)
	dst = append(dst, js...)
	return append(dst, '\n'), nil
}

// drainKey is the context key under which the Listener hands its handlers
// the channel closed when it drains or shuts down.
type drainKey struct{}

// drainingOf returns the channel that is closed when the listener serving
// ctx's request drains, or nil (never closed) outside a Listener.
func drainingOf(ctx context.Context) <-chan struct{} {
	c, _ := ctx.Value(drainKey{}).(<-chan struct{})
	return c
}
