// Command baseline-http is the ceiling of pidnode's own HTTP stack: a bare
// fasthttp server over a Go map loaded from bench/cmd/gen's baseline-map.tsv,
// no cache, no parsing. It has two listeners on the same map:
//
//   - -addr, minimal: GET /{handle} answers 302 Found with Location alone, 404
//     otherwise;
//
//   - -lfl-addr, like-for-like (with -lfl, the file bench/cmd/likeforlike render
//     writes from pidnode's own answers): the same status, headers and body as
//     pidnode — Location, Expires (now + pidnode's TTL, formatted once a
//     second), every Link line with its own base URL, Content-Type, Vary,
//     X-Content-Type-Options, the HTML body — set with the fasthttp calls a
//     handler would make. Whatever pidnode does on a cache hit costs at least
//     this.
//
//     go run ./bench/cmd/baseline-http -map bench/data/baseline-map.tsv -lfl lfl-baseline.jsonl -ready-file /tmp/ready
//
// It writes "baseline ADDR" (and "lfl ADDR") to -ready-file once listening and
// stops on SIGTERM or SIGINT. Part of bench/, imported by nothing.
package main
