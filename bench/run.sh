#!/usr/bin/env bash
# bench/run.sh — pidnode end-to-end benchmark suite, with its baselines
# (nginx map, bare fasthttp map) run in the same invocation on the same data.
#
#   DUR=5 bench/run.sh                  # make bench: N=1000000, 5 s per capacity run
#   N=10000000 bench/run.sh             # make bench-full: 10 s per capacity run
#   N=100000 DUR=3 OL_DUR=5 bench/run.sh  # quick
#
# Settings (environment): LC_DUR, LC_RATE, LC_HOSTS, LC_SETTLE (the link
# checker's run: seconds measured, URLs per second, loopback hosts, seconds
# idle before the base memory sample), N identifiers, DUR seconds per closed-loop (capacity)
# run, OL_DUR seconds per open-loop (latency) run (15 by default: longer than
# the 10 s statistics interval, so every latency run includes a flush), CONNS
# wrk connections, OL_CONNS open-loop connections, REQUESTS length of each
# request stream, SEED, BENCH_DATA (dataset cache, default bench/data),
# BENCH_WORK (scratch: databases, logs; default a temp dir removed at the end
# unless KEEP=1), OUT (results directory, default bench/results), PIDNODE_BIN
# (use this binary instead of building ./cmd/pidnode; PIDNODE_COMMIT names the
# commit it was built from), ROUNDS (interleaved
# rounds of the cache-hit and miss comparisons, the best counts; 3), NGINX_WAIT
# (seconds nginx may take to load its map, 300), PROFILE=0 to
# skip the perf profiles, DNS_MAX_N, SERVER_CPU, LOAD_CPU, CACHE_BYTES (pidnode's
# --cache-bytes, e.g. 64MiB; default its own, a quarter of the memory limit;
# the memory rows report RssAnon against it), MEM_BYTES (the budget of the
# uniform-misses memory scenario, CACHE_BYTES or else 64MiB), MEM_DUR (its
# seconds, 2×DUR), HIT_BUDGETS (the budgets of the hit-ratio runs, in percent
# of the database file, "1 5 25").
#
# Every server runs in its own process group (setsid) pinned to SERVER_CPU, the
# load generators to LOAD_CPU; the EXIT trap kills every group this script
# started. Loopback only. Writes OUT/<date>-<host>.md (-n<N> added unless N = 1M), .svg and .log.
set -euo pipefail
# The whole script is one compound command, so bash parses it before running
# it: editing run.sh during a run cannot derail the run.
{

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

N=${N:-1000000}
DUR=${DUR:-10}
OL_DUR=${OL_DUR:-15}
NGINX_WAIT=${NGINX_WAIT:-300}
CONNS=${CONNS:-64}
OL_CONNS=${OL_CONNS:-128}
REQUESTS=${REQUESTS:-200000}
SEED=${SEED:-1}
DNS_MAX_N=${DNS_MAX_N:-100000}
PROF_DUR=${PROF_DUR:-5}
ROUNDS=${ROUNDS:-3}
MEM_BYTES=${MEM_BYTES:-${CACHE_BYTES:-64MiB}}
MEM_DUR=${MEM_DUR:-$((2 * DUR))}
HIT_BUDGETS=${HIT_BUDGETS:-1 5 25}
LC_DUR=${LC_DUR:-30}
LC_RATE=${LC_RATE:-1000}
LC_HOSTS=${LC_HOSTS:-64}
LC_SETTLE=${LC_SETTLE:-5}
# The dataset's URLs are public names (example.org): no node of this suite
# checks them. The link checker's own run turns it on with flags, against
# loopback hosts only.
export PIDNODE_LINKCHECK_INTERVAL=0
PREFIX=21.T12345
NS=BNC
OUT=${OUT:-$ROOT/bench/results}
BENCH_DATA=${BENCH_DATA:-$ROOT/bench/data}
HOST=$(hostname -s 2>/dev/null || hostname)
STAMP=$(date -u +%Y-%m-%d)
CLK_TCK=$(getconf CLK_TCK)
NCPU=$(nproc)

if [[ -n ${BENCH_WORK:-} ]]; then
	WORK=$BENCH_WORK
	mkdir -p "$WORK"
else
	WORK=$(mktemp -d /tmp/pidnode-bench.XXXXXX)
fi
BIN=$WORK/bin
ROWS=$WORK/rows.tsv
CHART=$WORK/chart.tsv
MEMORY=$WORK/memory.tsv
HITRATIO=$WORK/hitratio.tsv
PROFILE_MD=$WORK/profile.md
WHY=$WORK/why.tsv
LOG=$WORK/suite.log
: >"$ROWS"
: >"$CHART"
: >"$MEMORY"
: >"$HITRATIO"
: >"$PROFILE_MD"
: >"$WHY"
: >"$LOG"

# ---------------------------------------------------------------- processes --
GROUPS_STARTED=()
cleanup() {
	local rc=$?
	for pg in "${GROUPS_STARTED[@]}"; do
		kill -TERM -- "-$pg" 2>/dev/null || true
	done
	sleep 0.5
	for pg in "${GROUPS_STARTED[@]}"; do
		kill -KILL -- "-$pg" 2>/dev/null || true
	done
	if [[ -z ${BENCH_WORK:-} && ${KEEP:-0} != 1 ]]; then
		rm -rf "$WORK"
	else
		echo "bench: scratch kept in $WORK" >&2
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if ((NCPU >= 2)); then
	SERVER_CPU=${SERVER_CPU:-0}
	LOAD_CPU=${LOAD_CPU:-1}
	ON_SERVER=(taskset -c "$SERVER_CPU")
	ON_LOAD=(taskset -c "$LOAD_CPU")
	PINNING="server on CPU $SERVER_CPU, load generator on CPU $LOAD_CPU (taskset)"
else
	ON_SERVER=()
	ON_LOAD=()
	PINNING="not pinned (1 CPU): server and load generator share the CPU"
fi

# Every log line carries the seconds since the start, so the log shows where
# the suite's time goes.
log() { echo "bench: [+${SECONDS}s] $*" | tee -a "$LOG" >&2; }

# start NAME CMD… — run CMD in a new process group pinned to the server CPU;
# sets STARTED_PG (its pid = its process group id).
start() {
	local name=$1
	shift
	setsid "${ON_SERVER[@]}" "$@" >"$WORK/$name.log" 2>&1 &
	STARTED_PG=$!
	GROUPS_STARTED+=("$STARTED_PG")
}

# stop PG — SIGTERM the group, wait for its leader, SIGKILL what is left.
stop() {
	local pg=$1 i keep=()
	kill -TERM -- "-$pg" 2>/dev/null || true
	for i in $(seq 100); do
		kill -0 "$pg" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL -- "-$pg" 2>/dev/null || true
	wait "$pg" 2>/dev/null || true
	for i in "${GROUPS_STARTED[@]}"; do
		[[ $i == "$pg" ]] || keep+=("$i")
	done
	GROUPS_STARTED=("${keep[@]}")
}

# cpu_split PG — "USER SYSTEM MAJFLT MINFLT": the clock ticks every live
# process in group PG spent in user space and in the kernel, the page faults
# that had to read from disk, and those that did not (a page already in memory
# mapped for the first time, fresh memory) (/proc/PID/stat fields 14, 15, 12
# and 10; nginx's master and worker both count).
cpu_split() {
	local pg=$1 u=0 s=0 m=0 n=0 f line
	for f in /proc/[0-9]*/stat; do
		read -r line 2>/dev/null <"$f" || continue
		# shellcheck disable=SC2086
		set -- ${line##*) }
		if [[ $3 == "$pg" ]]; then
			u=$((u + ${12}))
			s=$((s + ${13}))
			m=$((m + ${10}))
			n=$((n + ${8}))
		fi
	done
	echo "$u $s $m $n"
}

# cpu_ticks PG — user+system clock ticks of group PG (cpu_split's sum).
cpu_ticks() {
	local u s
	read -r u s _ <<<"$(cpu_split "$1")"
	echo $((u + s))
}

# cpu_busy — busy ticks (user+nice+system+irq+softirq+steal) of the server CPU
# from /proc/stat; empty when not pinned.
OTHER_TICKS=0
RUN_TICKS=0
cpu_busy() {
	[[ -n ${SERVER_CPU:-} ]] || return 0
	awk -v c="cpu$SERVER_CPU" '$1==c{print $2+$3+$4+$7+$8+$9}' /proc/stat
}

# rss_kb PID FIELD — VmRSS, RssAnon or RssFile of PID in kB.
rss_kb() { awk -v f="$2:" '$1==f{print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# mem_watch PID — sample RssAnon and VmRSS of PID every 0.1 s in the
# background (bash builtins only: no process per sample) until mem_peak,
# which sets PEAK_ANON and PEAK_RSS (kB), the largest samples.
mem_watch() {
	local pid=$1
	echo "0 0" >"$WORK/mem.peak"
	(
		pa=0 pr=0
		trap 'echo "$pa $pr" >"$WORK/mem.peak"; exit 0' TERM
		while [[ -r /proc/$pid/status ]]; do
			while read -r k v _; do
				case $k in
				RssAnon:) if ((v > pa)); then pa=$v; fi ;;
				VmRSS:) if ((v > pr)); then pr=$v; fi ;;
				esac
			done <"/proc/$pid/status" 2>/dev/null || break
			sleep 0.1
		done
		echo "$pa $pr" >"$WORK/mem.peak"
	) &
	MEM_WATCH=$!
}
mem_peak() {
	kill "$MEM_WATCH" 2>/dev/null || true
	wait "$MEM_WATCH" 2>/dev/null || true
	read -r PEAK_ANON PEAK_RSS <"$WORK/mem.peak" 2>/dev/null || PEAK_ANON=0 PEAK_RSS=0
}

r0() { printf '%.0f' "$1"; }
r1() { printf '%.1f' "$1"; }

calc() { awk "BEGIN { v = $*; printf \"%.6g\", v }"; }

# row ID FIGURE UNIT PIDNODE BASELINE BASELINE_LABEL TARGET_KIND TARGET COMMAND NOTE
# TARGET_KIND: ratio_min (pidnode/baseline ≥ target), min (pidnode ≥ target),
# max (pidnode ≤ target), none.
row() {
	local IFS=$'\t'
	echo "$*" >>"$ROWS"
}

# chart SCENARIO SYSTEM REQ_PER_CPU_S REQ_PER_S P99_MS
chart() {
	local IFS=$'\t'
	echo "$*" >>"$CHART"
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
		echo $((20000 + RANDOM % 30000))
}

wait_http() { # ADDR PATH SECONDS
	local i
	for i in $(seq $(($3 * 20))); do
		curl -s -o /dev/null --max-time 1 "http://$1$2" && return 0
		sleep 0.05
	done
	return 1
}

# ------------------------------------------------------------------- drivers --
# wrk_run LABEL PG ADDR PATHS PREFIX SUFFIX — closed-loop capacity. Sets RPS
# (requests/s), RPC (requests per server CPU-second), P99 (ms), BAD (non-2xx/3xx
# plus socket errors), CMD, SRV_SECS (the server's CPU seconds), and US, USR
# and SYS: the server's CPU per request in µs, all of it, in user space and in
# the kernel.
wrk_run() {
	local label=$1 pg=$2 addr=$3 paths=$4 pre=$5 suf=$6 accept=${7:-} t0 t1 out=$WORK/wrk-${1//[^A-Za-z0-9_-]/_}.txt total secs
	local d=${RUN_DUR:-$DUR} u0 s0 m0 n0 u1 s1 m1 n1
	CMD="wrk -t1 -c$CONNS -d${d}s --latency -s bench/wrk/stream.lua http://ADDR -- '$pre' '$suf'${accept:+ '$accept'}  (BENCH_PATHS=$(basename "$paths"))"
	read -r u0 s0 m0 n0 <<<"$(cpu_split "$pg")"
	local b0 b1
	b0=$(cpu_busy)
	BENCH_PATHS=$paths "${ON_LOAD[@]}" wrk -t1 -c"$CONNS" -d"${d}s" --timeout 5s --latency \
		-s "$ROOT/bench/wrk/stream.lua" "http://$addr" -- "$pre" "$suf" "$accept" >"$out" 2>&1 || true
	read -r u1 s1 m1 n1 <<<"$(cpu_split "$pg")"
	t0=$((u0 + s0)) t1=$((u1 + s1))
	b1=$(cpu_busy)
	if [[ -n $b0 && -n $b1 ]]; then
		# Ticks the server CPU spent on anything but the server.
		OTHER_TICKS=$((OTHER_TICKS + (b1 - b0) - (t1 - t0)))
		RUN_TICKS=$((RUN_TICKS + d * CLK_TCK))
	fi
	total=$(awk '/requests in/{print $1; exit}' "$out")
	RPS=$(awk '/^Requests\/sec:/{print $2}' "$out")
	P99=$(awk '$1=="99%"{v=$2; u=v; sub(/[0-9.]+/,"",u); sub(/[a-z]+$/,"",v);
		m = (u=="us") ? 0.001 : (u=="s") ? 1000 : (u=="m") ? 60000 : 1; printf "%.3f", v*m}' "$out")
	BAD=$(awk '/Non-2xx or 3xx/{b+=$NF} /Socket errors/{gsub(/,/,""); b+=$4+$6+$8+$10} END{print b+0}' "$out")
	secs=$(calc "($t1 - $t0) / $CLK_TCK")
	SRV_SECS=$secs
	RPC=$(calc "($secs > 0) ? ${total:-0} / $secs : 0")
	US=$(calc "(${total:-0} > 0) ? $secs * 1e6 / $total : 0")
	USR=$(calc "(${total:-0} > 0) ? ($u1 - $u0) / $CLK_TCK * 1e6 / $total : 0")
	SYS=$(calc "(${total:-0} > 0) ? ($s1 - $s0) / $CLK_TCK * 1e6 / $total : 0")
	MAJ=$(calc "(${total:-0} > 0) ? ($m1 - $m0) / $total : 0")
	MINF=$(calc "(${total:-0} > 0) ? ($n1 - $n0) / $total : 0")
	RPS=${RPS:-0}
	P99=${P99:-0}
	log "$label: ${RPS} req/s, $RPC req/server-CPU-s, server CPU ${secs}s, p99 ${P99} ms (closed loop), bad $BAD, $(printf %.3f "$MINF") minor and $(printf %.3f "$MAJ") major page faults per request"
}

# ol_run LABEL ADDR PATHS PREFIX SUFFIX RATE — open-loop at RATE. Sets OL_P99,
# OL_P50, OL_ACH (achieved rate), OL_BAD, OL_CMD, OL_GEN (% of its core the
# generator itself used: near 100 means its own queueing is in the tail).
ol_run() {
	local label=$1 addr=$2 paths=$3 pre=$4 suf=$5 rate=$6 out=$WORK/ol-$1.json
	OL_CMD="openloop -addr ADDR -paths $(basename "$paths") -prefix '$pre' -suffix '$suf' -rate $rate -duration ${OL_DUR}s -conns $OL_CONNS"
	"${ON_LOAD[@]}" "$BIN/openloop" -addr "$addr" -paths "$paths" -prefix "$pre" -suffix "$suf" \
		-rate "$rate" -duration "${OL_DUR}s" -conns "$OL_CONNS" >"$out" 2>>"$LOG" || true
	OL_P99=$(jq_get "$out" '.latency_ms.p99')
	OL_P50=$(jq_get "$out" '.latency_ms.p50')
	OL_ACH=$(jq_get "$out" '.achieved_rate')
	OL_BAD=$(jq_get "$out" '.errors + .missed')
	OL_GEN=$(r0 "$(calc "100 * $(jq_get "$out" '.cpu_share')")")
	OL_FLAG=""
	if awk "BEGIN { exit !($OL_ACH < 0.95 * $rate) }"; then
		# The target rate was not achieved: the tail then measures a backlog,
		# the generator's (its core saturated) or the server's.
		if ((OL_GEN >= 90)); then
			OL_FLAG=" [generator-bound: $(r0 "$OL_ACH") of $rate/s, load core $OL_GEN % busy]"
		else
			OL_FLAG=" [server-bound: $(r0 "$OL_ACH") of $rate/s answered]"
		fi
	fi
	log "$label: open loop at $rate/s: achieved $OL_ACH/s, p50 $OL_P50 ms, p99 $OL_P99 ms, errors+missed $OL_BAD, generator CPU $OL_GEN %$OL_FLAG"
}

# profile LABEL PG ADDR PATHS PREFIX SUFFIX [ACCEPT] — if perf is installed (Debian's
# linux-perf; not installed by this script), a separate ${PROF_DUR}s wrk run
# with `perf record` on the server's process group leader (or on PERF_PIDS,
# comma-separated); the flat top of the
# profile goes into the report's profile section. `perf stat` counts the
# server's system calls meanwhile, for perf_spr. Not part of any figure.
profiling() { command -v perf >/dev/null && [[ ${PROFILE:-1} == 1 ]]; }
profile() {
	profiling || return 0
	local label=$1 pg=$2 data
	data=$(perf_data "$label")
	"${ON_LOAD[@]}" perf record -F 997 -g -p "${PERF_PIDS:-$pg}" -o "$data" -- sleep "$PROF_DUR" >/dev/null 2>&1 &
	local pp=$!
	"${ON_LOAD[@]}" perf stat -x, -e raw_syscalls:sys_enter -p "${PERF_PIDS:-$pg}" -o "$data.stat" -- sleep "$PROF_DUR" >/dev/null 2>&1 &
	local ps=$!
	sleep 0.2
	RUN_DUR=$PROF_DUR wrk_run "profile-$label" "$pg" "$3" "$4" "$5" "$6" "${7:-}" 2>/dev/null
	wait "$pp" "$ps" 2>/dev/null || true
	# perf's window opens 0.2 s before wrk starts and closes with it.
	awk -F, -v n="$(calc "$RPS * ($PROF_DUR - 0.2)")" '$3 == "raw_syscalls:sys_enter" && n > 0 { printf "%.2f", $1 / n }' \
		"$data.stat" >"$data.spr" 2>/dev/null || true
	profile_section "$label"
}

# perf_spr LABEL — the server's system calls per request in profile LABEL's
# run; empty if not counted.
perf_spr() { cat "$(perf_data "$1").spr" 2>/dev/null || true; }

# profile_load LABEL PG CMD… — like profile, with CMD (run on the load CPU) as
# the workload instead of wrk.
profile_load() {
	profiling || return 0
	local label=$1 pg=$2
	shift 2
	"${ON_LOAD[@]}" perf record -F 997 -g -p "$pg" -o "$(perf_data "$label")" -- sleep "$PROF_DUR" >/dev/null 2>&1 &
	local pp=$!
	sleep 0.2
	"${ON_LOAD[@]}" "$@" >/dev/null 2>>"$LOG" || true
	wait "$pp" 2>/dev/null || true
	profile_section "$label"
}

perf_data() { echo "$WORK/perf-${1//[^A-Za-z0-9]/_}.data"; }

# profile_section LABEL — the flat top of perf_data LABEL into the report.
profile_section() {
	{
		echo "### $1"
		echo
		echo '```'
		perf report -i "$(perf_data "$1")" --stdio --no-children -g none --sort symbol --percent-limit 1.5 2>/dev/null | grep -v '^#' | grep -v '^$' |
			sed 's/[[:space:]]*-[[:space:]]*-[[:space:]]*$//; s/[[:space:]]*$//' | head -30
		echo '```'
		echo
	} >>"$PROFILE_MD"
}

# perf_share LABEL SYMBOL — SYMBOL's share (%) of perf_data LABEL's samples,
# with everything it calls (the call graphs perf recorded; Go keeps frame
# pointers); 0 if it never ran. A deep kernel stack can cut a sample's chain
# short of its callers, so a caller's share may read less than a callee's:
# the reasons list shares side by side, never one as part of another. The
# first call writes the table beside the data.
perf_share() {
	local f
	f=$(perf_data "$1").children
	[[ -s $f ]] || perf report -i "$(perf_data "$1")" --stdio --children -g none --sort symbol 2>/dev/null | grep -v '^#' >"$f"
	awk -v s="$2" 'index($0, "] " s " ") || substr($0, length($0) - length(s) - 1) == "] " s {
		v = $1; sub(/%/, "", v); print v; found = 1; exit
	} END { if (!found) print 0 }' "$f"
}

# perf_kernel LABEL — the kernel's share (%) of perf_data LABEL's samples.
perf_kernel() {
	perf report -i "$(perf_data "$1")" --stdio --no-children -g none --sort dso 2>/dev/null |
		awk '/\[kernel\.kallsyms\]/ { v = $1; sub(/%/, "", v); print v; found = 1 } END { if (!found) print 0 }'
}

# why ID TEXT — what this run measured behind row ID's figure: the report
# prints it under the row in "Targets missed" when its target is missed.
why() { printf '%s\t%s\n' "$1" "$2" >>"$WHY"; }

# us_split NAME — "X µs (user U, kernel K)" from keep_best's NAME_US, NAME_USR,
# NAME_SYS: the server's CPU per request in NAME's best round.
us_split() {
	local us=${1}_US usr=${1}_USR sys=${1}_SYS
	echo "$(r1 "${!us:-0}") µs (user $(r1 "${!usr:-0}"), kernel $(r1 "${!sys:-0}"))"
}

# sdiff A B — A - B with its sign, one decimal.
sdiff() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f", a - b }'; }

# share_us LABEL SYMBOL US — "P % (≈ X µs)": SYMBOL's share of LABEL's profile
# and that share of US µs per request.
share_us() {
	local p
	p=$(perf_share "$1" "$2")
	echo "$(r0 "$p") % (≈ $(r1 "$(calc "$p * $3 / 100")") µs)"
}

# jq_get FILE EXPR — tiny JSON reader (python3), so jq is not required.
jq_get() {
	python3 - "$1" "$2" <<'EOF' 2>/dev/null || echo 0
import json, sys, re
d = json.load(open(sys.argv[1]))
expr = sys.argv[2]
def get(path):
    v = d
    for p in path.strip().lstrip('.').split('.'):
        v = v[p]
    return v
print(sum(get(t) for t in expr.split('+')))
EOF
}

# chart_p99 — the last open-loop p99 for the chart, 0 (drawn as "not
# measured") when the generator could not send at the rate.
chart_p99() { if [[ -n $OL_FLAG ]]; then echo 0; else echo "$OL_P99"; fi; }

pct_rate() { calc "int($1 * $2 / 100)"; }

# ------------------------------------------------------------------- prepare --
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
# The commit measured: taken now, not when the report is written (others may
# commit meanwhile). With PIDNODE_BIN, say which commit it was built from in
# PIDNODE_COMMIT.
# (An if, not `[[ … ]] && echo`: on a clean tree that substitution exits 1 and
# set -e would end the run.)
local_changes() {
	if [[ -n $(git status --porcelain -- cmd handlev store cache resolver admin 2>/dev/null) ]]; then
		echo "+local changes"
	fi
}
COMMIT=${PIDNODE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo ?)$(local_changes)}
log "N=$N DUR=${DUR}s CONNS=$CONNS REQUESTS=$REQUESTS; $PINNING; scratch $WORK"
need=()
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || need+=(nginx-light)
if ((${#need[@]})); then
	log "installing ${need[*]} (Debian packages)"
	if ! (apt-get install -y -qq "${need[@]}" >>"$LOG" 2>&1 ||
		{ apt-get update -qq >>"$LOG" 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >>"$LOG" 2>&1; }); then
		log "could not install ${need[*]}"
	fi
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

log "building"
mkdir -p "$BIN"
go build -trimpath -o "$BIN/" ./bench/cmd/gen ./bench/cmd/openloop ./bench/cmd/baseline-http \
	./bench/cmd/admincreate ./bench/cmd/hdlload ./bench/cmd/report ./bench/cmd/likeforlike ./bench/cmd/linktarget
HAVE_PIDNODE=1
if [[ -n ${PIDNODE_BIN:-} ]]; then
	# A binary built elsewhere, e.g. from a clean checkout of a commit while
	# the work tree is mid-edit.
	cp "$PIDNODE_BIN" "$BIN/pidnode"
	log "pidnode binary: $PIDNODE_BIN"
elif ! go build -trimpath -o "$BIN/pidnode" ./cmd/pidnode 2>>"$LOG"; then
	HAVE_PIDNODE=0
	log "cmd/pidnode does not build: pidnode rows will read 'not available'"
fi

DATA=$BENCH_DATA/n$N-s$SEED-r$REQUESTS
if [[ -s $DATA/meta.json && -s $DATA/records.jsonl ]]; then
	log "reusing dataset $DATA"
else
	log "generating $N records into $DATA"
	mkdir -p "$DATA"
	"$BIN/gen" -n "$N" -prefix "$PREFIX" -ns "$NS" -seed "$SEED" -requests "$REQUESTS" -out "$DATA" 2>>"$LOG"
fi
meta() { jq_get "$DATA/meta.json" "$1"; }
GEN_S=$(meta .seconds)
ZIPF_DISTINCT=$(meta .zipf_distinct)
REC_BYTES=$(meta .record_bytes)
ZIPF=$DATA/zipf.paths
UNIFORM=$DATA/uniform.paths
row gen "dataset generation ($N records, $(r0 "$(calc "$REC_BYTES/1e6")") MB JSON Lines)" "records/s" \
	"$(calc "$N / $GEN_S")" - - none - "go run ./bench/cmd/gen -n $N -prefix $PREFIX -ns $NS -seed $SEED -requests $REQUESTS" \
	"wall time $(printf %.1f "$GEN_S") s"

na() { row "$1" "$2" "$3" "n/a" - - none - "$4" "not available: $5"; }

# ----------------------------------------------------------------- baselines --
# Like-for-like: every baseline also answers the redirect with pidnode's own
# bytes. lfl_render (pidnode up and warm) has bench/cmd/likeforlike fetch
# pidnode's answer to every distinct path of the Zipf stream and write nginx's
# like-for-like server block (on LFL_PORT) and baseline-http's -lfl file; LFL
# is 1 when it did. lfl_check then compares one response per scenario from
# every server before anything is measured (see bench/README.md).
LFL=0
LFL_PORT=""
RESPONSES_MD=$WORK/responses.md
: >"$RESPONSES_MD"
lfl_render() {
	LFL=0
	LFL_PORT=$(free_port)
	if "${ON_LOAD[@]}" "$BIN/likeforlike" render -pidnode "$RES" -paths "$ZIPF" -nginx-listen "127.0.0.1:$LFL_PORT" \
		-nginx-out "$WORK/lfl-nginx.conf" -baseline-out "$WORK/lfl-baseline.jsonl" 2>>"$LOG"; then
		LFL=1
		log "like-for-like answers rendered: $(tail -1 "$LOG")"
	else
		log "likeforlike render failed: no like-for-like baselines ($(tail -1 "$LOG"))"
	fi
}

# lfl_check — one response per scenario from every server (pidnode first),
# byte counts into the report; sets NGL_NA and FML_NA to "" when the nginx and
# fasthttp like-for-like servers send pidnode's header set and values within
# 5 % of its size, else to the reason ("n/a: header sets differ: …").
lfl_check() {
	local out=$WORK/lfl-check.txt cmp=() mins=()
	NGL_NA="n/a: no like-for-like nginx" FML_NA="n/a: no like-for-like fasthttp map"
	NGL_NOTE="" FML_NOTE=""
	[[ -n ${RES:-} ]] || return 0
	if [[ -n $NGL ]]; then cmp+=("nginx=$NGL"); fi
	if [[ -n $BL ]]; then cmp+=("fasthttp map=$BL"); fi
	if [[ -n $NGA ]]; then mins+=(-minimal "nginx minimal=$NGA"); fi
	if [[ -n $BA ]]; then mins+=(-minimal "fasthttp map minimal=$BA"); fi
	# The 20 first distinct paths are compared; the table shows the first.
	if ! "$BIN/likeforlike" check -scenario "redirect (cache hit)" -paths "$ZIPF" -n 20 -md "$RESPONSES_MD" \
		"${mins[@]}" "pidnode=$RES" "${cmp[@]}" >"$out" 2>>"$LOG"; then
		log "likeforlike check failed: $(tail -1 "$LOG")"
		return 0
	fi
	local name verdict rest
	while IFS=$'\t' read -r name verdict rest; do
		log "like-for-like check: $name: $verdict${rest:+ ($rest)}"
		case $name in
		nginx) if [[ $verdict == ok ]]; then NGL_NA="" NGL_NOTE=$rest; else NGL_NA=$verdict; fi ;;
		"fasthttp map") if [[ $verdict == ok ]]; then FML_NA="" FML_NOTE=$rest; else FML_NA=$verdict; fi ;;
		pidnode) PID_BYTES=$rest ;;
		"nginx minimal") NGA_BYTES=$rest ;;
		"fasthttp map minimal") BA_BYTES=$rest ;;
		esac
	done <"$out"
	# pidnode's other scenarios, for their byte counts (no baseline serves them).
	"$BIN/likeforlike" check -scenario "tombstone" -paths "$TOMB" -md "$RESPONSES_MD" "pidnode=$RES" >/dev/null 2>>"$LOG" || true
	"$BIN/likeforlike" check -scenario "/api/handles (cache hit)" -paths "$ZIPF" -prefix /api/handles -md "$RESPONSES_MD" "pidnode=$RES" >/dev/null 2>>"$LOG" || true
	"$BIN/likeforlike" check -scenario "?noredirect (cache hit)" -paths "$ZIPF" -suffix '?noredirect' -md "$RESPONSES_MD" "pidnode=$RES" >/dev/null 2>>"$LOG" || true
	"$BIN/likeforlike" check -scenario "negotiated redirect" -paths "$ZIPF" -accept "$NEG_ACCEPT" -md "$RESPONSES_MD" "pidnode=$RES" >/dev/null 2>>"$LOG" || true
	"$BIN/likeforlike" check -scenario "linkset" -paths "$ZIPF" -prefix /api/linksets -md "$RESPONSES_MD" "pidnode=$RES" >/dev/null 2>>"$LOG" || true
}

