package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	"pidnode/registry"
	"pidnode/store"
)

// The endpoints' storage (docs/product.md §4.5): an SNAA's endpoints, each
// with the durable cursor of its deliveries and a log of its last attempts,
// in store.BucketWebhooks:
//
//	e/<namespace key prefix><id>   → Endpoint (JSON)
//	d/<id>/<attempt, 16 hex digits> → Delivery (JSON)
//
// The namespace key prefix is the feed's (Registry.NamespaceKey, ending in
// '/'), so a namespace's endpoints are one key range that never holds
// another namespace's; ids are lower-case hex. The bucket is replicated
// (registry.Replicated): in cluster mode endpoints, cursors and logs are
// cluster data, and a node applying another's change to an endpoint ("e/")
// signals registry.WebhookTopic as putEndpoint does.

// Endpoint states.
const (
	Active   = "active"
	Disabled = "disabled"
)

// MaxLog is how many delivery attempts an endpoint's log keeps.
const MaxLog = 100

// Endpoint is an endpoint and the state of its deliveries.
type Endpoint struct {
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

// Delivery is one delivery attempt in an endpoint's log.
type Delivery struct {
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

func webhookKey(nsp, id string) []byte { return []byte("e/" + nsp + id) }

func deliveryPrefix(id string) []byte { return []byte("d/" + id + "/") }

func deliveryKey(id string, attempt uint64) []byte {
	return append(deliveryPrefix(id), fmt.Sprintf("%016x", attempt)...)
}

// endpoint returns the endpoint id of the namespace nsp.
func endpoint(tx *store.Tx, nsp, id string) (Endpoint, bool, error) {
	var w Endpoint
	if id == "" || strings.ContainsRune(id, '/') {
		return w, false, nil
	}
	v := bucket(tx).Get(webhookKey(nsp, id))
	if v == nil {
		return w, false, nil
	}
	if err := json.Unmarshal(v, &w); err != nil {
		return w, false, fmt.Errorf("webhook: endpoint: %w", err)
	}
	return w, true, nil
}

// endpoints returns the endpoints of the namespace nsp (every namespace's if
// nsp is ""), in key order.
func endpoints(tx *store.Tx, nsp string) ([]Endpoint, error) {
	pre := webhookKey(nsp, "")
	out := []Endpoint{}
	c := bucket(tx).Cursor()
	for k, v := c.Seek(pre); k != nil && bytes.HasPrefix(k, pre); k, v = c.Next() {
		if nsp != "" && bytes.IndexByte(k[len(pre):], '/') >= 0 {
			continue // a deeper key prefix: not this namespace's
		}
		var w Endpoint
		if err := json.Unmarshal(v, &w); err != nil {
			return nil, fmt.Errorf("webhook: endpoint %q: %w", k, err)
		}
		out = append(out, w)
	}
	return out, nil
}

// putEndpoint stores w (under w.Namespace and w.ID).
func putEndpoint(tx *store.Tx, w *Endpoint) error {
	if w.ID == "" || strings.ContainsRune(w.ID, '/') || w.Namespace == "" {
		return fmt.Errorf("webhook: endpoint without id or namespace")
	}
	raw, err := json.Marshal(w)
	if err != nil {
		return err
	}
	tx.Signal(registry.WebhookTopic)
	return tx.Put(store.BucketWebhooks, webhookKey(w.Namespace, w.ID), raw)
}

// deleteEndpoint removes the endpoint id of the namespace nsp and its
// delivery log.
func deleteEndpoint(tx *store.Tx, nsp, id string) error {
	if err := tx.Delete(store.BucketWebhooks, webhookKey(nsp, id)); err != nil {
		return err
	}
	tx.Signal(registry.WebhookTopic)
	pre := deliveryPrefix(id)
	var doomed [][]byte
	c := bucket(tx).Cursor()
	for k, _ := c.Seek(pre); k != nil && bytes.HasPrefix(k, pre); k, _ = c.Next() {
		doomed = append(doomed, append([]byte(nil), k...))
	}
	for _, k := range doomed {
		if err := tx.Delete(store.BucketWebhooks, k); err != nil {
			return err
		}
	}
	return nil
}

// logDelivery adds d to the log of endpoint id under d.Attempt and
// drops the entry MaxLog attempts older, so the log keeps the last MaxLog
// attempts.
func logDelivery(tx *store.Tx, id string, d *Delivery) error {
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	if err := tx.Put(store.BucketWebhooks, deliveryKey(id, d.Attempt), raw); err != nil {
		return err
	}
	if d.Attempt > MaxLog {
		return tx.Delete(store.BucketWebhooks, deliveryKey(id, d.Attempt-MaxLog))
	}
	return nil
}

// deliveryLog returns the logged attempts of endpoint id, newest
// first, at most limit of them.
func deliveryLog(tx *store.Tx, id string, limit int) ([]Delivery, error) {
	pre := deliveryPrefix(id)
	out := []Delivery{}
	c := bucket(tx).Cursor()
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
		var d Delivery
		if err := json.Unmarshal(v, &d); err != nil {
			return nil, fmt.Errorf("webhook: delivery %q: %w", k, err)
		}
		out = append(out, d)
	}
	return out, nil
}

func bucket(tx *store.Tx) *bbolt.Bucket { return tx.Bolt().Bucket(store.BucketWebhooks) }
