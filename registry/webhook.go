package registry

import (
	"bytes"
	"encoding/binary"

	"pidnode/store"
)

// Webhooks (docs/product.md §4.5): package webhook owns the endpoints, their
// cursors and delivery logs in store.BucketWebhooks (its store.go has the
// key layout). The registry keeps what the audit log and cluster mode need
// of them: the audit actions, the kinds an endpoint may choose, and the
// change signal a cluster node raises when it applies another node's
// change to an endpoint (its key starts with "e/").

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

// WebhookTopic is the store.DB.Wait topic of changes to the endpoints
// (created, deleted, enabled, disabled), which package webhook signals and
// WaitWebhooks waits for.
const WebhookTopic = "webhooks"

// WaitWebhooks returns a channel closed after the next commit that changes
// an endpoint (PutWebhook, DeleteWebhook, or a cluster node applying
// another node's change to one).
func (r *Registry) WaitWebhooks() <-chan struct{} { return r.db.Wait(WebhookTopic) }

// applyWebhook is ApplyPut for store.BucketWebhooks: an endpoint's change
// wakes WaitWebhooks.
func (t Tx) applyWebhook(key, value []byte) error {
	if bytes.HasPrefix(key, []byte("e/")) {
		t.Signal(WebhookTopic)
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