# nginx_up — start nginx (one worker, access log off, the generated map) on a
# free port, and with LFL=1 the like-for-like server block on LFL_PORT; sets
# NGA (empty if it did not come up), NGL (the like-for-like address, or
# empty), NPG, NG_START_S.
nginx_up() {
	NGA="" NGL="" NPG=""
	[[ -x $NGINX ]] || return 0
	local NG=$WORK/nginx port t0 t1 lfl=""
	mkdir -p "$NG/logs"
	port=$(free_port)
	if ((LFL)); then lfl="include $WORK/lfl-nginx.conf;"; fi
	cat >"$NG/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $NG/nginx.pid;
error_log $NG/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 1000000;
    map_hash_max_size $((N * 2 + 1024));
    map_hash_bucket_size 128;
    map \$uri \$target {
        default "";
        include $DATA/nginx-map.conf;
    }
    server {
        listen 127.0.0.1:$port;
        location / {
            if (\$target = "") { return 404; }
            return 302 \$target;
        }
    }
    $lfl
}
EOF
	t0=$(date +%s.%N)
	start nginx "$NGINX" -p "$NG" -e "$NG/logs/error.log" -c "$NG/nginx.conf"
	NPG=$STARTED_PG
	if wait_http "127.0.0.1:$port" / "$NGINX_WAIT"; then
		t1=$(date +%s.%N)
		NGA=127.0.0.1:$port
		NG_START_S=$(calc "$t1 - $t0")
		log "nginx ready in $NG_START_S s: $(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "http://$NGA$SAMPLE")"
		if ((LFL)); then NGL=127.0.0.1:$LFL_PORT; fi
		row nginx_start "nginx start-up with a $N-entry map" s "$NG_START_S" - - none - "nginx -c nginx.conf" "for comparison with pidnode's start-up"
	else
		log "nginx did not start within $NGINX_WAIT s: $(tail -3 "$NG/logs/error.log" 2>/dev/null)"
		# Building a map is superlinear in nginx (its duplicate check scans a
		# fixed 10,007-slot table of keys): 1M entries load in ~6 s, 10M did not
		# load in 300 s. That is a start-up figure too.
		row nginx_start "nginx start-up with a $N-entry map" s "n/a" - - none - "nginx -c nginx.conf" \
			"not serving after NGINX_WAIT=$NGINX_WAIT s; no nginx rows in this run"
		stop "$NPG"
		NPG=""
	fi
}

