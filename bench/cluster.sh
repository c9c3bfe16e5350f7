#!/usr/bin/env bash
# make cluster: a 3-member etcd and three pidnode nodes on loopback, with the
# demo loaded through node 1, until Ctrl-C. Data under DIR (default
# ./data-cluster); a second run reuses it.
set -euo pipefail
# The generated URLs are public names: this benchmark checks no links
# (docs/product.md §4.4).
export PIDNODE_LINKCHECK_INTERVAL=0
BIN=${BIN:-bin}
DIR=${DIR:-./data-cluster}
mkdir -p "$DIR"
# A ready file left by an earlier run must not announce this one.
rm -f "$DIR"/node[0-9].ready "$DIR"/node[0-9].ready.tmp
# Each process in a process group of its own: Ctrl-C reaches this script
# only, which stops the nodes first, while etcd still answers their
# goodbyes (resigning the jobs' lead, giving their names up), then etcd. A
# second Ctrl-C passes SIGINT on again: a node exits at once on its second.
set -m
etcds=()
nodes=()
# waitall waits until every process named has exited (a trapped signal
# ends a wait early).
waitall() {
  local p
  for p in "$@"; do
    while kill -0 "$p" 2>/dev/null; do wait "$p" 2>/dev/null || true; done
  done
}
cleanup() {
  trap 'kill -INT "${nodes[@]}" "${etcds[@]}" 2>/dev/null || true' INT TERM
  trap - EXIT
  if [ "${#nodes[@]}" -gt 0 ]; then
    kill -INT "${nodes[@]}" 2>/dev/null || true
    waitall "${nodes[@]}"
  fi
  if [ "${#etcds[@]}" -gt 0 ]; then
    kill -INT "${etcds[@]}" 2>/dev/null || true
    waitall "${etcds[@]}"
  fi
}
trap cleanup EXIT INT TERM

initial="e1=http://127.0.0.1:23801,e2=http://127.0.0.1:23802,e3=http://127.0.0.1:23803"
endpoints="http://127.0.0.1:23791,http://127.0.0.1:23792,http://127.0.0.1:23793"
for i in 1 2 3; do
  state=new
  [ -d "$DIR/etcd$i/member" ] && state=existing
  "$BIN/etcd" --name "e$i" --data-dir "$DIR/etcd$i" \
    --listen-client-urls "http://127.0.0.1:2379$i" --advertise-client-urls "http://127.0.0.1:2379$i" \
    --listen-peer-urls "http://127.0.0.1:2380$i" --initial-advertise-peer-urls "http://127.0.0.1:2380$i" \
    --initial-cluster "$initial" --initial-cluster-state "$state" --initial-cluster-token pidnode-make-cluster \
    --max-txn-ops 4096 --max-request-bytes 8388608 --auto-compaction-mode periodic --auto-compaction-retention 1h \
    --log-level error >"$DIR/etcd$i.log" 2>&1 &
  etcds+=($!)
done

for i in 1 2 3; do
  extra=()
  [ "$i" = 1 ] && extra=(--demo)
  "$BIN/pidnode" serve --data "$DIR/node$i" --node-name "node$i" --etcd-endpoints "$endpoints" \
    --resolver-addr "127.0.0.1:80${i}0" --admin-addr "127.0.0.1:80${i}1" \
    --dns-addr "127.0.0.1:80${i}2" --hdl-addr "127.0.0.1:80${i}3" \
    --operator-key-file "$DIR/operator.key" \
    --ready-file "$DIR/node$i.ready" "${extra[@]}" >"$DIR/node$i.out" 2>"$DIR/node$i.log" &
  nodes+=($!)
  # Node 1 loads the demo, and makes the one operator key every node reads
  # ($DIR/operator.key), before the others start.
  for _ in $(seq 300); do [ -s "$DIR/node$i.ready" ] && break; sleep 0.1; done
  [ -s "$DIR/node$i.ready" ] || { echo "node$i did not start:"; cat "$DIR/node$i.log"; exit 1; }
done

echo "etcd: $endpoints (logs $DIR/etcd*.log)"
# node1's whole banner (written in one piece after its ready file), then
# where the other nodes listen.
for _ in $(seq 100); do grep -q 'Ctrl-C stops it' "$DIR/node1.out" && break; sleep 0.1; done
echo
echo "node1 (log $DIR/node1.log):"
cat "$DIR/node1.out"
for i in 2 3; do
  echo
  echo "node$i (log $DIR/node$i.log):"
  sed 's/^/  /' "$DIR/node$i.ready"
done
echo
echo "One operator key for every node: $DIR/operator.key"
echo "Writes through any node's admin API resolve on every node. Ctrl-C stops everything (a second one at once)."
waitall "${nodes[@]}" "${etcds[@]}"
