package admin

import (
	"pidnode/registry"
	"pidnode/webhook"
)

// The webhook routes are package webhook's (webhook.Routes, handed in
// through Config.Routes); their replies' component schemas are documented
// here with the API's others.

// webhookSchemas adds the webhook routes' component schemas to m.
func webhookSchemas(m map[string]any) map[string]any {
	u64 := map[string]any{"type": "integer", "minimum": 0}
	kinds := arr(map[string]any{"type": "string", "enum": registry.WebhookKinds})
	m["WebhookRequest"] = obj([]string{"url"}, map[string]any{
		"url":         map[string]any{"type": "string", "maxLength": webhook.MaxURLBytes, "description": "absolute http or https URL without userinfo; connections go only to public addresses unless the operator allows a network (--outbound-allow)"},
		"kinds":       kinds,
		"description": map[string]any{"type": "string", "maxLength": webhook.MaxDescription},
		"after":       u64,
	})
	m["Webhook"] = obj([]string{"id", "url", "kinds", "created", "state", "cursor", "attempts", "failures"}, map[string]any{
		"id": str(), "url": str(), "kinds": kinds, "description": str(), "created": dt(),
		"state":  map[string]any{"type": "string", "enum": []string{webhook.Active, webhook.Disabled}},
		"cursor": u64, "attempts": u64, "failures": u64,
		"failing_since": dt(), "next_attempt": dt(), "last_attempt": dt(), "last_success": dt(), "last_error": str(),
		"disabled_at": dt(), "disabled_reason": str(),
		"secret": map[string]any{"type": "string", "pattern": "^whsec_[A-Za-z0-9_-]{43}$", "description": "only in the reply that registers the endpoint"},
	})
	m["WebhookList"] = obj([]string{"webhooks"}, map[string]any{"webhooks": arr(ref("Webhook"))})
	m["WebhookDeliveries"] = obj([]string{"deliveries"}, map[string]any{"deliveries": arr(obj(
		[]string{"attempt", "time", "first_seq", "last_seq", "events", "ok", "duration_ms"}, map[string]any{
			"attempt": u64, "time": dt(), "first_seq": u64, "last_seq": u64, "events": u64, "ok": map[string]any{"type": "boolean"},
			"status": u64, "error": str(), "detail": str(), "duration_ms": map[string]any{"type": "number"}, "response": str(),
		}))})
	return m
}
