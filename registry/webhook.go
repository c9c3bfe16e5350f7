package registry

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"pidnode/store"
)

// Webhooks (docs/product.md §4.5): an SNAA's endpoints, each with the
// durable cursor of its deliveries and a log of its last attempts, in
// store.BucketWebhooks:
//
//	e/<namespace key prefix><id>   → Webhook (JSON)
//	d/<id>/<attempt, 16 hex digits> → WebhookDelivery (JSON)
//
// The namespace key prefix is the feed's (Registry.NamespaceKey, ending in
// '/'), so a namespace's endpoints are one key range that never holds
// another namespace's; ids are lower-case hex. The bucket is replicated: in
// cluster mode endpoints, cursors and logs are cluster data.

// Webhook states.
const (
	WebhookActive   = "active"
	WebhookDisabled = "disabled"
)

// Audit actions of webhook endpoints (operator-style: never in a feed).
const (
	ActWebhookCreate  = "webhook.create"
	ActWebhookDelete  = "webhook.delete"
	ActWebhookEnable  = "webhook.enable"
	ActWebhookDisable = "webhook.disable"
)

// WebhookKinds are the event kinds an endpoint may choose: the actions of
// the namespace feed's entries.
var WebhookKinds = []string{ActHandleCreate, ActHandleUpdate, ActLinkBroken, ActLinkRecovered}

// MaxWebhookLog is how many delivery attempts an endpoint's log keeps.
const MaxWebhookLog = 100

// Webhook is an endpoint and the state of its deliveries.
type Webhook struct {
	ID string `json:"id"`
	// Namespace is the namespace's key prefix (Registry.NamespaceKey);
	// Prefix and NS the path's prefix and namespace it was registered under.
	Namespace   string    `json:"namespace_key"`
	Prefix      string    `json:"prefix"`
	NS          string    `json:"ns"`
	SNAAID      string    `json:"snaa_id"`
	URL         string    `json:"url"`
	Kinds       []string  `json:"kinds"`
	Description string    `json:"description,omitempty"`
	Secret      string    `json:"secret"`
	Created     time.Time `json:"created"`
	State       string    `json:"state"`
	// Cursor is the seq of the last event acknowledged (or skipped by the
	// kinds): delivery resumes after it.
	Cursor uint64 `json:"cursor"`
	// Attempts counts delivery attempts; the n-th is logged under n.
	Attempts uint64 `json:"attempts"`
	// Failures counts the attempts failed since the last success;
	// FailingSince is the first of them, NextAttempt when to try again.
	Failures     int        `json:"failures,omitempty"`
	FailingSince *time.Time `json:"failing_since,omitempty"`
	NextAttempt  *time.Time `json:"next_attempt,omitempty"`
	LastAttempt  *time.Time `json:"last_attempt,omitempty"`
	LastSuccess  *time.Time `json:"last_success,omitempty"`
	LastError    string     `json:"last_error,omitempty"`
	DisabledAt   *time.Time `json:"disabled_at,omitempty"`
	// DisabledReason says why the node disabled the endpoint.
	DisabledReason string `json:"disabled_reason,omitempty"`
}

// WebhookDelivery is one delivery attempt in an endpoint's log.
type WebhookDelivery struct {
	Attempt  uint64    `json:"attempt"`
	Time     time.Time `json:"time"`
	FirstSeq uint64    `json:"first_seq"`
	LastSeq  uint64    `json:"last_seq"`
	Events   int       `json:"events"`
	// Status is the HTTP status of the reply, 0 if there was none; Error
	// then is the class of the failure (outbound.Classify) and Detail its
	// message. Response is the start of the reply's body.
	Status     int     `json:"status,omitempty"`
	Error      string  `json:"error,omitempty"`
	Detail     string  `json:"detail,omitempty"`
	OK         bool    `json:"ok"`
	DurationMS float64 `json:"duration_ms"`
	Response   string  `json:"response,omitempty"`
}

// WebhookTopic is the store.DB.Wait topic of changes to the endpoints
// (created, deleted, enabled, disabled).
const webhookTopic = "webhooks"

func webhookKey(nsp, id string) []byte { return []byte("e/" + nsp + id) }

func deliveryPrefix(id string) []byte { return []byte("d/" + id + "/") }

func deliveryKey(id string, attempt uint64) []byte {
	return append(deliveryPrefix(id), fmt.Sprintf("%016x", attempt)...)
}

// Webhook returns the endpoint id of the namespace nsp.
func (t Tx) Webhook(nsp, id string) (Webhook, bool, error) {
	var w Webhook
	if id == "" || strings.ContainsRune(id, '/') {
		return w, false, nil
	}
	ok, err := getJSON(t.bucket(store.BucketWebhooks), string(webhookKey(nsp, id)), &w)
	if err != nil {
		return w, false, fmt.Errorf("registry: webhook: %w", err)
	}
	return w, ok, nil
}