# baseline_up — start the bare fasthttp map server (with LFL=1 its
# like-for-like listener too); sets BA (empty if it did not come up), BL (the
# like-for-like address, or empty) and BPG.
baseline_up() {
	local i lfl=()
	BA="" BL=""
	rm -f "$WORK/baseline.ready"
	if ((LFL)); then lfl=(-lfl "$WORK/lfl-baseline.jsonl" -lfl-addr 127.0.0.1:0); fi
	start baseline "$BIN/baseline-http" -map "$DATA/baseline-map.tsv" -addr 127.0.0.1:0 "${lfl[@]}" -ready-file "$WORK/baseline.ready"
	BPG=$STARTED_PG
	for i in $(seq 3000); do [[ -s $WORK/baseline.ready ]] && break; sleep 0.02; done
	BA=$(awk '$1=="baseline"{print $2}' "$WORK/baseline.ready" 2>/dev/null || true)
	BL=$(awk '$1=="lfl"{print $2}' "$WORK/baseline.ready" 2>/dev/null || true)
	[[ -n $BA ]] || log "baseline-http did not start: $(tail -3 "$WORK/baseline.log")"
}

# keep_best NAME — after a wrk_run, keep its figures as NAME_RPC, NAME_RPS,
# NAME_CMD, NAME_BAD if its requests per server CPU-second beat the best so
# far; every round's figure is appended to NAME_ALL (spread, round_list).
# Interference from other work only ever slows a run down, so the best of
# several interleaved rounds is the least disturbed one.
#
# A run in which the server got less than a fifth of the run's CPU time (the
# machine stalled: a few clock ticks, so its per-CPU-second figure is mostly
# rounding) counts only while no run of NAME did better than that.
keep_best() {
	local cur=${1}_RPC thin=${1}_THIN all=${1}_ALL d=${RUN_DUR:-$DUR} t=0
	printf -v "${1}_ALL" %s "${!all:+${!all} }$RPC"
	if awk "BEGIN { exit !(${SRV_SECS:-0} < 0.2 * $d) }"; then
		t=1
		log "$1: server CPU ${SRV_SECS:-0} s of a ${d} s run: too little to count unless nothing better comes"
	fi
	if awk "BEGIN { best = ${!cur:-0}; thin = ${!thin:-1}; exit !(($t == 0 && (thin == 1 || $RPC > best)) || ($t == 1 && thin == 1 && $RPC > best)) }"; then
		printf -v "${1}_THIN" %s "$t"
		printf -v "${1}_RPC" %s "$RPC"
		printf -v "${1}_RPS" %s "$RPS"
		printf -v "${1}_CMD" %s "$CMD"
		printf -v "${1}_BAD" %s "$BAD"
		printf -v "${1}_US" %s "$US"
		printf -v "${1}_USR" %s "$USR"
		printf -v "${1}_SYS" %s "$SYS"
		printf -v "${1}_MAJ" %s "$MAJ"
	fi
}

