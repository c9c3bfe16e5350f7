// Command baseline-hdl is the ceiling of a native Handle protocol server over
// TCP (docs/handle-protocol.md §3): it accepts a connection, reads one
// request, writes back the reply bytes pidnode sent for the same handle and
// closes, as pidnode's TCP front does, with no cache, no filters and no
// encoding. It is to pidnode's native TCP what bench/cmd/baseline-http is to
// its redirect.
//
//	baseline-hdl capture -addr PIDNODE_HDL -paths zipf.paths -out replies.jsonl
//	baseline-hdl serve -replies replies.jsonl -addr 127.0.0.1:0 -ready-file F
//
// capture resolves every distinct handle of the request stream against a
// running pidnode over TCP, with the request bench/cmd/hdlload sends
// (resolver/hdl.Client: OC_RESOLUTION, the Java client's flags, no filters),
// and stores each reply's envelope and message. serve answers a request for a
// captured handle with those bytes, its RequestId and SessionId set to the
// request's; an unknown handle or a request it cannot read closes the
// connection. It writes "native ADDR" to -ready-file once listening and stops
// on SIGTERM or SIGINT. Part of bench/, imported by nothing.
package main
