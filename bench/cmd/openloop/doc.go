// Command openloop is an open-loop, constant-rate HTTP load generator. Request
// k is due at start + k/rate whatever happened to earlier requests, and its
// latency is measured from that intended send time, not from when a connection
// became free, so a stalled server shows up in the tail instead of slowing the
// generator down (no coordinated omission). Latencies go into an HdrHistogram
// (1 µs .. 60 s, 3 significant digits).
//
//	go run ./bench/cmd/openloop -addr 127.0.0.1:8000 -paths bench/data/zipf.paths -rate 20000 -duration 10s
//
// It cycles over the request stream (one URL path per line, -prefix and
// -suffix added), keeps -conns keep-alive connections, and prints one JSON
// object: target and achieved rate, status counts, percentiles in ms, and the
// generator's own CPU time and share of the run (cpu_share near 1 on a
// one-core generator means its own queueing is in the tail). Each connection
// is a goroutine writing pre-built GET requests and reading only each
// response's status and length: HTTP/1.1 with Content-Length bodies (or
// none), not chunked ones.
// Requests still unsent when the run's hard limit (duration + -grace) is
// reached are counted as missed. With -once it instead sends every path of the
// stream exactly once, as fast as -conns connections allow (a cache warm-up).
// Part of bench/, imported by nothing.
package main
