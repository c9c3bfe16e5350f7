// Command baseline-http is the ceiling of pidnode's own HTTP stack: a bare
// fasthttp server that answers GET /{handle} with 302 Found and the URL from a
// Go map loaded from bench/cmd/gen's baseline-map.tsv, 404 otherwise. No
// cache, no parsing, no headers beyond Location: whatever pidnode does on a
// cache hit costs at least this.
//
//	go run ./bench/cmd/baseline-http -map bench/data/baseline-map.tsv -addr 127.0.0.1:0 -ready-file /tmp/ready
//
// It writes "baseline ADDR" to -ready-file once listening and stops on SIGTERM
// or SIGINT. Part of bench/, imported by nothing.
package main
