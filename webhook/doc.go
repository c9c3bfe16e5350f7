// Package webhook is the change feed and webhook feature (docs/product.md
// §4.3, §4.5): the feed's route GET …/{ns}/events (events.go: a page as
// JSON or JSON Lines, or a Server-Sent Events stream that stays open, with
// its limits of open streams per key, per SNAA and per node), the routes
// through which an SNAA registers, lists, reads, deletes and enables the
// endpoints of its namespace and reads their delivery logs (routes.go),
// both rows of the API's namespace table (Routes), and the Engine that
// delivers the namespace's change feed to them: signed JSON POSTs, in
// sequence order per endpoint, at least once, retried with exponential
// backoff, an endpoint that has failed for a day disabled.
//
// The queue is the feed itself: each endpoint has a durable cursor (the seq
// of the last event a 2xx acknowledged) in the webhooks bucket (store.go).
// The Engine reads the namespace's audit index after the cursor, POSTs the
// events the endpoint chose, and moves the cursor only after a 2xx, in a
// write that compares the cursor it read: a delivery interrupted by a crash,
// a restart or a lost lead is sent again, and nothing is lost or reordered.
// So there is nothing else to queue, and a restart resumes where the
// database says.
//
// It owns the endpoints' routes, the delivery loop (a job of cmd/pidnode,
// on one node of a cluster), the signature (Sign) and its metrics. The
// routes' writes commit with their audit entries through the Writer (the
// registry, or a cluster node); the API checks the caller's key and
// namespace before a handler runs, lends it its body decoder and its
// maintenance refusal (route.Call) and writes its errors as problem+json.
// A stream also takes from the API a fresh look-up of its key (it ends on
// a revocation) and the listener's drain (route.Draining). It owns the
// endpoints' bucket (store.go); the feed's audit index is the registry's.
// It must not listen itself, and connects out only through
// internal/outbound, so loopback, private, link-local and metadata
// addresses are refused after DNS resolution unless the operator allowed
// the network.
package webhook
