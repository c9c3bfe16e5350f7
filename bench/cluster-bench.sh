#!/usr/bin/env bash
# make bench-cluster: admin creates per second through a single node and
# through a cluster (3-member etcd with fsync, every member on this host) via
# one and via two nodes, 1/16/64 clients, DUR seconds each; the report goes
# to bench/results/cluster-DATE.md. Everything on loopback; the admin rate
# limit is off (--admin-rate 0) so the write path is what is measured.
set -euo pipefail
# The generated URLs are public names: this benchmark checks no links
# (docs/product.md §4.4).
export PIDNODE_LINKCHECK_INTERVAL=0
BIN=${BIN:-bin}
DUR=${DUR:-10}
WORK=$(mktemp -d /tmp/pidnode-bench-cluster-XXXXXX)
OUT=bench/results/cluster-$(date -u +%Y-%m-%d).md
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

waitready() { for _ in $(seq 300); do [ -s "$1" ] && return 0; sleep 0.1; done; echo "not ready: $1"; exit 1; }
addr() { awk -v n="$2" '$1 == n {print $2}' "$1"; }
# node NAME [flags…]: start a pidnode on WORK/NAME; echoes nothing, sets ADM_<NAME>.
node() {
  local name=$1; shift
  "$BIN/pidnode" serve --data "$WORK/$name" --resolver-addr 127.0.0.1:0 --admin-addr 127.0.0.1:0 \
    --dns-addr 127.0.0.1:0 --hdl-addr 127.0.0.1:0 --ready-file "$WORK/$name.ready" --admin-rate 0 "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.log" &
  pids+=($!)
  waitready "$WORK/$name.ready"
}
load() { # load NAME CLIENTS → JSON lines
  "$BIN/admincreate" -addr "$(addr "$WORK/$1.ready" admin)" -operator-key-file "$WORK/$1/operator.key" \
    -clients "$2" -duration "${DUR}s"
}
rate() { python3 -c 'import json,sys; print(round(sum(json.loads(l)["creates_per_s"] for l in sys.stdin if l.strip())))'; }

echo "== single node"
node single
single=()
for c in 1 16 64; do single+=("$(load single $c | rate)"); done
kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true

echo "== cluster: 3-member etcd, two nodes"
initial="e1=http://127.0.0.1:24801,e2=http://127.0.0.1:24802,e3=http://127.0.0.1:24803"
for i in 1 2 3; do
  "$BIN/etcd" --name "e$i" --data-dir "$WORK/etcd$i" \
    --listen-client-urls "http://127.0.0.1:2479$i" --advertise-client-urls "http://127.0.0.1:2479$i" \
    --listen-peer-urls "http://127.0.0.1:2480$i" --initial-advertise-peer-urls "http://127.0.0.1:2480$i" \
    --initial-cluster "$initial" --initial-cluster-token bench --max-txn-ops 4096 --max-request-bytes 8388608 \
    --log-level error >"$WORK/etcd$i.log" 2>&1 &
  pids+=($!)
done
eps="http://127.0.0.1:24791,http://127.0.0.1:24792,http://127.0.0.1:24793"
node n1 --etcd-endpoints "$eps" --node-name n1
node n2 --etcd-endpoints "$eps" --node-name n2
# CPU ticks of every process of the cluster (etcd members e1-e3, nodes n1, n2).
ticks() { for p in "${pids[@]: -5}"; do awk '{printf "%d ", $14+$15}' "/proc/$p/stat"; done; }
one=() two=()
for c in 1 16 64; do
  if [ "$c" = 64 ]; then t0=($(ticks)); fi
  one+=("$(load n1 $c | rate)")
  if [ "$c" = 64 ]; then t1=($(ticks)); fi
  if [ "$c" = 1 ]; then two+=("$(load n1 1 | rate)"); continue; fi
  half=$((c / 2))
  load n1 $half >"$WORK/two-a.json" & a=$!
  load n2 $half >"$WORK/two-b.json" & b=$!
  wait $a $b
  two+=("$(cat "$WORK/two-a.json" "$WORK/two-b.json" | rate)")
done
echo "== replication lag n1 → n2 at 1,000 creates/s"
lagjson=$("$BIN/clusterlag" -write "$(addr "$WORK/n1.ready" admin)" -read "$(addr "$WORK/n2.ready" resolver)" \
  -operator-key-file "$WORK/n1/operator.key" -rate 1000 -duration "${DUR}s")
metric() { curl -s "http://$(addr "$WORK/$1.ready" admin)/metrics" | awk -v m="$2" '$1 == m {print $2}'; }
rev=$(metric n2 pidnode_cluster_applied_revision)
c1=$(metric n1 pidnode_cluster_write_conflicts_total); c2=$(metric n2 pidnode_cluster_write_conflicts_total)
x1=$(metric n1 pidnode_cluster_etcd_txns_total); x2=$(metric n2 pidnode_cluster_etcd_txns_total)
creates64=$(python3 -c "print(${one[2]} * $DUR)")
cpu_line=$(python3 -c "
import sys
t0 = [int(x) for x in '${t0[*]}'.split()]; t1 = [int(x) for x in '${t1[*]}'.split()]
hz, n = $(getconf CLK_TCK), max($creates64, 1)
us = [(b - a) * 1e6 / hz / n for a, b in zip(t0, t1)]
names = ['etcd e1', 'etcd e2', 'etcd e3', 'n1 (accepts)', 'n2 (applies)']
print(', '.join('%s %d µs' % (m, u) for m, u in zip(names, us)) + '; in all %d µs' % sum(us))
")
bound=$(python3 -c "
t0 = [int(x) for x in '${t0[*]}'.split()]; t1 = [int(x) for x in '${t1[*]}'.split()]
tot = sum(b - a for a, b in zip(t0, t1)) / $(getconf CLK_TCK)
print(round($(nproc) * max($creates64, 1) / max(tot, 1e-9)))
")

{
  echo "# Cluster write throughput, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "Host: $(nproc) CPUs, $(uname -sr). Every process on this host: three etcd members (fsync on), two"
  echo "pidnode nodes, the load drivers. \`admincreate\` clients (closed loop), ${DUR} s per row; through two"
  echo "nodes the clients are split evenly (1 client: one node only). \`make bench-cluster DUR=$DUR\`."
  echo
  echo "| clients | single node creates/s | cluster, one node | cluster, two nodes |"
  echo "|---|---|---|---|"
  i=0
  for c in 1 16 64; do
    echo "| $c | ${single[$i]} | ${one[$i]} | ${two[$i]} |"
    i=$((i + 1))
  done
  echo
  echo "Replication lag, creates through n1 at a target of 1,000/s (open loop, at most 256 in flight),"
  echo "from n1's 201 to n2's resolver answering 200 (polled every millisecond): \`$lagjson\`."
  echo
  echo "etcd transactions: n1 $x1 ($c1 lost to a concurrent write and were rehearsed again), n2 $x2 ($c2 lost);"
  echo "n2's applied revision at the end: $rev."
  echo
  echo "CPU per create, 64 clients through n1 (the row above), per process: $cpu_line. Every process shares"
  echo "this host's $(nproc) CPUs, so they bound the cluster at about $bound creates/s whatever the number of"
  echo "nodes; each etcd member and each pidnode node on a machine of its own would each have its CPUs to itself."
} | tee "$OUT"
