package write

import (
	"bytes"
	"encoding/json"

	"pidnode/internal/stdjson"
	"pidnode/model"
	"pidnode/registry"
)

// AuditContent is the before/after of an identifier write in the audit log
// (and in the change feed's events, which are read from it).
func AuditContent(c model.Content) map[string]any {
	m := map[string]any{"metadata": c.Metadata}
	if c.URL != nil {
		m["url"] = *c.URL
	}
	return m
}

// AuditContentJSON is json.Marshal(AuditContent(c)), without reflection
// where stdjson can encode c's metadata. meta is the metadata's JSON without
// HTML escaping (Result.MetaJSON), nil if not encoded: it is encoded once for
// both unless it holds <, > or &, the only characters HTML escaping changes.
func AuditContentJSON(c model.Content) (after, meta []byte, err error) {
	meta, ok := stdjson.AppendObject(make([]byte, 0, 1024), c.Metadata, false)
	if !ok {
		after, err = json.Marshal(AuditContent(c))
		return after, nil, err
	}
	after = make([]byte, 0, len(meta)+64)
	after = append(after, `{"metadata":`...)
	if bytes.ContainsAny(meta, "<>&") {
		after, _ = stdjson.AppendObject(after, c.Metadata, true)
	} else {
		after = append(after, meta...)
	}
	if c.URL != nil {
		after = append(after, `,"url":`...)
		after = stdjson.AppendString(after, *c.URL, true)
	}
	return append(after, '}'), meta, nil
}

// createAuditTail is the audit entry of a create of display by a.
func createAuditTail(a *Actor, display string, after []byte) ([]byte, error) {
	return registry.AuditTailAfter(&registry.AuditEntry{Actor: a.Name(), KeyName: a.Key.Name, Person: a.email(), Action: registry.ActHandleCreate, Target: display}, after)
}

// auditHandle audits an identifier write by a and indexes the entry under
// the record's storage key.
func auditHandle(tx registry.Tx, a *Actor, action, key, display string, before, after any) error {
	tail, err := registry.AuditTail(&registry.AuditEntry{Actor: a.Name(), KeyName: a.Key.Name, Person: a.email(), Action: action, Target: display, Before: before, After: after})
	if err != nil {
		return err
	}
	return tx.AppendHandleAudit(key, tail)
}