# spread NAME [FORMAT] — how far apart NAME's rounds lie (keep_best's
# NAME_ALL): (best − worst) / best, in %, printed with FORMAT (a whole
# number by default); 0 for fewer than two rounds.
spread() {
	local all=${1}_ALL
	awk -v s="${!all:-}" -v f="${2:-%.0f}" 'BEGIN { n = split(s, a, " "); lo = hi = a[1] + 0
		for (i = 2; i <= n; i++) { if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i] }
		printf f, (n > 1 && hi > 0) ? 100 * (hi - lo) / hi : 0 }'
}

# round_list NAME — NAME's rounds in order, in thousands of requests per
# server CPU-second, and their spread: "90.9k, 72.6k, 72.9k (spread 20 %)".
round_list() {
	local all=${1}_ALL
	awk -v s="${!all:-}" 'BEGIN { n = split(s, a, " "); for (i = 1; i <= n; i++) printf "%s%.1fk", (i > 1 ? ", " : ""), a[i] / 1000 }'
	echo " (spread $(spread "$1") %)"
}

# SPREAD_MAX, EXTRA_ROUNDS — when the rounds of a system lie more than
# SPREAD_MAX % apart after ROUNDS rounds, the machine was disturbed during
# some of them: the hit and miss comparisons run up to EXTRA_ROUNDS more
# rounds (the hit rounds interleaved, every server in the same order), so
# that each best-of has more chances of an undisturbed round. Every round is
# listed in the report (round_list).
SPREAD_MAX=${SPREAD_MAX:-10}
EXTRA_ROUNDS=${EXTRA_ROUNDS:-2}

# more_rounds RAN NAME... — true while a comparison that has run RAN rounds
# should run another: fewer than ROUNDS, or fewer than ROUNDS + EXTRA_ROUNDS
# while the rounds of one of the NAMEs lie more than SPREAD_MAX % apart.
more_rounds() {
	local ran=$1 n
	shift
	((ran < ROUNDS)) && return 0
	((ran < ROUNDS + EXTRA_ROUNDS)) || return 1
	for n; do
		# Compared unrounded: rounds 10.4 % apart are more than 10 % apart.
		if awk "BEGIN { exit !($(spread "$n" %.6f) > $SPREAD_MAX) }"; then
			log "${n}: rounds lie more than $SPREAD_MAX % apart: round $((ran + 1))"
			return 0
		fi
	done
	return 1
}

# hit_rounds — the cache-hit comparison: ROUNDS interleaved rounds (and up to
# EXTRA_ROUNDS more, more_rounds; HIT_ROUNDS is how many ran) of pidnode
# (redirect, /api/handles, ?noredirect, negotiated, linkset; if PG is set),
# nginx and the fasthttp map, each like-for-like (pidnode's bytes) and minimal
# (its plainest 302), back to back; then open-loop runs at 50 % of the
# like-for-like baselines' best capacity and 25/50/75 % of pidnode's redirect.
# A like-for-like row carries its ratio only if lfl_check found the same
# header set and sizes within 5 %. Stops nginx and the map server.
hit_rounds() {
	local r
	HIT_RPC=0 API_RPC=0 NOR_RPC=0 NEG_RPC=0 LNK_RPC=0 TMB_RPC=0 NG_RPC=0 FM_RPC=0 NGL_RPC=0 FML_RPC=0
	HIT_ALL="" API_ALL="" NOR_ALL="" NEG_ALL="" LNK_ALL="" TMB_ALL="" NG_ALL="" FM_ALL="" NGL_ALL="" FML_ALL=""
	NG_OL="" FM_OL="" NGL_OL="" NGL_OL_NUM="" NGL_OL_FLAG="" FML_OL=""
	lfl_check
	HIT_ROUNDS=0
	while more_rounds "$HIT_ROUNDS" HIT NGL FML; do
		r=$((HIT_ROUNDS + 1))
		if [[ -n ${PG:-} ]]; then
			wrk_run "redirect-r$r" "$PG" "$RES" "$ZIPF" "" ""
			keep_best HIT
			wrk_run "api-r$r" "$PG" "$RES" "$ZIPF" /api/handles ""
			keep_best API
			wrk_run "noredirect-r$r" "$PG" "$RES" "$ZIPF" "" "?noredirect"
			keep_best NOR
			wrk_run "negotiated-r$r" "$PG" "$RES" "$ZIPF" "" "" "$NEG_ACCEPT"
			keep_best NEG
			wrk_run "linkset-r$r" "$PG" "$RES" "$ZIPF" /api/linksets ""
			keep_best LNK
			wrk_run "tombstone-r$r" "$PG" "$RES" "$TOMB" "" ""
			keep_best TMB
		fi
		if [[ -n $NGL ]]; then
			wrk_run "nginx-lfl-r$r" "$NPG" "$NGL" "$ZIPF" "" ""
			keep_best NGL
		fi
		if [[ -n $NGA ]]; then
			wrk_run "nginx-min-r$r" "$NPG" "$NGA" "$ZIPF" "" ""
			keep_best NG
		fi
		if [[ -n $BL ]]; then
			wrk_run "fasthttp-map-lfl-r$r" "$BPG" "$BL" "$ZIPF" "" ""
			keep_best FML
		fi
		if [[ -n $BA ]]; then
			wrk_run "fasthttp-map-min-r$r" "$BPG" "$BA" "$ZIPF" "" ""
			keep_best FM
		fi
		HIT_ROUNDS=$r
	done
	if [[ -n $NGL ]]; then
		ol_run nginx-lfl-50 "$NGL" "$ZIPF" "" "" "$(pct_rate "$NGL_RPS" 50)"
		chart "redirect (hit)" nginx "$NGL_RPC" "$NGL_RPS" "$(chart_p99)"
		NGL_OL=$OL_P99$OL_FLAG NGL_OL_NUM=$OL_P99 NGL_OL_FLAG=$OL_FLAG
	fi
	if [[ -n $BL ]]; then
		ol_run fasthttp-lfl-50 "$BL" "$ZIPF" "" "" "$(pct_rate "$FML_RPS" 50)"
		chart "redirect (hit)" "fasthttp map" "$FML_RPC" "$FML_RPS" "$(chart_p99)"
		FML_OL=$OL_P99$OL_FLAG
		profile "fasthttp map, like-for-like redirect" "$BPG" "$BL" "$ZIPF" "" ""
	fi
	if [[ -n $NGA ]]; then chart "redirect, minimal 302" nginx "$NG_RPC" "$NG_RPS" 0; fi
	if [[ -n $BA ]]; then chart "redirect, minimal 302" "fasthttp map" "$FM_RPC" "$FM_RPS" 0; fi
	if [[ -n $NGL ]]; then
		# perf follows the worker (the master only forks it).
		PERF_PIDS=$(pgrep -d, -P "$NPG" || echo "$NPG") profile "nginx, like-for-like redirect" "$NPG" "$NGL" "$ZIPF" "" ""
	fi
	if [[ -n $NPG ]]; then stop "$NPG"; fi
	stop "$BPG"
	[[ -n ${PG:-} ]] || return 0
	ol_run redirect-25 "$RES" "$ZIPF" "" "" "$(pct_rate "$HIT_RPS" 25)"
	OL25=$OL_P99$OL_FLAG OL25_NUM=$OL_P99 OL25_FLAG=$OL_FLAG OL25_CMD=$OL_CMD OL25_GEN=$OL_GEN
	ol_run redirect-50 "$RES" "$ZIPF" "" "" "$(pct_rate "$HIT_RPS" 50)"
	OL50=$OL_P99 OL50_CMD=$OL_CMD OL50_FLAG=$OL_FLAG OL50_GEN=$OL_GEN
	ol_run redirect-75 "$RES" "$ZIPF" "" "" "$(pct_rate "$HIT_RPS" 75)"
	OL75=$OL_P99$OL_FLAG OL75_GEN=$OL_GEN
	chart "redirect (hit)" pidnode "$HIT_RPC" "$HIT_RPS" "$([[ -n $OL50_FLAG ]] && echo 0 || echo "$OL50")"
	local lfl_note="same bytes checked before the rounds (Responses compared, below)"
	row hit_nginx "redirect, cache hit, vs nginx map, like-for-like (pidnode's status, headers and body)" "req/server-CPU-s" "$HIT_RPC" "${NGL_NA:-$NGL_RPC}" "nginx (1 worker)" ratio_min 1.0 \
		"$HIT_CMD" "best of $HIT_ROUNDS interleaved rounds; pidnode $(r0 "$HIT_RPS") req/s vs nginx $(r0 "${NGL_RPS:-0}") req/s; p99 at 50 %: ${OL50:-?} vs ${NGL_OL:-?} ms; bad $HIT_BAD; ${NGL_NOTE:-$lfl_note}"
	row hit_fasthttp "redirect, cache hit, vs bare fasthttp map, like-for-like" "req/server-CPU-s" "$HIT_RPC" "${FML_NA:-$FML_RPC}" "fasthttp map" ratio_min 0.95 \
		"$HIT_CMD" "best of $HIT_ROUNDS interleaved rounds; pidnode $(r0 "$HIT_RPS") req/s vs $(r0 "${FML_RPS:-0}") req/s; p99 at 50 %: ${OL50:-?} vs ${FML_OL:-?} ms; ${FML_NOTE:-$lfl_note}"
	row hit_nginx_min "redirect, cache hit, vs nginx's plainest 302 (minimal, for reference)" "req/server-CPU-s" "$HIT_RPC" "$NG_RPC" "nginx minimal" none - \
		"$HIT_CMD" "best of $HIT_ROUNDS interleaved rounds; nginx $(r0 "${NG_RPS:-0}") req/s; \`return 302 \$target\`: ${NGA_BYTES:-?} against pidnode's ${PID_BYTES:-?}"
	row hit_fasthttp_min "redirect, cache hit, vs the fasthttp map's plainest 302 (minimal, for reference)" "req/server-CPU-s" "$HIT_RPC" "$FM_RPC" "fasthttp map minimal" none - \
		"$HIT_CMD" "best of $HIT_ROUNDS interleaved rounds; map $(r0 "${FM_RPS:-0}") req/s; Location alone: ${BA_BYTES:-?} against pidnode's ${PID_BYTES:-?}"
	# The 2 ms target is for 50 % load. A run that did not reach its rate
	# measures a backlog, so it is not judged: the 25 % run stands in for it
	# when that one did.
	local p99fig="redirect p99 at 50 % of capacity (open loop)" p99val=$OL50 p99cmd=$OL50_CMD kind=max
	if [[ -n $OL50_FLAG ]]; then
		if [[ -z $OL25_FLAG ]]; then
			p99fig="redirect p99 at 25 % of capacity (open loop; the 50 % run did not reach its rate)" p99val=$OL25_NUM p99cmd=$OL25_CMD
		else
			kind=none
		fi
	fi
	row hit_p99 "$p99fig" "ms" "$p99val" - - "$kind" 2 \
		"$p99cmd" "p99 25 %: $OL25 ms, 50 %: $OL50 ms$OL50_FLAG, 75 %: $OL75 ms (target: ≤ 2 ms at 50 %); generator's own CPU: $OL25_GEN / $OL50_GEN / $OL75_GEN % of its core"
	# Against nginx: each at 50 % of its own like-for-like capacity; judged
	# only when both runs reached their rate.
	local nkind=max ntgt=${NGL_OL_NUM:-} nval=$OL50
	if [[ -z $ntgt || -n $NGL_OL_FLAG || -n $OL50_FLAG || -n ${NGL_NA:-} ]]; then nkind=none ntgt=-; fi
	row hit_p99_nginx "redirect p99 at 50 % of capacity vs nginx's (like-for-like) at 50 % of its own" "ms" "$nval" "${NGL_OL_NUM:-}" "nginx p99" "$nkind" "$ntgt" \
		"$OL50_CMD" "pidnode $OL50 ms$OL50_FLAG vs nginx ${NGL_OL:-?} ms; judged only when both runs reached their rate"
	ol_run api-50 "$RES" "$ZIPF" /api/handles "" "$(pct_rate "$API_RPS" 50)"
	chart "/api/handles" pidnode "$API_RPC" "$API_RPS" "$(chart_p99)"
	row api "/api/handles JSON vs redirect" "req/server-CPU-s" "$API_RPC" "$HIT_RPC" "pidnode redirect" ratio_min 0.9 "$API_CMD" \
		"best of $HIT_ROUNDS rounds; $(r0 "$API_RPS") req/s; p99 at 50 %: $OL_P99 ms$OL_FLAG; bad responses $API_BAD"
	ol_run noredirect-50 "$RES" "$ZIPF" "" "?noredirect" "$(pct_rate "$NOR_RPS" 50)"
	chart "?noredirect" pidnode "$NOR_RPC" "$NOR_RPS" "$(chart_p99)"
	row noredirect "?noredirect HTML vs redirect" "req/server-CPU-s" "$NOR_RPC" "$HIT_RPC" "pidnode redirect" ratio_min 0.9 "$NOR_CMD" \
		"best of $HIT_ROUNDS rounds; $(r0 "$NOR_RPS") req/s; p99 at 50 %: $OL_P99 ms$OL_FLAG; bad responses $NOR_BAD"
	row negotiated "negotiated redirect (Accept: $NEG_ACCEPT) vs redirect" "req/server-CPU-s" "$NEG_RPC" "$HIT_RPC" "pidnode redirect" ratio_min 0.9 "$NEG_CMD" \
		"best of $HIT_ROUNDS rounds; $(r0 "$NEG_RPS") req/s; 4 of 5 generated records have a matching representation variant (303), the others answer with the landing redirect; bad responses $NEG_BAD"
	row linkset "linkset (/api/linksets, application/linkset+json) vs redirect" "req/server-CPU-s" "$LNK_RPC" "$HIT_RPC" "pidnode redirect" ratio_min 0.9 "$LNK_CMD" \
		"best of $HIT_ROUNDS rounds; $(r0 "$LNK_RPS") req/s; bad responses $LNK_BAD"
	row tombstone "tombstone (410 page of an OBSOLETED record) vs redirect" "req/server-CPU-s" "$TMB_RPC" "$HIT_RPC" "pidnode redirect" ratio_min 0.9 "$TMB_CMD" \
		"best of $HIT_ROUNDS rounds; $(r0 "$TMB_RPS") req/s over 1,000 tombstones (gen -tombstones); every answer is a 410 by design ($TMB_BAD non-2xx/3xx or socket errors counted by wrk)"
}

