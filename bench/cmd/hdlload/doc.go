// Command hdlload measures native Handle protocol resolutions per second
// (docs/handle-protocol.md §3) against pidnode's hdl listener over UDP and TCP. It
// runs -clients closed-loop clients (resolver/hdl.Client: one request per UDP
// exchange or TCP connection, as the Java client does) over the handles of a
// request stream for -duration per protocol and prints one JSON object per
// protocol: queries/s, response-code counts, latency percentiles.
//
//	go run ./bench/cmd/hdlload -addr 127.0.0.1:2641 -paths bench/data/zipf.paths -clients 32
//
// Part of bench/, imported by nothing.
package main
