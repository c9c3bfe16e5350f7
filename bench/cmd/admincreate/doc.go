// Command admincreate measures durable identifier creates per second through
// pidnode's admin API (docs/product.md §4): it reads the operator key, submits and
// approves an SNAA application for the test prefix, then for each client count
// in -clients runs that many closed-loop clients, each creating identifiers with
// generated ids (PUT {base}/handles/{prefix}/{ns}/) for -duration, and prints one
// JSON object per client count: creates/s, status counts, latency percentiles.
// Every 201 is fsynced by the node before it answers (bbolt Batch), so the rate
// is a durable one.
//
//	go run ./bench/cmd/admincreate -addr 127.0.0.1:8001 -operator-key-file data/operator.key -clients 1,16,64
//
// Part of bench/, imported by nothing.
package main