# hit_why — what the hit rounds and their profiles measured behind the
# redirect's rows and the pages' (why): the server's CPU per request in user
# space and in the kernel, against each baseline's, and where pidnode's went.
hit_why() {
	local prof="" gc="" h k L="redirect, cache hit" id n
	if profiling; then
		gc=$(perf_share "$L" runtime.gcBgMarkWorker)
		h=$(perf_share "$L" 'pidnode/resolver.(*Server).Handler')
		k=$(perf_kernel "$L")
		prof=" In pidnode's profile (*$L*): the kernel (system calls, loopback TCP) $(r0 "$k") %, the handler (resolver.(*Server).Handler) $(r0 "$h") %, the collector (runtime.gcBgMarkWorker) $(r0 "$gc") %, the rest (fasthttp's connection code in user space) $(r0 "$(calc "100 - $k - $h - $gc")") %."
	fi
	local sp sn sm sys=""
	sp=$(perf_spr "$L") sn=$(perf_spr "nginx, like-for-like redirect") sm=$(perf_spr "fasthttp map, like-for-like redirect")
	if [[ -n $sp ]]; then
		sys=" System calls per request (perf stat, in the profile runs): pidnode $sp, nginx ${sn:-?}, the fasthttp map ${sm:-?}."
	fi
	# Against each like-for-like baseline that ran: ID, its keep_best NAME, its name.
	local b base name us usr ks
	for b in "hit_nginx:NGL:nginx" "hit_fasthttp:FML:the bare fasthttp map"; do
		IFS=: read -r id base name <<<"$b"
		us=${base}_US usr=${base}_USR ks=${base}_SYS
		[[ -n ${!us:-} ]] || continue
		why "$id" "server CPU per request in each one's best round: pidnode $(us_split HIT), $name $(us_split "$base"): pidnode $(sdiff "$HIT_USR" "${!usr}") µs in user space, $(sdiff "$HIT_SYS" "${!ks}") µs in the kernel. Rounds in req/server-CPU-s, in order: pidnode $(round_list HIT); $name $(round_list "$base").$sys$prof"
	done
	local tail="open loop at 50 % of each one's own like-for-like capacity: pidnode ${OL50:-?} ms, nginx ${NGL_OL:-?} ms, the bare fasthttp map ${FML_OL:-?} ms (the same fasthttp, without cache, statistics or collector); pidnode at 25 %: ${OL25:-?} ms."
	if [[ -n $gc ]]; then tail+=" The collector took $(r0 "$gc") % of pidnode's CPU in *$L*."; fi
	why hit_p99 "$tail"
	why hit_p99_nginx "$tail"
	for id in api:API noredirect:NOR negotiated:NEG linkset:LNK tombstone:TMB; do
		n=${id#*:}
		why "${id%%:*}" "server CPU per request in the best rounds: $(us_split "$n") against the redirect's $(us_split HIT). Rounds in req/server-CPU-s, in order: $(round_list "$n"); the redirect's $(round_list HIT)."
	done
}

# The Accept header of the negotiated-redirect scenario: the generator gives
# each record two representation variants among five media types.
NEG_ACCEPT="text/turtle, application/ld+json;q=0.9, application/pdf;q=0.8"

# ------------------------------------------------------------------- pidnode --
PD=$WORK/pidnode
HIT_CACHE=$((ZIPF_DISTINCT * 2 > 100000 ? ZIPF_DISTINCT * 2 : 100000))
MISS_CACHE=$((N / 100 > 100 ? N / 100 : 100))

# pidnode_start CACHE — start serve on free ports; sets PG, RES, ADM, DNSA, HDLA, READY_S.
# The per-key admin rate and DNS response-rate limiting are on by default;
# the suite measures capacity from one key and one source address, so both
# are off here (every other limit stays as it is by default).
pidnode_start() {
	local ready=$WORK/ready t0 t1 i
	rm -f "$ready"
	t0=$(date +%s.%N)
	start pidnode "$BIN/pidnode" serve --data "$PD" --resolver-addr 127.0.0.1:0 --admin-addr 127.0.0.1:0 \
		--dns-addr 127.0.0.1:0 --hdl-addr 127.0.0.1:0 --dns-zone "bench.test=$PREFIX" \
		--operator-key-file "$WORK/operator.key" --ready-file "$ready" --cache-entries "$1" --log-level warn \
		--admin-rate 0 --dns-rrl-rate 0 ${CACHE_BYTES:+--cache-bytes "$CACHE_BYTES"}
	PG=$STARTED_PG
	for i in $(seq 6000); do
		[[ -s $ready ]] && grep -q . "$ready" && break
		kill -0 "$PG" 2>/dev/null || break
		sleep 0.01
	done
	t1=$(date +%s.%N)
	if [[ ! -s $ready ]]; then
		log "pidnode did not become ready; log:"
		tail -20 "$WORK/pidnode.log" >&2
		return 1
	fi
	sleep 0.05 # the ready file is written line by line
	READY_S=$(calc "$t1 - $t0")
	RES=$(awk '$1=="resolver"{print $2}' "$ready")
	ADM=$(awk '$1=="admin"{print $2}' "$ready")
	DNSA=$(awk '$1=="dns"{print $2}' "$ready")
	HDLA=$(awk '$1=="hdl"{print $2}' "$ready")
}

# cache_mem ANON_KB — what the running node's cache holds against its budget
# (from /metrics), and RssAnon against the budget.
cache_mem() {
	local m bytes budget entries
	m=$(curl -s "http://$ADM/metrics" 2>/dev/null || true)
	bytes=$(awk '$1=="pidnode_cache_bytes"{print $2}' <<<"$m")
	budget=$(awk '$1=="pidnode_cache_budget_bytes"{print $2}' <<<"$m")
	entries=$(awk '$1=="pidnode_cache_entries"{print $2}' <<<"$m")
	if [[ -z $budget ]]; then
		echo "cache budget not reported"
		return
	fi
	echo "cache $(r1 "$(calc "$bytes/1048576")") MiB charged of a $(r1 "$(calc "$budget/1048576")") MiB budget, $entries entries; RssAnon $(r1 "$(calc "$1/1024")") MiB, $(r0 "$(calc "100 * $1 * 1024 / $budget")") % of the budget"
}

# metric NAME — one unlabelled figure from the running node's /metrics.
metric() { curl -s "http://$ADM/metrics" 2>/dev/null | awk -v n="$1" '$1==n{v=$2} END{print v+0}'; }

# mem_row SCENARIO BASE_KB NOTE — after mem_peak: one line of the report's
# memory table: the node's budget, what the cache holds, RssAnon at ready
# (BASE_KB) and the peaks against them, and the soft memory limit.
mem_row() {
	echo "$1	$(metric pidnode_cache_budget_bytes)	$(metric pidnode_cache_bytes)	$(metric pidnode_cache_entries)	$2	$PEAK_ANON	$PEAK_RSS	$(metric pidnode_go_memory_limit_bytes)	$(metric pidnode_stats_table_bytes)	$3" >>"$MEMORY"
	log "memory, $1: RssAnon $2 kB at ready, peak $PEAK_ANON kB; VmRSS peak $PEAK_RSS kB"
}

# lc_node INTERVAL — serve the link checker's database (LPD) with
# --linkcheck-interval INTERVAL, loopback allowed, no host delay; sets LPG, LADM.
lc_node() {
	local ready=$WORK/lc-ready i
	rm -f "$ready"
	start pidnode-lc "$BIN/pidnode" serve --data "$LPD" --resolver-addr 127.0.0.1:0 --admin-addr 127.0.0.1:0 \
		--dns-addr "" --hdl-addr "" --operator-key-file "$WORK/operator.key" --ready-file "$ready" --log-level warn \
		--linkcheck-interval "$1" --outbound-allow 127.0.0.0/8 --linkcheck-host-delay 0 --linkcheck-concurrency 8
	LPG=$STARTED_PG
	for i in $(seq 6000); do
		[[ -s $ready ]] && grep -q admin "$ready" && break
		kill -0 "$LPG" 2>/dev/null || break
		sleep 0.01
	done
	LADM=$(awk '$1=="admin"{print $2}' "$ready" 2>/dev/null)
}

# lc_checks — pidnode_linkcheck_checks_total of the link checker's node,
# summed over its results, and the part that is not ok, from one scrape.
lc_checks() {
	curl -s "http://$LADM/metrics" 2>/dev/null | awk 'index($1, "pidnode_linkcheck_checks_total{") == 1 {
		s += $2; if (!index($1, "\"ok\"")) b += $2 } END { print s + 0, b + 0 }'
}

