#!/usr/bin/env bash
# DNS benchmark: dnsperf against pidnode's DNS front and against a
# bare miekg/dns server answering TXT from a Go map (bench/dns/baseline), with
# the same names, in one invocation; prints both QPS and the ratio.
#
#   bench/dns/run.sh            # N=10000 names, 10 s per server
#   N=50000 SECS=10 ROUNDS=3 CLIENTS=8 THREADS=2 OUTSTANDING=200 bench/dns/run.sh
#
# Everything is on loopback; every process this script starts is stopped by its
# PID on exit. dnsperf is installed with apt-get if missing.
#
# Data: baseline -gen writes N records (PREFIX/svc/BEN/<ID>, one URL value) as
# JSON Lines and the dnsperf query file (<id>.ben.svc.ZONE TXT). pidnode gets
# them through `pidnode import`, then `pidnode serve --dns-addr 127.0.0.1:0
# --ready-file …` (the dns address is read from the "dns ADDR" line). If
# cmd/pidnode does not build, the import fails or the node writes no dns line
# within the wait, the script prints why and exits 1: it measures the real
# binary or nothing.
set -euo pipefail
# The generated URLs are public names: this benchmark checks no links
# (docs/product.md §4.4).
export PIDNODE_LINKCHECK_INTERVAL=0

N=${N:-10000}
SECS=${SECS:-10}
WARM=${WARM:-pass}
CLIENTS=${CLIENTS:-4}
THREADS=${THREADS:-2}
OUTSTANDING=${OUTSTANDING:-100}
ROUNDS=${ROUNDS:-1} # >1: alternate the order per round and report the means
DNSPERF_ARGS=${DNSPERF_ARGS:-} # more dnsperf flags for both servers, e.g. "-e" (EDNS0)
ZONE=${ZONE:-hdl.example.org}
PREFIX=${PREFIX:-21.12345}
TEST_PREFIX=${TEST_PREFIX:-21.T12345}

cd "$(dirname "$0")/../.."
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pidnode-dnsbench.XXXXXX")
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s\n' "$*" >&2; }

# dnsperf, installed from the distribution if missing.
if ! command -v dnsperf >/dev/null 2>&1; then
	log "dnsperf missing: installing with apt-get"
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	$SUDO apt-get update -qq
	apt-cache policy dnsperf | sed -n 1,3p >&2
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq dnsperf >&2
fi

log "building"
if ! go build -o "$TMP/pidnode" ./cmd/pidnode 2>"$TMP/build.log"; then
	log "cmd/pidnode does not build:"
	tail -3 "$TMP/build.log" >&2
	exit 1
fi
go build -o "$TMP/baseline" ./bench/dns/baseline

"$TMP/baseline" -gen -n "$N" -zone "$ZONE" -prefix "$TEST_PREFIX" \
	-jsonl "$TMP/records.jsonl" -queries "$TMP/queries.txt"