// Webhooks returns the endpoints of the namespace nsp (every namespace's if
// nsp is ""), in key order.
func (t Tx) Webhooks(nsp string) ([]Webhook, error) {
	pre := webhookKey(nsp, "")
	out := []Webhook{}
	c := t.bucket(store.BucketWebhooks).Cursor()
	for k, v := c.Seek(pre); k != nil && bytes.HasPrefix(k, pre); k, v = c.Next() {
		if nsp != "" && bytes.IndexByte(k[len(pre):], '/') >= 0 {
			continue // a deeper key prefix: not this namespace's
		}
		var w Webhook
		if err := json.Unmarshal(v, &w); err != nil {
			return nil, fmt.Errorf("registry: webhook %q: %w", k, err)
		}
		out = append(out, w)
	}
	return out, nil
}

// PutWebhook stores w (under w.Namespace and w.ID).
func (t Tx) PutWebhook(w *Webhook) error {
	if w.ID == "" || strings.ContainsRune(w.ID, '/') || w.Namespace == "" {
		return fmt.Errorf("registry: webhook without id or namespace")
	}
	raw, err := json.Marshal(w)
	if err != nil {
		return err
	}
	t.Signal(webhookTopic)
	return t.Put(store.BucketWebhooks, webhookKey(w.Namespace, w.ID), raw)
}

// DeleteWebhook removes the endpoint id of the namespace nsp and its
// delivery log.
func (t Tx) DeleteWebhook(nsp, id string) error {
	if err := t.Delete(store.BucketWebhooks, webhookKey(nsp, id)); err != nil {
		return err
	}
	t.Signal(webhookTopic)
	pre := deliveryPrefix(id)
	var doomed [][]byte
	c := t.bucket(store.BucketWebhooks).Cursor()
	for k, _ := c.Seek(pre); k != nil && bytes.HasPrefix(k, pre); k, _ = c.Next() {
		doomed = append(doomed, append([]byte(nil), k...))
	}
	for _, k := range doomed {
		if err := t.Delete(store.BucketWebhooks, k); err != nil {
			return err
		}
	}
	return nil
}

// LogWebhookDelivery adds d to the log of endpoint id under d.Attempt and
// drops the entry MaxWebhookLog attempts older, so the log keeps the last
// MaxWebhookLog attempts.
func (t Tx) LogWebhookDelivery(id string, d *WebhookDelivery) error {
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	if err := t.Put(store.BucketWebhooks, deliveryKey(id, d.Attempt), raw); err != nil {
		return err
	}
	if d.Attempt > MaxWebhookLog {
		return t.Delete(store.BucketWebhooks, deliveryKey(id, d.Attempt-MaxWebhookLog))
	}
	return nil
}

// WebhookDeliveries returns the logged attempts of endpoint id, newest
// first, at most limit of them.
func (t Tx) WebhookDeliveries(id string, limit int) ([]WebhookDelivery, error) {
	pre := deliveryPrefix(id)
	out := []WebhookDelivery{}
	c := t.bucket(store.BucketWebhooks).Cursor()
	// The entries are in attempt order: walk back from the end of the range.
	end := append(append([]byte(nil), pre[:len(pre)-1]...), '/'+1)
	k, _ := c.Seek(end)
	var v []byte
	if k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	for ; k != nil && bytes.HasPrefix(k, pre) && len(out) < limit; k, v = c.Prev() {
		var d WebhookDelivery
		if err := json.Unmarshal(v, &d); err != nil {
			return nil, fmt.Errorf("registry: webhook delivery %q: %w", k, err)
		}
		out = append(out, d)
	}
	return out, nil
}

// WaitWebhooks returns a channel closed after the next commit that changes
// an endpoint (PutWebhook, DeleteWebhook, or a cluster node applying
// another node's change to one).
func (r *Registry) WaitWebhooks() <-chan struct{} { return r.db.Wait(webhookTopic) }

// applyWebhook is ApplyPut for store.BucketWebhooks: an endpoint's change
// wakes WaitWebhooks.
func (t Tx) applyWebhook(key, value []byte) error {
	if bytes.HasPrefix(key, []byte("e/")) {
		t.Signal(webhookTopic)
	}
	if value == nil {
		return t.bucket(store.BucketWebhooks).Delete(key)
	}
	return t.Put(store.BucketWebhooks, key, value)
}

// NamespaceAuditLast returns the seq of the namespace nsp's last feed
// entry, 0 if it has none: where a new endpoint's deliveries start.
func (t Tx) NamespaceAuditLast(nsp string) (uint64, error) {
	pre := auditNSPrefix([]byte(nsp))
	c := t.bucket(store.BucketAudit).Cursor()
	// The range's end: the prefix with its last byte ('/') raised by one.
	end := append(append([]byte(nil), pre[:len(pre)-1]...), pre[len(pre)-1]+1)
	k, _ := c.Seek(end)
	if k == nil {
		k, _ = c.Last()
	} else {
		k, _ = c.Prev()
	}
	for ; k != nil && bytes.HasPrefix(k, pre); k, _ = c.Prev() {
		if len(k) == len(pre)+8 {
			return binary.BigEndian.Uint64(k[len(pre):]), nil
		}
	}
	return 0, nil
}
