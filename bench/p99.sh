#!/usr/bin/env bash
# bench/p99.sh — open-loop p99 of cache-hit redirects while statistics flushes
# run, for pidnode binaries against the bare fasthttp map, pinned as in
# make bench's suite (bench/cmd/suite; server on CPU 0, so GOMAXPROCS 1; load on CPU 1).
#
#   bench/p99.sh DATA PDDIR RPS [PIDNODE_BIN...]
#
# DATA: a bench/cmd/gen output directory (zipf.paths, baseline-map.tsv,
# records.jsonl). PDDIR: a pidnode data directory; imported from
# DATA/records.jsonl if it has no pidnode.db (the binaries share it, so from
# the second run on every flush adds to existing day keys: the steady state).
# RPS: the closed-loop capacity (wrk, as the suite measures it); runs are at
# 25 % and 50 % of it. PIDNODE_BIN: binaries to compare (default: one built
# from this tree). Each binary runs with the default --stats-interval (10 s)
# and, as the control without flushes, 1h; each configuration ROUNDS times
# (default 2), alternating, DUR seconds each (default 30: three flushes).
# PCTS overrides the percentages ("25 50").
# Prints one line per run: label, rate, p50, p99, p99.9, max (ms), server
# CPU seconds, GC cycles during the run (pidnode, from gctrace).
set -euo pipefail
# The generated URLs are public names: this benchmark checks no links
# (docs/product.md §4.4).
export PIDNODE_LINKCHECK_INTERVAL=0
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DATA=$1 PD=$2 RPS=$3
shift 3
DUR=${DUR:-30} ROUNDS=${ROUNDS:-2} CONNS=${CONNS:-128}
WORK=$(mktemp -d /tmp/pidnode-p99.XXXXXX)
trap 'for p in $(jobs -p); do kill "$p" 2>/dev/null || true; done' EXIT
(cd "$ROOT" && go build -o "$WORK/" ./bench/cmd/openloop ./bench/cmd/baseline-http)
BINS=("$@")
if ((${#BINS[@]} == 0)); then
	(cd "$ROOT" && go build -o "$WORK/pidnode" ./cmd/pidnode)
	BINS=("$WORK/pidnode")
fi
mkdir -p "$PD"
head -c 32 /dev/urandom | base64 >"$WORK/operator.key"
if [[ ! -s $PD/pidnode.db ]]; then
	"${BINS[0]}" import --data "$PD" "$DATA/records.jsonl" >/dev/null
fi

# run LABEL RATE CMD... — start the server (it writes its address to
# $WORK/ready), warm every path once, then measure.
run() {
	local label=$1 rate=$2 pid addr t0 t1 i out=$WORK/ol.json
	shift 2
	rm -f "$WORK/ready"
	GODEBUG=gctrace=1 taskset -c 0 "$@" >"$WORK/server.log" 2>&1 &
	pid=$!
	for i in $(seq 600); do [[ -s $WORK/ready ]] && break; sleep 0.05; done
	sleep 0.1
	addr=$(awk '$1=="resolver" || $1=="baseline" {print $2; exit}' "$WORK/ready")
	taskset -c 1 "$WORK/openloop" -once -addr "$addr" -paths "$DATA/zipf.paths" -conns 64 >/dev/null 2>&1
	local gc0
	gc0=$(grep -c '^gc ' "$WORK/server.log" || true)
	t0=$(awk '{print $14+$15}' "/proc/$pid/stat")
	taskset -c 1 "$WORK/openloop" -addr "$addr" -paths "$DATA/zipf.paths" -rate "$rate" \
		-duration "${DUR}s" -conns "$CONNS" >"$out" 2>/dev/null
	t1=$(awk '{print $14+$15}' "/proc/$pid/stat")
	local gc1
	gc1=$(grep -c '^gc ' "$WORK/server.log" || true)
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	python3 - "$label" "$rate" "$(((t1 - t0) / 100))" "$((gc1 - gc0))" "$out" <<'EOF'
import json, sys
label, rate, cpu, gcs, out = sys.argv[1:]
j = json.load(open(out))
l = j["latency_ms"]
print(f"{label:28s} rate {rate:>6s} p50 {l['p50']:8.2f} p99 {l['p99']:8.2f} p99.9 {l['p99.9']:8.2f} "
      f"max {l['max']:8.2f} achieved {j['achieved_rate']:8.0f} errors+missed {j['errors'] + j['missed']} "
      f"cpu {cpu}s gc {gcs}")
EOF
}

for pct in ${PCTS:-25 50}; do
	rate=$((RPS * pct / 100))
	for r in $(seq "$ROUNDS"); do
		for b in "${BINS[@]}"; do
			for every in 10s 1h; do
				run "$(basename "$b") stats $every" "$rate" "$b" serve --data "$PD" \
					--resolver-addr 127.0.0.1:0 --admin-addr 127.0.0.1:0 --dns-addr "" --hdl-addr "" \
					--operator-key-file "$WORK/operator.key" --ready-file "$WORK/ready" \
					--cache-entries 200000 --log-level warn --stats-interval "$every"
			done
		done
		run "baseline-http" "$rate" "$WORK/baseline-http" -map "$DATA/baseline-map.tsv" \
			-addr 127.0.0.1:0 -ready-file "$WORK/ready"
	done
done
rm -rf "$WORK"