# wait_dns FILE PID: print the address of the "dns ADDR" line of FILE, waiting
# up to 30 s while PID lives.
wait_dns() {
	local file=$1 pid=$2 i
	for i in $(seq 300); do
		if [ -f "$file" ] && grep -q '^dns ' "$file"; then
			awk '$1 == "dns" { print $2; exit }' "$file"
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# pidnode: import, then serve DNS only, with a cache that holds every name (the
# baseline holds them all in a map; an LRU sized exactly N keeps evicting the
# names of its fuller shards and would measure misses).
PFLAGS=(--data "$TMP/pidnode-data" --prefix "$PREFIX" --test-prefix "$TEST_PREFIX")
if ! "$TMP/pidnode" import "${PFLAGS[@]}" "$TMP/records.jsonl" >"$TMP/import.log" 2>&1; then
	log "pidnode import failed:"
	tail -5 "$TMP/import.log" >&2
	exit 1
fi
# dnsperf sends from one address: response-rate limiting (on by default)
# would measure the limit, not the server.
"$TMP/pidnode" serve "${PFLAGS[@]}" \
	--dns-addr 127.0.0.1:0 --resolver-addr "" --admin-addr "" --hdl-addr "" \
	--dns-zone "$ZONE=$TEST_PREFIX" --operator-key-file "$TMP/operator.key" \
	--cache-entries "$((N + N / 4 + 1024))" --dns-rrl-rate 0 \
	--ready-file "$TMP/ready-pidnode" >"$TMP/pidnode.log" 2>&1 &
PIDS+=($!)
PPID_=$!
PADDR=$(wait_dns "$TMP/ready-pidnode" "$PPID_") || {
	log "pidnode serve gave no 'dns ADDR' ready line; its log:"
	tail -5 "$TMP/pidnode.log" >&2 || true
	exit 1
}

"$TMP/baseline" -n "$N" -zone "$ZONE" -addr 127.0.0.1:0 -ready-file "$TMP/ready-baseline" >"$TMP/baseline.log" 2>&1 &
PIDS+=($!)
BPID=$!
BADDR=$(wait_dns "$TMP/ready-baseline" "$!") || { log "baseline did not start:"; cat "$TMP/baseline.log" >&2; exit 1; }

# cpu PID: CPU time (user+system) of PID so far, in clock ticks.
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
TICK=$(getconf CLK_TCK)

# perf NAME ADDR SECONDS PID: run dnsperf, keep its output in $TMP/NAME.out and
# the server's CPU microseconds per completed query in $TMP/NAME.cpu. SECONDS
# "pass" runs once through the query file instead of for a time.
perf() {
	local c0 c1 n limit
	limit=(-l "$3")
	[[ $3 == pass ]] && limit=(-n 1)
	c0=$(cpu "$4")
	# shellcheck disable=SC2086 # DNSPERF_ARGS is a list of flags
	dnsperf -s "${2%:*}" -p "${2##*:}" -d "$TMP/queries.txt" "${limit[@]}" \
		-c "$CLIENTS" -T "$THREADS" -q "$OUTSTANDING" $DNSPERF_ARGS >"$TMP/$1.out" 2>&1
	c1=$(cpu "$4")
	n=$(awk '/Queries completed:/ { print $3 }' "$TMP/$1.out")
	awk -v c="$((c1 - c0))" -v t="$TICK" -v n="$n" 'BEGIN { if (n > 0) printf "%.2f", c / t * 1e6 / n }' >"$TMP/$1.cpu"
}
qps() { awk '/Queries per second:/ { print $4 }' "$TMP/$1.out"; }
summary() { grep -E 'Queries (sent|completed|lost)|Response codes|Average packet size|Average Latency' "$TMP/$1.out" | sed 's/^ */    /'; }

# The warm-up asks every name once (WARM=pass, the default), so the measured
# runs compare warm caches: a time-boxed warm-up leaves most of a large name
# set cold and measures pidnode's miss path against a Go map.
log "warming both caches (${WARM} each)"
perf warm-pidnode "$PADDR" "$WARM" "$PPID_"
perf warm-baseline "$BADDR" "$WARM" "$BPID"
log "measuring ${SECS}s each x $ROUNDS round(s): $N names, $CLIENTS clients, $THREADS threads, $OUTSTANDING outstanding"
PS=() BS=() PC=() BC=()
for r in $(seq "$ROUNDS"); do
	# Alternate which server goes first, so drift on a shared machine hits both.
	if [ $((r % 2)) = 1 ]; then
		perf pidnode "$PADDR" "$SECS" "$PPID_"
		perf baseline "$BADDR" "$SECS" "$BPID"
	else
		perf baseline "$BADDR" "$SECS" "$BPID"
		perf pidnode "$PADDR" "$SECS" "$PPID_"
	fi
	PS+=("$(qps pidnode)") BS+=("$(qps baseline)")
	PC+=("$(cat "$TMP/pidnode.cpu")") BC+=("$(cat "$TMP/baseline.cpu")")
	[ "$ROUNDS" = 1 ] || log "round $r: pidnode ${PS[-1]} qps ${PC[-1]} cpu-us/q, baseline ${BS[-1]} qps ${BC[-1]} cpu-us/q"
done
mean() { printf '%s\n' "$@" | awk '{ s += $1; n++ } END { if (n) printf "%.0f", s / n }'; }
mean2() { printf '%s\n' "$@" | awk '{ s += $1; n++ } END { if (n) printf "%.2f", s / n }'; }
P=$(mean "${PS[@]}")
B=$(mean "${BS[@]}")
PCPU=$(mean2 "${PC[@]}")
BCPU=$(mean2 "${BC[@]}")
echo "DNS benchmark: dnsperf -l $SECS -c $CLIENTS -T $THREADS -q $OUTSTANDING${DNSPERF_ARGS:+ $DNSPERF_ARGS}, $ROUNDS round(s), $N names, loopback, $(nproc) CPUs"
echo "pidnode  at $PADDR: $P qps (mean of: ${PS[*]}), server CPU $PCPU us/query"
summary pidnode
echo "baseline (miekg/dns + Go map) at $BADDR: $B qps (mean of: ${BS[*]}), server CPU $BCPU us/query"
summary baseline
awk -v p="$P" -v b="$B" 'BEGIN { if (b > 0) printf "ratio pidnode/baseline: %.3f (target >= 0.9)\n", p / b; else print "ratio: n/a" }'
# On a shared machine QPS swings with other load; server CPU per query does not.
awk -v p="$PCPU" -v b="$BCPU" 'BEGIN { if (p > 0) printf "CPU efficiency pidnode/baseline (baseline us/query / pidnode us/query): %.3f\n", b / p }'