# linkcheck_bench — the link checker at N identifiers (docs/product.md §4.4):
# the dataset with its URLs (a target and two variants per record) rewritten
# to linktarget's LC_HOSTS loopback hosts and imported into a database of its
# own; RssAnon of the node LC_SETTLE s after ready without the checker, then
# with the checker at about LC_RATE URLs/s (--linkcheck-interval 3N/LC_RATE
# s) for LC_DUR s after a 3 s start: CPU per check (the node's CPU ticks over
# the checks pidnode_linkcheck_checks_total counted; results written with
# fsync included) and the RssAnon peak over the base.
linkcheck_bench() {
	local port tpg base c0 c1 n0 n1 bad secs interval i
	LPD=$WORK/pidnode-lc
	rm -f "$WORK/linktarget.port"
	start linktarget "${ON_LOAD[@]}" "$BIN/linktarget" -hosts "$LC_HOSTS" -ready-file "$WORK/linktarget.port"
	tpg=$STARTED_PG
	for i in $(seq 500); do
		[[ -s $WORK/linktarget.port ]] && break
		sleep 0.01
	done
	port=$(cat "$WORK/linktarget.port" 2>/dev/null || true)
	if [[ -z $port ]]; then
		stop "$tpg"
		na linkcheck_cpu "link checker CPU per check" "µs/check" "bench/cmd/linktarget" "linktarget did not start (see its log)"
		return 0
	fi
	log "link checker: import with URLs on $LC_HOSTS loopback hosts (port $port)"
	rm -rf "$LPD"
	awk -v port="$port" -v hosts="$LC_HOSTS" '{ h = "http://127.0.1." (NR % hosts + 1) ":" port "/";
		gsub(/https:\/\/landing\.example\.org\//, h); gsub(/https:\/\/data\.example\.org\//, h); print }' "$DATA/records.jsonl" |
		"${ON_SERVER[@]}" "$BIN/pidnode" import --data "$LPD" - >>"$LOG" 2>&1
	lc_node 0
	sleep "$LC_SETTLE"
	base=$(rss_kb "$LPG" RssAnon)
	stop "$LPG"
	interval=$((3 * N / LC_RATE))
	((interval > 0)) || interval=1
	lc_node "${interval}s"
	sleep 3
	mem_watch "$LPG"
	c0=$(cpu_ticks "$LPG")
	read -r n0 bad < <(lc_checks)
	sleep "$LC_DUR"
	c1=$(cpu_ticks "$LPG")
	read -r n1 bad < <(lc_checks)
	mem_peak
	stop "$LPG"
	stop "$tpg"
	secs=$(calc "($c1 - $c0) / $CLK_TCK")
	if ((n1 - n0 <= 0)); then
		na linkcheck_cpu "link checker CPU per check" "µs/check" "pidnode serve --linkcheck-interval ${interval}s" "no checks were counted (see the log)"
		return 0
	fi
	log "link checker: $((n1 - n0)) checks in ${LC_DUR}s, server CPU ${secs}s, $bad not ok; RssAnon base $base kB, peak $PEAK_ANON kB"
	row linkcheck_cpu "link checker: CPU per check at $N identifiers (HEAD to loopback, result written)" "µs/check" \
		"$(calc "$secs * 1e6 / ($n1 - $n0)")" - - none - \
		"pidnode serve --linkcheck-interval ${interval}s --outbound-allow 127.0.0.0/8 --linkcheck-host-delay 0 (bench/cmd/linktarget, $LC_HOSTS hosts)" \
		"$((n1 - n0)) checks in ${LC_DUR} s ($(r0 "$(calc "($n1 - $n0) / $LC_DUR")")/s), $(r1 "$(calc "100 * $secs / $LC_DUR")") % of a CPU; $bad not ok; at 7 days per URL (3 URLs per record: $(r1 "$(calc "3 * $N / 604800")") checks/s) that is $(calc "100 * $secs / ($n1 - $n0) * 3 * $N / 604800") % of a CPU"
	row linkcheck_mem "link checker: RssAnon with the checker running over the same node without it" "MiB" \
		"$(calc "($PEAK_ANON - $base) / 1024")" - - none - "/proc/PID/status RssAnon: peak during the run minus ${LC_SETTLE} s after ready with --linkcheck-interval 0" \
		"base $(r1 "$(calc "$base / 1024")") MiB, peak $(r1 "$(calc "$PEAK_ANON / 1024")") MiB"
	rm -rf "$LPD"
}

SAMPLE=$(head -1 "$ZIPF")
HIT_RPC=0
HIT_RPS=0
if ((HAVE_PIDNODE)); then
	rm -rf "$PD"
	log "import"
	# Profiled while measured (perf samples at 997 Hz, well under 1 % of the CPU).
	IMPORT=("${ON_SERVER[@]}" "$BIN/pidnode" import --data "$PD" "$DATA/records.jsonl")
	if profiling; then IMPORT=(perf record -F 997 -g -o "$(perf_data import)" -- "${IMPORT[@]}"); fi
	t0=$(date +%s.%N)
	"${IMPORT[@]}" >>"$LOG" 2>&1
	t1=$(date +%s.%N)
	if profiling; then profile_section import; fi
	IMP_S=$(calc "$t1 - $t0")
	DB_BYTES=$(stat -c %s "$PD/pidnode.db")
	row import "import rate (pidnode import, one sync at the end)" "records/s" "$(calc "$N / $IMP_S")" - - min 200000 \
		"pidnode import --data DIR records.jsonl" "$(printf %.1f "$IMP_S") s for $N records; database $(r0 "$(calc "$DB_BYTES/1e6")") MB ($(r0 "$(calc "$DB_BYTES/$N")") B/record)"
	log "import: $N records in ${IMP_S}s"
	if profiling; then
		why import "$(r1 "$IMP_S") s on one pinned core for $(r0 "$(calc "$(stat -c %s "$DATA/records.jsonl") / 1e6")") MB of JSON Lines in and $(r0 "$(calc "$DB_BYTES / 1e6")") MB of database out. In its profile (*import*): the kernel $(r0 "$(perf_kernel import)") %; decoding the JSON and encoding the records (store.(*parseBatch).decode) $(r0 "$(perf_share import 'pidnode/store.(*parseBatch).decode')") %; bbolt's commits (bbolt.(*Tx).Commit) $(r0 "$(perf_share import 'go.etcd.io/bbolt.(*Tx).Commit')") %; writing the pages into the page cache (syscall.pwrite) $(r0 "$(perf_share import syscall.pwrite)") %; the records' Puts (bbolt.(*Bucket).Put) $(r0 "$(perf_share import 'go.etcd.io/bbolt.(*Bucket).Put')") %; page faults (fresh memory, the file's mapping) $(r0 "$(perf_share import asm_exc_page_fault)") %."
	fi
	# Tombstones: 1,000 OBSOLETED records of their own namespace, imported
	# after the measured import, so the 410 page has a scenario of its own.
	"$BIN/gen" -tombstones 1000 -prefix "$PREFIX" -ns TMB -seed "$SEED" -requests "$(wc -l <"$ZIPF")" -out "$WORK/tomb" >>"$LOG" 2>&1
	"$BIN/pidnode" import --data "$PD" "$WORK/tomb/tombstones.jsonl" >>"$LOG" 2>&1
	TOMB=$WORK/tomb/tombstone.paths

	# Start-up: the database file was just written, so it is in the page cache.
	pidnode_start "$HIT_CACHE"
	row startup "start-up to ready file with $N records" "s" "$READY_S" - - max 1 \
		"pidnode serve --data DIR --ready-file F … (time until F appears)" "target is for 10M records; page cache warm"
	RSS0=$(rss_kb "$PG" VmRSS)
	ANON0=$(rss_kb "$PG" RssAnon)
	row rss "RSS at ready with $N records (empty cache)" "MB" "$(calc "$RSS0/1024")" - - none - \
		"/proc/PID/status VmRSS" "RssAnon $(r1 "$(calc "$ANON0/1024")") MB; $(r1 "$(calc "$RSS0/1024/($N/1e6)")") MB VmRSS per million records"
	log "ready in ${READY_S}s: resolver $RES admin $ADM dns $DNSA hdl $HDLA; RSS ${RSS0} kB"
	log "sample: $(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "http://$RES$SAMPLE")"

	# Warm the cache with every path of the popular stream once (all of its
	# distinct handles fit in the cache), then measure what the cache holds.
	mem_watch "$PG"
	"${ON_LOAD[@]}" "$BIN/openloop" -once -addr "$RES" -paths "$ZIPF" -conns "$CONNS" >"$WORK/warm.json" 2>>"$LOG" || true
	log "warm-up: $(cat "$WORK/warm.json")"
	ANON1=$(rss_kb "$PG" RssAnon)
	row rss_entry "heap per cached entry (RssAnon growth / $ZIPF_DISTINCT entries)" "bytes" \
		"$(calc "($ANON1 - $ANON0) * 1024 / $ZIPF_DISTINCT")" - - none - "/proc/PID/status RssAnon after a warm-up pass" \
		"includes Go GC headroom (bounded by the soft memory limit) and connection buffers; $(cache_mem "$ANON1")"

	lfl_render
	nginx_up
	baseline_up
	hit_rounds
	# (profile runs wrk too: it comes after the figures above are saved)
	profile "redirect, cache hit" "$PG" "$RES" "$ZIPF" "" ""
	profile "/api/handles, cache hit" "$PG" "$RES" "$ZIPF" /api/handles ""
	profile "?noredirect, cache hit" "$PG" "$RES" "$ZIPF" "" "?noredirect"
	profile "tombstone" "$PG" "$RES" "$TOMB" "" ""
	profile "negotiated redirect" "$PG" "$RES" "$ZIPF" "" "" "$NEG_ACCEPT"
	hit_why
	mem_peak
	mem_row "Zipf stream, cache hits (warm-up, redirect, /api/handles, ?noredirect; --cache-entries $HIT_CACHE)" "$ANON0" \
		"$ZIPF_DISTINCT distinct handles in the stream"

	# Native protocol.
	if [[ -n ${HDLA:-} ]]; then
		for proto in udp tcp; do
			t0=$(cpu_ticks "$PG")
			"${ON_LOAD[@]}" "$BIN/hdlload" -addr "$HDLA" -paths "$ZIPF" -clients 32 -duration "${DUR}s" -protos "$proto" \
				>"$WORK/hdl-$proto.json" 2>>"$LOG" || true
			t1=$(cpu_ticks "$PG")
			q=$(jq_get "$WORK/hdl-$proto.json" .qps)
			secs=$(calc "($t1 - $t0) / $CLK_TCK")
			qpc=$(calc "($secs > 0) ? $q * $DUR / $secs : 0")
			p99=$(jq_get "$WORK/hdl-$proto.json" .latency_ms.p99)
			row "hdl_$proto" "native Handle protocol over ${proto^^} (OC_RESOLUTION)" "queries/server-CPU-s" "$qpc" - - none - \
				"hdlload -addr ADDR -paths zipf.paths -clients 32 -duration ${DUR}s -protos $proto" \
				"$(r0 "$q") queries/s, p99 $p99 ms (closed loop; one request per $([[ $proto == tcp ]] && echo connection || echo datagram exchange))"
			chart "native ${proto^^}" pidnode "$qpc" "$q" "$p99"
			log "hdl $proto: $q q/s, $qpc q/server-CPU-s"
		done
	else
		na hdl "native Handle protocol UDP/TCP" "queries/s" "hdlload" "no hdl listener in the ready file"
	fi

	# Admin: reads while writing, then creates per second.
	mem_watch "$PG"
	if [[ -n ${ADM:-} ]] && curl -s -o /dev/null "http://$ADM/healthz"; then
		"${ON_LOAD[@]}" "$BIN/admincreate" -addr "$ADM" -operator-key-file "$WORK/operator.key" -clients 16 \
			-duration "$((DUR + 2))s" >"$WORK/admin-mixed.json" 2>>"$LOG" &
		AC=$!
		sleep 1
		wrk_run mixed "$PG" "$RES" "$ZIPF" "" ""
		wait "$AC" || true
		w=$(jq_get "$WORK/admin-mixed.json" .creates_per_s)
		# The reads at the read-only CPU per request, and what that leaves.
		MX_READS=$(calc "$RPC * $SRV_SECS")
		MX_RD=$(calc "($HIT_RPC > 0) ? $MX_READS / $HIT_RPC : 0")
		MX_REST=$(calc "$SRV_SECS - $MX_RD")
		MX_CREATES=$(calc "$w * $DUR")
		MX_WHY="in the ${DUR} s run the server used $(r1 "$SRV_SECS") s of CPU. Its $(r0 "$MX_READS") reads at the read-only CPU per request ($(r1 "${HIT_US:-0}") µs) account for $(r1 "$MX_RD") s; the other $(r1 "$MX_REST") s ($(r0 "$(calc "($SRV_SECS > 0) ? 100 * $MX_REST / $SRV_SECS : 0")") %) went to the ~$(r0 "$MX_CREATES") creates alongside ($(r0 "$(calc "($MX_CREATES > 0) ? $MX_REST * 1e6 / $MX_CREATES : 0")") µs each) or to reads costing more while writes run."
		row mixed "redirects while the admin API takes writes (16 writers)" "req/server-CPU-s" "$RPC" "$HIT_RPC" \
			"pidnode redirect, no writes" ratio_min 0.8 "$CMD + admincreate -clients 16" "$(r0 "$RPS") req/s during $(r0 "$w") creates/s; p99 $P99 ms (closed loop)"
		if profiling; then
			"${ON_LOAD[@]}" "$BIN/admincreate" -addr "$ADM" -operator-key-file "$WORK/operator.key" -clients 16 \
				-duration "$((PROF_DUR + 2))s" >/dev/null 2>>"$LOG" &
			AC=$!
			sleep 1
			profile "redirects while 16 clients create" "$PG" "$RES" "$ZIPF" "" ""
			wait "$AC" || true
			L="redirects while 16 clients create"
			MX_WHY+=" In *$L*: the admin API's creates (admin.(*Server).create) $(r0 "$(perf_share "$L" 'pidnode/admin.(*Server).create')") %; bbolt's commits (bbolt.(*Tx).Commit) $(r0 "$(perf_share "$L" 'go.etcd.io/bbolt.(*Tx).Commit')") %; fdatasync (syscall.Fdatasync) $(r0 "$(perf_share "$L" syscall.Fdatasync)") %; the resolver's handler (resolver.(*Server).Handler) $(r0 "$(perf_share "$L" 'pidnode/resolver.(*Server).Handler')") %; the kernel $(r0 "$(perf_kernel "$L")") %."
		fi
		why mixed "$MX_WHY"
		"${ON_LOAD[@]}" "$BIN/admincreate" -addr "$ADM" -operator-key-file "$WORK/operator.key" -clients 1,16,64 \
			-duration "${DUR}s" >"$WORK/admin.json" 2>>"$LOG" || true
		while read -r line; do
			[[ -z $line ]] && continue
			echo "$line" >"$WORK/admin-one.json"
			c=$(jq_get "$WORK/admin-one.json" .clients)
			r=$(jq_get "$WORK/admin-one.json" .creates_per_s)
			p99=$(jq_get "$WORK/admin-one.json" .latency_ms.p99)
			kind=none target=-
			[[ $c == 64 ]] && kind=min target=5000
			row "admin_$c" "admin creates, $c client(s), fsync on" "creates/s" "$r" - - "$kind" "$target" \
				"admincreate -clients $c -duration ${DUR}s" "p99 $p99 ms; statuses $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$WORK/admin-one.json" 2>/dev/null)"
			chart "admin create ×$c" pidnode "-" "$r" "$p99"
		done <"$WORK/admin.json"
		log "admin: $(tr '\n' ' ' <"$WORK/admin.json")"
		profile_load "admin creates, 64 clients" "$PG" "$BIN/admincreate" -addr "$ADM" \
			-operator-key-file "$WORK/operator.key" -clients 64 -duration "${PROF_DUR}s"
	else
		na admin "admin creates per second (1/16/64 clients)" "creates/s" "admincreate" "no admin listener"
	fi
	mem_peak
	mem_row "redirects while the admin API takes writes, then admin creates (same node)" "$ANON0" \
		"every create invalidates its cache entries; audit log and URL index writes"
	stop "$PG"

	# Cache-miss path: uniform over N, cache of 1 % of N.
	# The database file is read into the page cache first: the target is the
	# cache miss of a server whose memory holds its database, and by now most
	# of the records have not been read since the import. The development
	# VM's host pages out file pages untouched for a minute (DAMON pageout):
	# uniform misses over a 1M database imported well before measured 0.6–0.7
	# disk reads (major faults) per request there, and a third of the rate.
	# The rounds count major faults per request, so a database that does not
	# stay in memory shows.
	MISS_WARM=$(
		t0=$(date +%s.%N)
		cat "$PD/pidnode.db" >/dev/null
		calc "$(date +%s.%N) - $t0"
	)
	log "miss: database file read into the page cache in $MISS_WARM s"
	pidnode_start "$MISS_CACHE"
	ANONB=$(rss_kb "$PG" RssAnon)
	mem_watch "$PG"
	MISS_RPC=0 MISS_ALL="" MISS_ROUNDS=0 MISS_MINFS=""
	while more_rounds "$MISS_ROUNDS" MISS; do
		r=$((MISS_ROUNDS + 1))
		wrk_run "miss-r$r" "$PG" "$RES" "$UNIFORM" "" ""
		keep_best MISS
		MISS_MINFS+="${MISS_MINFS:+, }$(printf %.3f "$MINF")"
		MISS_ROUNDS=$r
	done
	ol_run miss-50 "$RES" "$UNIFORM" "" "" "$(pct_rate "$MISS_RPS" 50)"
	chart "redirect (miss)" pidnode "$MISS_RPC" "$MISS_RPS" "$(chart_p99)"
	row miss "cache-miss redirect (uniform, cache = 1 % of N) vs cache hit" "req/server-CPU-s" "$MISS_RPC" "$HIT_RPC" \
		"pidnode redirect (hit)" ratio_min 0.5 "$MISS_CMD --cache-entries $MISS_CACHE" "best of $MISS_ROUNDS rounds; $(r0 "$MISS_RPS") req/s; p99 at 50 %: $OL_P99 ms$OL_FLAG; bad $MISS_BAD; database file read into the page cache before ($(r1 "$MISS_WARM") s), $(printf %.3f "${MISS_MAJ:-0}") major page faults (disk reads) per request"
	profile "redirect, cache miss" "$PG" "$RES" "$UNIFORM" "" ""
	MISS_PROF=""
	if profiling; then
		L="redirect, cache miss"
		MISS_PROF=" In *$L*, of a miss's CPU: the kernel $(r0 "$(perf_kernel "$L")") %; reading the record (store.(*DB).Get: bbolt's read transaction, B+tree search, decoding) $(share_us "$L" 'pidnode/store.(*DB).Get' "$MISS_US"); the Link lines and representation variants (resolver.(*view).buildExt) $(share_us "$L" 'pidnode/resolver.(*view).buildExt' "$MISS_US"); the cache entry and its redirect (cache.(*Cache).build) $(share_us "$L" 'pidnode/cache.(*Cache).build' "$MISS_US"); the collector (runtime.gcBgMarkWorker) $(share_us "$L" runtime.gcBgMarkWorker "$MISS_US"). The kernel's sending of the same bytes (tcp_sendmsg, with the loopback delivery and the peer's wake-up): $(share_us "$L" tcp_sendmsg "$MISS_US") on a miss against $(share_us "redirect, cache hit" tcp_sendmsg "${HIT_US:-0}") on a hit; system calls per request $(perf_spr "$L") against $(perf_spr "redirect, cache hit")."
	fi
	why miss "server CPU per request in the best rounds: a miss $(us_split MISS), a hit $(us_split HIT): a miss adds $(sdiff "${MISS_US:-0}" "${HIT_US:-0}") µs, $(sdiff "${MISS_USR:-0}" "${HIT_USR:-0}") of them in user space; $(printf %.3f "${MISS_MAJ:-0}") major page faults (disk reads) per miss. Rounds in req/server-CPU-s, in order: misses $(round_list MISS); the redirect (hit) $(round_list HIT). Minor page faults per miss in those rounds (pages already in memory touched for the first time by the server, such as the database file's mapping, or fresh memory): $MISS_MINFS.$MISS_PROF"
	mem_peak
	mem_row "uniform misses, redirect (--cache-entries $MISS_CACHE)" "$ANONB" "capacity rounds, open loop and profile run"
	ANONM=$(rss_kb "$PG" RssAnon)
	row rss_miss "RssAnon after the miss run (cache of $MISS_CACHE entries)" "MB" "$(calc "$ANONM/1024")" - - none - \
		"/proc/PID/status RssAnon" "compare with the hit server: RSS follows the cache size, not N; VmRSS $(r1 "$(calc "$(rss_kb "$PG" VmRSS)/1024")") MB; $(cache_mem "$ANONM")"
	stop "$PG"

	# Memory against the budget: uniform misses over all three HTTP routes at
	# once, the cache bounded by bytes alone, so that every entry builds its
	# views and the cache, the statistics table (every identifier new) and the
	# collector's headroom are all at their largest.
	CACHE_BYTES=$MEM_BYTES pidnode_start 0
	ANONB=$(rss_kb "$PG" RssAnon)
	mem_watch "$PG"
	MEM_WRK=()
	for v in "|" "/api/handles|" "|?noredirect"; do
		BENCH_PATHS=$UNIFORM "${ON_LOAD[@]}" wrk -t1 -c"$(((CONNS + 2) / 3))" -d"${MEM_DUR}s" --timeout 5s \
			-s "$ROOT/bench/wrk/stream.lua" "http://$RES" -- "${v%%|*}" "${v##*|}" >"$WORK/wrk-mem-${#MEM_WRK[@]}.txt" 2>&1 &
		MEM_WRK+=($!)
	done
	wait "${MEM_WRK[@]}" || true
	mem_peak
	MEM_REQS=$(awk '/requests in/{s+=$1} END{print s+0}' "$WORK"/wrk-mem-*.txt)
	MEM_BUDGET=$(metric pidnode_cache_budget_bytes)
	row mem_budget "RssAnon growth over the base, uniform misses over redirect, /api/handles and ?noredirect (--cache-bytes $MEM_BYTES)" MiB \
		"$(calc "($PEAK_ANON - $ANONB) / 1024")" - - max "$(calc "$MEM_BUDGET / 1048576")" \
		"3× wrk -c$(((CONNS + 2) / 3)) -d${MEM_DUR}s on uniform.paths (one per route); /proc/PID/status RssAnon every 0.1 s" \
		"base (RssAnon at ready) $(r1 "$(calc "$ANONB/1024")") MiB, peak $(r1 "$(calc "$PEAK_ANON/1024")") MiB; soft memory limit $(r1 "$(calc "$(metric pidnode_go_memory_limit_bytes)/1048576")") MiB; target: within the budget (the rest is the collector's headroom, the statistics table and buffers)"
	mem_row "uniform misses over redirect, /api/handles and ?noredirect at once (--cache-bytes $MEM_BYTES, no entry cap)" "$ANONB" \
		"$MEM_REQS requests in ${MEM_DUR} s; statistics table bound $(r1 "$(calc "$(metric pidnode_stats_table_limit_bytes)/1048576")") MiB, $(metric pidnode_stats_early_flushes_total) early flushes, $(metric pidnode_stats_dropped_total) counts dropped"
	stop "$PG"

	# Hit ratio by budget: the Zipf stream against caches of HIT_BUDGETS % of
	# the database file, bounded by bytes alone. One pass of the stream warms
	# the cache; the ratio is of the lookups of the closed-loop run after it
	# (pidnode_cache_{hits,misses}_total).
	for pct in $HIT_BUDGETS; do
		HB=$(awk -v d="$DB_BYTES" -v p="$pct" 'BEGIN { b = int(d * p / 100); if (b < 1048576) b = 1048576; printf "%d", b }')
		CACHE_BYTES=$HB pidnode_start 0
		ANONB=$(rss_kb "$PG" RssAnon)
		mem_watch "$PG"
		"${ON_LOAD[@]}" "$BIN/openloop" -once -addr "$RES" -paths "$ZIPF" -conns "$CONNS" >/dev/null 2>>"$LOG" || true
		h0=$(metric pidnode_cache_hits_total) m0=$(metric pidnode_cache_misses_total)
		wrk_run "hit-ratio-$pct" "$PG" "$RES" "$ZIPF" "" ""
		h1=$(metric pidnode_cache_hits_total) m1=$(metric pidnode_cache_misses_total)
		mem_peak
		echo "$HB	$pct	$(metric pidnode_cache_entries)	$(metric pidnode_cache_bytes)	$((h1 - h0))	$((m1 - m0))	$ANONB	$PEAK_ANON	$PEAK_RSS	$RPS" >>"$HITRATIO"
		log "hit ratio at $pct % of the database ($HB bytes): $((h1 - h0)) hits, $((m1 - m0)) misses; RssAnon peak $PEAK_ANON kB"
		stop "$PG"
	done

	# DNS: the DNS helper's suite (bench/dns/run.sh: dnsperf against pidnode and
	# a bare miekg/dns map server, its own names), run with no pidnode of ours up.
	if [[ -x $ROOT/bench/dns/run.sh ]]; then
		DNS_N=$((N < DNS_MAX_N ? N : DNS_MAX_N))
		# ROUNDS interleaved rounds, like the HTTP comparisons: one round of
		# each server measured 1.14× and 1.33-1.43× on the same code.
		log "DNS: bench/dns/run.sh with N=$DNS_N SECS=$DUR ROUNDS=$ROUNDS"
		if N=$DNS_N SECS=$DUR ROUNDS=$ROUNDS WARM=pass "$ROOT/bench/dns/run.sh" >"$WORK/dns.out" 2>>"$LOG"; then
			cat "$WORK/dns.out" >>"$LOG"
			# Lines: "pidnode  at ADDR: Q qps …[, server CPU U us/query]" and
			# the same for "baseline"; CPU per query, when given, becomes
			# queries per server CPU-second like every other row.
			dnsq() { sed -n "s/^$1 .*: \([0-9.]*\) qps.*/\1/p" "$WORK/dns.out" | head -1; }
			dnsu() { sed -n "s/^$1 .*server CPU \([0-9.]*\) us\/query.*/\1/p" "$WORK/dns.out" | head -1; }
			P=$(dnsq pidnode) B=$(dnsq baseline) PU=$(dnsu pidnode) BU=$(dnsu baseline)
			H=$(head -1 "$WORK/dns.out" | sed 's/^DNS benchmark: //')
			if [[ -n $PU && -n $BU ]]; then
				PC=$(calc "1e6 / $PU") BC=$(calc "1e6 / $BU")
				row dns "DNS TXT queries vs bare miekg/dns map" "queries/server-CPU-s" "$PC" "$BC" "miekg/dns map" ratio_min 0.9 \
					"bench/dns/run.sh ($H)" "$(r0 "${P:-0}") vs $(r0 "${B:-0}") queries/s; its own $DNS_N names, its own pinning and CPU accounting"
				chart "DNS TXT" pidnode "$PC" "${P:-0}" 0
				chart "DNS TXT" "miekg/dns map" "$BC" "${B:-0}" 0
			else
				row dns "DNS TXT queries vs bare miekg/dns map" "queries/s" "${P:-n/a}" "${B:-}" "miekg/dns map" ratio_min 0.9 \
					"bench/dns/run.sh ($H)" "no CPU accounting in its output; its own $DNS_N names"
				chart "DNS TXT" pidnode "-" "${P:-0}" 0
				chart "DNS TXT" "miekg/dns map" "-" "${B:-0}" 0
			fi
		else
			na dns "DNS queries per second" "queries/s" "bench/dns/run.sh" "bench/dns/run.sh failed (see the log)"
		fi
	else
		na dns "DNS vs bare miekg/dns map" "queries/s" "bench/dns/run.sh" "bench/dns/run.sh not present"
	fi

	linkcheck_bench
