// Package webhook delivers a namespace's change feed to the endpoints its
// SNAA registered (docs/product.md §4.5): signed JSON POSTs, in sequence
// order per endpoint, at least once, retried with exponential backoff, an
// endpoint that has failed for a day disabled.
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
// It owns the delivery loop, the signature (Sign) and its metrics. It must
// not serve HTTP (the admin API registers endpoints) and connects out only
// through internal/outbound, so loopback, private, link-local and metadata
// addresses are refused after DNS resolution unless the operator allowed
// the network. It imports handlev, store, registry, internal/outbound and
// internal/promtext.
package webhook
