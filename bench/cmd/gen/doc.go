// Command gen writes a benchmark dataset for pidnode and its baselines.
//
//	go run ./bench/cmd/gen -n 1000000 -prefix 21.T12345 -ns BNC -out bench/data
//
// Into -out it streams:
//   - records.jsonl: one Handle JSON record per line for `pidnode import`, N
//     identifiers <prefix>/svc/<ns>/<id> with ids from handlev.Mint fed by a seeded
//     bijection (so ids never collide), values under the default metadata model:
//     1 URL, 10 EMAIL, 11 STATUS, 12 SCHEMA_VER, 13 METADATA_LICENSE, 14 RESOURCE
//     (compact JSON of a few hundred bytes), 16 CHANGES, 100 HS_ADMIN;
//   - uniform.paths and zipf.paths: request streams (one URL path per line) over
//     the same identifiers, uniform and Zipf (s ≈ 1.1) popularity;
//   - nginx-map.conf: the `map $uri $target` body for the nginx baseline;
//   - baseline-map.tsv: path TAB url, for bench/cmd/baseline-http;
//   - meta.json: what was generated, read by the suite (bench/internal/suite).
//
// The same -seed gives byte-identical files. gen is part of bench/ and is
// imported by nothing.
package main