else
	for s in import startup hit api noredirect negotiated linkset tombstone miss admin hdl dns; do
		na "$s" "$s" - "-" "cmd/pidnode does not build"
	done
	PG=""
	nginx_up
	baseline_up
	hit_rounds
fi

# -------------------------------------------------------------------- report --
mkdir -p "$OUT"
# make bench (N = 1M) writes <date>-<host>.md; any other N adds -n<N>, so
# that make bench-full on the same day does not overwrite it.
REPORT=$OUT/$STAMP-$HOST$([[ $N == 1000000 ]] || echo "-n$N").md
"$BIN/report" -rows "$ROWS" -chart "$CHART" -out "$REPORT" -profile "$PROFILE_MD" -responses "$RESPONSES_MD" -why "$WHY" \
	-memory "$MEMORY" -hitratio "$HITRATIO" -data-bytes "${DB_BYTES:-0}" \
	-title "pidnode benchmarks, N = $N, $STAMP, $HOST" \
	-setup "CPU time on the server CPU not charged to the server (other processes, interrupts): $(r0 "$(calc "($RUN_TICKS > 0) ? 100 * $OTHER_TICKS / $RUN_TICKS : 0")") % of the wrk runs' wall time (0 on a quiet machine; wall-clock rates and tails suffer from it, per-CPU-second figures much less). The cache-hit comparison ran ${HIT_ROUNDS:-0} interleaved rounds (more than $ROUNDS when the rounds of one server lay more than $SPREAD_MAX % apart); its rounds per server CPU-second lay $(spread HIT) % apart for pidnode's redirect, $(spread NGL) % for nginx like-for-like and $(spread FML) % for the fasthttp map like-for-like (each row takes its best round); the cache-miss rounds, extended alike, ran ${MISS_ROUNDS:-0} and lay $(spread MISS) % apart. $(nproc) CPUs ($(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)), $(free -g | awk '/Mem:/{print $2}') GiB; $PINNING; ${DUR} s per capacity run, ${OL_DUR} s per open-loop run; the whole suite took $(r1 "$(calc "$SECONDS / 60")") min; wrk $CONNS connections, open loop $OL_CONNS, request streams of $REQUESTS paths (Zipf s=1.1: $ZIPF_DISTINCT distinct); load average at start $LOAD0, at the end $(cut -d' ' -f1-3 /proc/loadavg); go $(go env GOVERSION), $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2), nginx $("$NGINX" -v 2>&1 | sed 's/.*nginx\///'); pidnode commit $COMMIT"
cp "$LOG" "${REPORT%.md}.log"
log "wrote $REPORT"
exit 0
}
