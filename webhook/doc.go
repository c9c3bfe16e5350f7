// Package webhook is the webhook feature (docs/product.md §4.5): the routes
// through which an SNAA registers, lists, reads, deletes and enables the
// endpoints of its namespace and reads their delivery logs (Routes, one
// tree row of the API's namespace table, routes.go), and the Engine that
// delivers the namespace's change feed to them: signed JSON POSTs, in
// sequence order per endpoint, at least once, retried with exponential
// backoff, an endpoint that has failed for a day disabled.
//
// The queue is the feed itself: each endpoint has a durable cursor (the seq
// of the last event a 2xx acknowledged) in the registry's webhooks bucket.
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
// The endpoints' storage and the feed's events are still the registry's and
// admin's. It must not listen itself, and connects out only through
// internal/outbound, so loopback, private, link-local and metadata
// addresses are refused after DNS resolution unless the operator allowed
// the network.
package webhook
