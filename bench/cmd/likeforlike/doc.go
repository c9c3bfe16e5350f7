// Command likeforlike makes the end-to-end suite's baselines answer with
// pidnode's own bytes, and checks that they do before a ratio is reported.
//
// render fetches pidnode's answer for every distinct path of a request stream
// (pidnode must be up) and writes what the baselines need to send the same
// response: an nginx include (a server block with the same status, headers and
// body: header lines that are the same for every identifier up to the handle
// and the base URL become add_header lines built from $uri, the others one map
// per line keyed like the location map; the body comes from a named location
// that error_page 302 jumps to, with the status kept) and a JSON Lines file for
// bench/cmd/baseline-http's like-for-like listener. The base URL pidnode built
// from the request's Host ("http://ADDR") is replaced by the nginx listener's
// own, and by a placeholder that baseline-http fills with its own address.
//
//	likeforlike render -pidnode 127.0.0.1:8000 -paths zipf.paths -nginx-listen 127.0.0.1:9000 \
//	    -nginx-out lfl-nginx.conf -baseline-out lfl-baseline.jsonl
//
// check fetches the same path from every server given as NAME=ADDR (the first
// is the reference, pidnode), over one raw HTTP/1.1 connection each, prints
// per server the status, the header names and the byte counts (status line and
// headers, body, total), and judges each compared server against the
// reference: the header sets (names and how often each occurs, without Date,
// Server, Connection and Content-Length) must be equal, every value but Date,
// Server, Connection, Content-Length and Expires (same length there) equal once
// each server's own base URL is set aside, and the total sizes within -tolerance
// (5 %). It appends a markdown table to -md and prints one line per compared
// server to stdout, "NAME<TAB>ok<TAB>detail" or "NAME<TAB>n/a: reason", which
// the suite (bench/internal/suite) turns into the row or into an n/a in its place. Servers given
// with -minimal are printed for reference and not judged.
//
//	likeforlike check -scenario redirect -paths zipf.paths -n 20 -md responses.md \
//	    -minimal 'nginx minimal=127.0.0.1:9001' pidnode=127.0.0.1:8000 nginx=127.0.0.1:9000
//
// Part of bench/, imported by nothing.
package main
