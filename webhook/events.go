package webhook

import (
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

// Defaults Routes uses for zero event stream fields of RoutesConfig.
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
	Person  string      `json:"person,omitempty"` // the e-mail address of the person who wrote
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
func eventOf(e *registry.AuditEntry) Event {
	_, kid, _ := strings.Cut(e.Actor, " key:")
	return Event{Seq: e.Seq, Time: e.Time.UTC(), Action: e.Action, Handle: e.Target, KeyID: kid, KeyName: e.KeyName,
		Person: e.Person, Before: eventState(e.Before), After: eventState(e.After)}
}

// FeedEvent is the change feed's event of an audit entry, the objects a
// delivery carries (cmd hands it to Config.Event).
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
// JSON Lines type it asked for (route.JSONLinesTypes, as the bulk route takes).
func eventFormat(accept string) (format int, ctype string) {
	offered := append([]string{"text/event-stream", "application/json"}, route.JSONLinesTypes...)
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
func eventParams(q url.Values, lastEventID []string) (after uint64, limit int, err error) {
	bad := func(field, msg string) error { return route.FieldErrorf(field, msg) }
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

// eventsRoute is the namespace route GET …/{ns}/events.
func (s *routes) eventsRoute() route.Route {
	alt := []route.Param{{Name: "text/event-stream", Desc: "Server-Sent Events: per event the fields id (seq), event (action) and data (the Event as JSON); lines starting with ':' are heartbeats"}}
	for _, mt := range route.JSONLinesTypes {
		alt = append(alt, route.Param{Name: mt, Desc: "JSON Lines: one Event per line, in sequence order; the last line's seq is the next after"})
	}
	return route.Route{Name: "events", H: func(w http.ResponseWriter, r *http.Request, t route.Target, _ string) error {
		return s.events(w, r, t)
	}, Ops: []route.Op{{Method: "GET", Path: "events", Doc: route.Doc{Summary: "The namespace's change feed: every identifier write (create, update, bulk item) from the audit log, in sequence order, with time, action, handle, key, and URL and status before and after. " +
		"As JSON (a page and next_after), as JSON Lines (Accept: application/jsonl or application/x-ndjson), or as a Server-Sent Events stream (Accept: text/event-stream: id is the sequence number, event the action, data the Event; " +
		"the stream stays open and sends each new write as it commits, with a comment line as heartbeat). Sequence numbers are the same on every node of a cluster, so a cursor is valid on any node. " +
		"A key may hold " + strconv.Itoa(s.streams.maxKey) + " streams at once (429 beyond), the node " + strconv.Itoa(s.streams.limit) + " (503 beyond)",
		Auth: "snaa", OK: 200, OKSchema: "EventPage", Alt: alt, Errs: []int{503},
		Query: []route.Param{{Name: "after", Desc: "sequence number to start after (default 0: from the first event); the last seq you received"},
			{Name: "limit", Desc: "1–" + strconv.Itoa(MaxEventLimit) + ", default " + strconv.Itoa(DefaultEventLimit) + "; in a stream, the size of each read"}},
		Headers: []route.Param{{Name: "Accept", Desc: "application/json (default), application/jsonl or application/x-ndjson (JSON Lines), or text/event-stream (Server-Sent Events)"},
			{Name: "Last-Event-ID", Desc: "a stream's resumption point: the id of the last event received (sent by a reconnecting EventSource); overrides after"}},
		Tag: "snaa"}}}}
}

// events serves GET …/handles/{prefix}/{ns}/events.
func (s *routes) events(w http.ResponseWriter, r *http.Request, t route.Target) error {
	after, limit, err := eventParams(r.URL.Query(), r.Header.Values("Last-Event-ID"))
	if err != nil {
		return err
	}
	nsp, err := s.reg.NamespaceKey(t.Prefix, t.Namespace)
	if err != nil {
		return err
	}
	format, ctype := eventFormat(r.Header.Get("Accept"))
	if format == feedSSE {
		return s.eventStream(w, r, t.Call, nsp, after, limit)
	}
	es, err := s.readEvents(nsp, after, limit)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	if format == feedLines {
		var b []byte
		for i := range es {
			line, err := route.Marshal(&es[i])
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
	route.WriteJSON(w, http.StatusOK, &page)
	return nil
}

// readEvents returns up to limit events of the namespace nsp after seq after.
func (s *routes) readEvents(nsp string, after uint64, limit int) ([]Event, error) {
	var entries []registry.AuditEntry
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
// all, against RoutesConfig.EventStreamsPerKey, EventStreamsPerSNAA and
// EventStreams. Safe for concurrent use.
type eventStreams struct {
	mu                     sync.Mutex
	perKey, perSNAA        map[string]int
	total                  int
	maxKey, maxSNAA, limit int
}

// acquire takes a stream slot for key of SNAA snaa, or returns the
// refusal, naming the limit that refused (key_streams, snaa_streams,
// node_streams): 429 when the key or its SNAA holds its share, 503 when
// the node holds its limit.
func (l *eventStreams) acquire(key, snaa string) (release func(), refusal *route.Error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	refuse := func(limit string, status int, format string, args ...any) (func(), *route.Error) {
		e := route.Errorf(status, format, args...)
		e.Header, e.Limit = map[string]string{"Retry-After": "10"}, limit
		return nil, e
	}
	if l.perKey[key] >= l.maxKey {
		return refuse("key_streams", http.StatusTooManyRequests,
			"this key already has %d open event streams, the most one key may hold; close one, or page with ?after= instead", l.maxKey)
	}
	if l.perSNAA[snaa] >= l.maxSNAA {
		return refuse("snaa_streams", http.StatusTooManyRequests,
			"the keys of SNAA %s already have %d open event streams together, the most one SNAA may hold; close one, or page with ?after= instead", snaa, l.maxSNAA)
	}
	if l.total >= l.limit {
		return refuse("node_streams", http.StatusServiceUnavailable,
			"this node serves %d event streams, its limit; retry later or page with ?after=", l.limit)
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
	}, nil
}

// eventStream serves the feed as Server-Sent Events (text/event-stream):
// each event as "id: <seq>", "event: <action>" and "data: <Event JSON>",
// first those after after, then each new one as its write commits. It
// sleeps on the namespace's commit signal (registry.WaitNamespaceAudit), so
// an idle stream costs no reads; a comment line every
// RoutesConfig.EventHeartbeat keeps proxies from closing it. It also wakes
// when keys or SNAAs change on this node (Call.KeyChanges: an operator
// write here, or one applied from another node), and looks its key up
// again then. The stream ends when the
// client goes, the key is revoked or its SNAA suspended, or the listener
// drains (the client reconnects elsewhere with Last-Event-ID).
func (s *routes) eventStream(w http.ResponseWriter, r *http.Request, c *route.Call, nsp string, after uint64, batch int) error {
	ctx := r.Context()
	drain := route.Draining(ctx)
	select {
	case <-drain:
		e := route.Errorf(http.StatusServiceUnavailable, "this node is shutting down; reconnect to another node")
		e.Header = map[string]string{"Retry-After": "1"}
		return e
	default:
	}
	release, refusal := s.streams.acquire(c.KeyID, c.SNAA)
	if refusal != nil {
		return refusal
	}
	defer release()
	// Taken before the key is looked up again: a revocation committed
	// after the request's own look-up either shows in this one or closes
	// authChanged.
	authChanged := c.KeyChanges()
	if err := c.KeyValid(); err != nil {
		return err
	}
	defer c.Stream()()

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
				authChanged = c.KeyChanges()
				if c.KeyValid() != nil {
					return nil
				}
			case <-beat.C:
				if c.KeyValid() != nil || !send([]byte(": keep-alive\n\n")) {
					return nil
				}
			}
		}
	}
}

// appendSSE appends one event as a Server-Sent Events message. The JSON has
// no newline inside (marshal's trailing one is the data line's end).
func appendSSE(dst []byte, e *Event) ([]byte, error) {
	js, err := route.Marshal(e)
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
