#!/usr/bin/env bash
# make bench-etcd-size: bytes of etcd's file per record, for the README's
# cluster sizing. On a one-member etcd (fsync on, history compacted and the
# member defragmented before each size is read, bench/cmd/etcdsize):
#   1. admin-created records: one node, bench/cmd/admincreate with CLIENTS
#      clients for DUR seconds (each record with its audit entry and change
#      log), the node stopped before the sizes are read;
#   2. imported records: N records of bench/cmd/gen's dataset, `pidnode
#      import` into a single node's data directory, `pidnode cluster seed`
#      into an empty etcd (no audit entries, no change logs).
# Prints one line per case: records, DbSize, bytes per record, and the
# per-bucket key and value bytes (etcdsize -buckets).
#
#   BIN=bin DUR=10 N=20000 bench/etcd-size.sh
#
# Settings (environment): BIN (pidnode, etcd, etcdsize, admincreate, gen;
# make bench-etcd-size builds them), DUR (10), CLIENTS (16), N (20000).
# Loopback only, ports 25791 and 25801.
set -euo pipefail
# The generated URLs are public names: this benchmark checks no links
# (docs/product.md §4.4).
export PIDNODE_LINKCHECK_INTERVAL=0
BIN=${BIN:-bin}
DUR=${DUR:-10}
CLIENTS=${CLIENTS:-16}
N=${N:-20000}
WORK=$(mktemp -d /tmp/pidnode-bench-etcdsize-XXXXXX)
EP=http://127.0.0.1:25791
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

# etcd DIR: a one-member etcd on $EP; sets ETCD_PID.
etcd() {
  "$BIN/etcd" --name e1 --data-dir "$1" --listen-client-urls "$EP" --advertise-client-urls "$EP" \
    --listen-peer-urls http://127.0.0.1:25801 --initial-advertise-peer-urls http://127.0.0.1:25801 \
    --initial-cluster e1=http://127.0.0.1:25801 --max-txn-ops 4096 --max-request-bytes 8388608 \
    --log-level error >"$1.log" 2>&1 &
  ETCD_PID=$!
  pids+=("$ETCD_PID")
  for _ in $(seq 100); do "$BIN/etcdsize" -endpoints "$EP" -timeout 2s >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "etcd did not start"; exit 1
}
stop() { kill "$1"; wait "$1" 2>/dev/null || true; }
# report CASE RECORDS: compacts, defragments and prints the sizes.
report() {
  local s
  s=$("$BIN/etcdsize" -endpoints "$EP" -compact -defrag -buckets)
  python3 -c '
import json, sys
d = json.loads(sys.argv[3]); n = int(sys.argv[2]); size = d["members"][0]["db_size"]
b = ", ".join("%s %d keys %d key bytes %d value bytes" % (x["name"], x["keys"], x["key_bytes"], x["value_bytes"]) for x in d["buckets"])
print("%s: %d records, DbSize %d bytes, %d bytes per record (%s)" % (sys.argv[1], n, size, round(size / max(n, 1)), b))
' "$1" "$2" "$s"
}

etcd "$WORK/etcd-admin"
"$BIN/pidnode" serve --data "$WORK/node" --resolver-addr 127.0.0.1:0 --admin-addr 127.0.0.1:0 \
  --dns-addr 127.0.0.1:0 --hdl-addr 127.0.0.1:0 --ready-file "$WORK/node.ready" --admin-rate 0 \
  --etcd-endpoints "$EP" --node-name n1 >"$WORK/node.out" 2>"$WORK/node.log" &
node=$!
pids+=("$node")
for _ in $(seq 300); do [ -s "$WORK/node.ready" ] && break; sleep 0.1; done
adm=$(awk '$1 == "admin" {print $2}' "$WORK/node.ready")
created=$("$BIN/admincreate" -addr "$adm" -operator-key-file "$WORK/node/operator.key" -clients "$CLIENTS" \
  -duration "${DUR}s" | python3 -c 'import json,sys; print(sum(json.loads(l)["status"].get("201", 0) for l in sys.stdin if l.strip()))')
stop "$node"
report "admin-created" "$created"
stop "$ETCD_PID"

"$BIN/gen" -n "$N" -out "$WORK/data" -requests 10 >/dev/null 2>&1
"$BIN/pidnode" import --data "$WORK/single" "$WORK/data/records.jsonl" >/dev/null 2>&1
etcd "$WORK/etcd-seed"
"$BIN/pidnode" cluster seed --data "$WORK/single" --etcd-endpoints "$EP" --node-name seed >/dev/null
report "imported" "$N"
