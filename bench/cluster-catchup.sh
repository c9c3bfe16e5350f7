#!/usr/bin/env bash
# make bench-cluster, second part: a cluster prefix of CATCHUP_N pid4cat-sized
# records (bench/cmd/gen's dataset, `pidnode import` into a single node's data
# directory, `pidnode cluster seed` into a 3-member etcd, fsync on), then
#   1. catch-up: a fresh node on an empty data directory, timed from its start
#      to its ready file (it loads the snapshot before it binds anything to
#      serve), with its RssAnon sampled every 50 ms;
#   2. etcd's file per record (DbSize, the figure etcd's quota bounds, and
#      DbSizeInUse, from bench/cmd/etcdsize) as seeded, after a defragmentation
#      and, unless TOUCH=0, after one update of every key (history kept) and
#      after compacting and defragmenting again; the records at the 8 GiB quota;
#   3. resolver redirects per server CPU-second, the caught-up cluster node
#      against a single node on the imported database (same records, same
#      flags, both up at once), ROUNDS interleaved wrk rounds, best of each.
# The report goes to bench/results/cluster-catchup-DATE.md (-nN added unless
# N = 1M).
#
#   CATCHUP_N=100000 DUR=5 bench/cluster-catchup.sh     # quick; BIN must hold the binaries
#
# Settings (environment): BIN (the binaries: pidnode, etcd, etcdsize, gen,
# openloop; make bench-cluster builds them), CATCHUP_N (records, 100000;
# 1000000 for the committed report: ~10 min on 2 cores, ~15 GB of scratch),
# DUR (seconds per wrk run, 10), ROUNDS (3), CONNS (wrk connections, 64),
# TOUCH (1: the update-every-key stage), SEED, REQUESTS, BENCH_DATA (dataset
# cache shared with make bench's suite, bench/data), SERVER_CPU/LOAD_CPU (0/1).
# pidnode processes (the seed, both nodes) run on SERVER_CPU, etcd's members
# and wrk on LOAD_CPU (taskset), each in its own process group (setsid) that
# the EXIT trap kills. Loopback only.
set -euo pipefail
# The generated URLs are public names: this benchmark checks no links
# (docs/product.md §4.4).
export PIDNODE_LINKCHECK_INTERVAL=0
# One compound command: bash parses it whole before running it.
{

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BIN=$(cd "${BIN:-bin}" && pwd)
N=${CATCHUP_N:-100000}
DUR=${DUR:-10}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-64}
TOUCH=${TOUCH:-1}
SEED=${SEED:-1}
REQUESTS=${REQUESTS:-200000}
BENCH_DATA=${BENCH_DATA:-$ROOT/bench/data}
PREFIX=21.T12345
NS=BNC
QUOTA=$((8 << 30))
CLK_TCK=$(getconf CLK_TCK)
STAMP=$(date -u +%Y-%m-%d)
OUT=bench/results/cluster-catchup-$STAMP$([[ $N == 1000000 ]] || echo "-n$N").md
WORK=$(mktemp -d /tmp/pidnode-bench-catchup-XXXXXX)
LOG=$WORK/catchup.log
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
# PIDNODE_COMMIT: what BIN/pidnode was built from, when not the work tree.
COMMIT=${PIDNODE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo ?)}
if [[ -z ${PIDNODE_COMMIT:-} && -n $(git status --porcelain -- cmd cluster registry store cache resolver 2>/dev/null) ]]; then COMMIT="$COMMIT+local changes"; fi

GROUPS_STARTED=()
cleanup() {
	local rc=$? pg
	for pg in "${GROUPS_STARTED[@]}"; do kill -TERM -- "-$pg" 2>/dev/null || true; done
	for pg in "${GROUPS_STARTED[@]}"; do
		for _ in $(seq 100); do kill -0 "$pg" 2>/dev/null || break; sleep 0.1; done
		kill -KILL -- "-$pg" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	if [[ ${KEEP:-0} == 1 ]]; then echo "catch-up bench: scratch kept in $WORK" >&2; else rm -rf "$WORK"; fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if (($(nproc) >= 2)); then
	SERVER_CPU=${SERVER_CPU:-0}
	LOAD_CPU=${LOAD_CPU:-1}
	ON_SERVER=(taskset -c "$SERVER_CPU")
	ON_LOAD=(taskset -c "$LOAD_CPU")
	PINNING="pidnode (seed and nodes) on CPU $SERVER_CPU; etcd's three members and wrk on CPU $LOAD_CPU (taskset)"
else
	ON_SERVER=() ON_LOAD=()
	PINNING="not pinned (1 CPU)"
fi

log() { echo "catch-up bench: [+${SECONDS}s] $*" | tee -a "$LOG" >&2; }
calc() { awk "BEGIN { v = $*; printf \"%.6g\", v }"; }
r0() { printf '%.0f' "$1"; }
r1() { printf '%.1f' "$1"; }
r2() { printf '%.2f' "$1"; }
thousands() { r0 "$1" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta'; }
json() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2], {}, {"d": d}))' "$1" "$2"; }

# start NAME CPU-PREFIX… -- CMD…: CMD in a new process group; sets STARTED_PG.
start() {
	local name=$1
	shift
	setsid "$@" >"$WORK/$name.out" 2>"$WORK/$name.log" &
	STARTED_PG=$!
	GROUPS_STARTED+=("$STARTED_PG")
}
stop() {
	local pg=$1 i keep=()
	kill -TERM -- "-$pg" 2>/dev/null || true
	for i in $(seq 200); do kill -0 "$pg" 2>/dev/null || break; sleep 0.1; done
	kill -KILL -- "-$pg" 2>/dev/null || true
	wait "$pg" 2>/dev/null || true
	for i in "${GROUPS_STARTED[@]}"; do [[ $i == "$pg" ]] || keep+=("$i"); done
	GROUPS_STARTED=("${keep[@]}")
}
# cpu_ticks PG…: user+system ticks of every live process in the groups.
cpu_ticks() {
	local t=0 f line pg
	for f in /proc/[0-9]*/stat; do
		read -r line 2>/dev/null <"$f" || continue
		# shellcheck disable=SC2086
		set -- ${line##*) }
		for pg in "${CPU_GROUPS[@]}"; do [[ $3 == "$pg" ]] && t=$((t + ${12} + ${13})); done
	done
	echo "$t"
}
ticks() {
	CPU_GROUPS=("$@")
	cpu_ticks
}
# busy CPU: busy ticks of one CPU (cpu0…) or of all ("cpu").
busy() { awk -v c="$1" '$1==c{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
rss_kb() { awk -v f="$2:" '$1==f{print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
addr() { awk -v n="$2" '$1 == n {print $2}' "$1"; }

# ------------------------------------------------------------------ dataset --
DATA=$BENCH_DATA/n$N-s$SEED-r$REQUESTS
if [[ -s $DATA/meta.json && -s $DATA/records.jsonl ]]; then
	log "reusing dataset $DATA"
else
	log "generating $N records into $DATA"
	mkdir -p "$DATA"
	"$BIN/gen" -n "$N" -prefix "$PREFIX" -ns "$NS" -seed "$SEED" -requests "$REQUESTS" -out "$DATA" 2>>"$LOG"
fi
ZIPF=$DATA/zipf.paths
ZIPF_DISTINCT=$(json "$(cat "$DATA/meta.json")" 'd["zipf_distinct"]')
SINGLE=$WORK/single
t0=$(date +%s.%N)
"${ON_SERVER[@]}" "$BIN/pidnode" import --data "$SINGLE" "$DATA/records.jsonl" >>"$LOG" 2>&1
IMPORT_S=$(calc "$(date +%s.%N) - $t0")
SINGLE_DB=$(stat -c %s "$SINGLE/pidnode.db")
log "import: $N records in $(r1 "$IMPORT_S") s, database $SINGLE_DB bytes"

# ---------------------------------------------------------------------- etcd --
log "etcd: three members, fsync on, quota 8 GiB; $PINNING"
initial="e1=http://127.0.0.1:24831,e2=http://127.0.0.1:24832,e3=http://127.0.0.1:24833"
ETCD_PGS=()
for i in 1 2 3; do
	start "etcd$i" "${ON_LOAD[@]}" "$BIN/etcd" --name "e$i" --data-dir "$WORK/etcd$i" \
		--listen-client-urls "http://127.0.0.1:2482$i" --advertise-client-urls "http://127.0.0.1:2482$i" \
		--listen-peer-urls "http://127.0.0.1:2483$i" --initial-advertise-peer-urls "http://127.0.0.1:2483$i" \
		--initial-cluster "$initial" --initial-cluster-token catchup --max-txn-ops 4096 --max-request-bytes 8388608 \
		--quota-backend-bytes "$QUOTA" --log-level error
	ETCD_PGS+=("$STARTED_PG")
done
EPS="http://127.0.0.1:24821,http://127.0.0.1:24822,http://127.0.0.1:24823"
for _ in $(seq 100); do "$BIN/etcdsize" -endpoints "$EPS" -timeout 2s >/dev/null 2>&1 && break; sleep 0.2; done

t0=$(date +%s.%N)
"${ON_SERVER[@]}" "$BIN/pidnode" cluster seed --data "$SINGLE" --etcd-endpoints "$EPS" --node-name seed >>"$LOG" 2>&1
SEED_S=$(calc "$(date +%s.%N) - $t0")
S1=$("$BIN/etcdsize" -endpoints "$EPS")
log "seeded in $(r1 "$SEED_S") s: $S1"
KEYS=$(json "$S1" 'd["keys"]')
RECS=$(json "$S1" 'd["record_keys"]')
# size FIELD JSON: the largest member's figure (they differ by a few pages).
size() { json "$2" "max(m[\"$1\"] for m in d[\"members\"])"; }

# -------------------------------------------------------- history and quota --
# Before any node runs: a cluster node publishes its statistics into the
# prefix (measured apart, after the resolver rounds), and -touch's updates
# would all be applied by it.
S2=$("$BIN/etcdsize" -endpoints "$EPS" -defrag)
log "after defragmentation: $S2"
if [[ $TOUCH == 1 ]]; then
	S3=$("$BIN/etcdsize" -endpoints "$EPS" -touch)
	log "after one update of every key: $S3"
	S4=$("$BIN/etcdsize" -endpoints "$EPS" -compact -defrag)
	log "after compaction and defragmentation: $S4"
fi

# ----------------------------------------------------------------- catch-up --
# node NAME DIR [flags…]: a pidnode on SERVER_CPU, resolver and admin on free
# ports, DNS and native protocol off (both fronts are the same code on either
# kind of node); sets PG.
node() {
	local name=$1 dir=$2
	shift 2
	start "$name" "${ON_SERVER[@]}" "$BIN/pidnode" serve --data "$dir" --resolver-addr 127.0.0.1:0 \
		--admin-addr 127.0.0.1:0 --dns-addr "" --hdl-addr "" --ready-file "$WORK/$name.ready" --admin-rate 0 \
		--cache-entries "$CACHE" "$@"
	PG=$STARTED_PG
}
CACHE=$((ZIPF_DISTINCT * 2 > 100000 ? ZIPF_DISTINCT * 2 : 100000))
log "catch-up: a node on an empty data directory"
b0=$(busy cpu) c0=$(ticks "${ETCD_PGS[@]}")
t0=$(date +%s.%N)
node cluster "$WORK/cluster" --etcd-endpoints "$EPS" --node-name fresh
CPG=$PG
PEAK=0
for _ in $(seq 20000); do
	[[ -s $WORK/cluster.ready ]] && break
	kill -0 "$CPG" 2>/dev/null || break
	a=$(rss_kb "$CPG" RssAnon)
	((a > PEAK)) && PEAK=$a
	sleep 0.05
done
t1=$(date +%s.%N)
CATCH_S=$(calc "$t1 - $t0")
CATCH_FAIL=""
if [[ ! -s $WORK/cluster.ready ]]; then
	# Reported as such; the rest of the run goes on without the node.
	CATCH_FAIL=$(grep -v '^$' "$WORK/cluster.log" | tail -1)
	log "the catch-up node did not become ready: after $(r1 "$CATCH_S") s: $CATCH_FAIL"
	stop "$CPG"
fi
if [[ -z $CATCH_FAIL ]]; then
	sleep 0.05 # the ready file is written whole, but give the last line its time
	NODE_T=$(ticks "$CPG") ETCD_T=$(($(ticks "${ETCD_PGS[@]}") - c0))
	CATCH_OTHER=$(calc "100 * (($(busy cpu) - $b0) - $NODE_T - $ETCD_T) / ($CATCH_S * $CLK_TCK * $(nproc))")
	HWM=$(rss_kb "$CPG" VmHWM)
	ANON_READY=$(rss_kb "$CPG" RssAnon)
	CRES=$(addr "$WORK/cluster.ready" resolver)
	CADM=$(addr "$WORK/cluster.ready" admin)
	CLUSTER_DB=$(stat -c %s "$WORK/cluster/pidnode.db")
	SAMPLE=$(head -1 "$ZIPF")
	CHECK=$(curl -s -o /dev/null -w '%{http_code}' "http://$CRES$SAMPLE")
	READYZ=$(curl -s "http://$CADM/readyz" | tr '\n' ' ')
	log "caught up in $(r2 "$CATCH_S") s: node CPU $(r1 "$(calc "$NODE_T / $CLK_TCK")") s, etcd CPU $(r1 "$(calc "$ETCD_T / $CLK_TCK")") s, RssAnon peak $PEAK kB, VmHWM $HWM kB; $SAMPLE → $CHECK; /readyz: $READYZ"
	[[ $CHECK == 302 ]] || { log "the caught-up node does not redirect $SAMPLE ($CHECK)"; exit 1; }

	# ----------------------------------------------------------------- resolver --
	log "resolver: single node on the imported database against the caught-up node"
	node single "$SINGLE"
	SPG=$PG
	for _ in $(seq 600); do [[ -s $WORK/single.ready ]] && break; sleep 0.05; done
	sleep 0.05
	SRES=$(addr "$WORK/single.ready" resolver)
	for a in "$SRES" "$CRES"; do
		"${ON_LOAD[@]}" "$BIN/openloop" -once -addr "$a" -paths "$ZIPF" -conns "$CONNS" >>"$LOG" 2>&1 || true
	done
	OTHER=0 RUNT=0
	# wrk_run LABEL PG ADDR: sets RPC (redirects per server CPU-second), RPS, BAD.
	wrk_run() {
		local out=$WORK/wrk-$1.txt t0 t1 b0 b1 total secs
		t0=$(ticks "$2") b0=$(busy "cpu${SERVER_CPU:-}")
		BENCH_PATHS=$ZIPF "${ON_LOAD[@]}" wrk -t1 -c"$CONNS" -d"${DUR}s" --timeout 5s -s "$ROOT/bench/wrk/stream.lua" \
			"http://$3" >"$out" 2>&1 || true
		t1=$(ticks "$2") b1=$(busy "cpu${SERVER_CPU:-}")
		OTHER=$((OTHER + (b1 - b0) - (t1 - t0))) RUNT=$((RUNT + DUR * CLK_TCK))
		total=$(awk '/requests in/{print $1; exit}' "$out")
		RPS=$(awk '/^Requests\/sec:/{print $2}' "$out")
		BAD=$(awk '/Non-2xx or 3xx/{b+=$NF} /Socket errors/{gsub(/,/,""); b+=$4+$6+$8+$10} END{print b+0}' "$out")
		secs=$(calc "($t1 - $t0) / $CLK_TCK")
		RPC=$(calc "($secs > 0) ? ${total:-0} / $secs : 0")
		log "$1: ${RPS:-0} req/s, $RPC req/server-CPU-s (server CPU $secs s), bad $BAD"
	}
	S_BEST=0 C_BEST=0 S_ALL="" C_ALL=""
	for r in $(seq "$ROUNDS"); do
		# Each round in the other order, so that neither side always goes first.
		order=(single cluster)
		((r % 2 == 0)) && order=(cluster single)
		for who in "${order[@]}"; do
			if [[ $who == single ]]; then
				wrk_run "single-r$r" "$SPG" "$SRES"
				S_ALL+="$(r0 "$RPC") " S_BAD=$BAD
				awk "BEGIN{exit !($RPC > $S_BEST)}" && S_BEST=$RPC S_RPS=$RPS
			else
				wrk_run "cluster-r$r" "$CPG" "$CRES"
				C_ALL+="$(r0 "$RPC") " C_BAD=$BAD
				awk "BEGIN{exit !($RPC > $C_BEST)}" && C_BEST=$RPC C_RPS=$RPS
			fi
		done
	done
	RATIO=$(calc "$C_BEST / $S_BEST")
	# Then both at once: one wrk per server, started together, so that
	# whatever else runs on the machine falls on both alike (with the
	# alternating rounds, a busy spell during one server's run counts
	# against it alone; and requests per CPU-second fall with the rate a
	# server is driven at, fewer requests sharing each wake-up).
	# reqs FILE: requests wrk completed.
	reqs() { awk '/requests in/{print $1; exit}' "$1"; }
	PAIR_ROWS="" PAIR_RATIOS=()
	for r in $(seq "$ROUNDS"); do
		s0=$(ticks "$SPG") k0=$(ticks "$CPG") wrks=()
		for who in single cluster; do
			a=$SRES
			[[ $who == cluster ]] && a=$CRES
			BENCH_PATHS=$ZIPF "${ON_LOAD[@]}" wrk -t1 -c"$CONNS" -d"${DUR}s" --timeout 5s \
				-s "$ROOT/bench/wrk/stream.lua" "http://$a" >"$WORK/pair-$r-$who.txt" 2>&1 &
			wrks+=($!)
		done
		wait "${wrks[@]}" || true
		s1=$(ticks "$SPG") k1=$(ticks "$CPG")
		ps=$(calc "$(reqs "$WORK/pair-$r-single.txt") * $CLK_TCK / ($s1 - $s0)")
		pc=$(calc "$(reqs "$WORK/pair-$r-cluster.txt") * $CLK_TCK / ($k1 - $k0)")
		PAIR_RATIOS+=("$(calc "$pc / $ps")")
		PAIR_ROWS+="| $r | $(thousands "$ps") ($(r1 "$(calc "($s1 - $s0) / $CLK_TCK")") s) | $(thousands "$pc") ($(r1 "$(calc "($k1 - $k0) / $CLK_TCK")") s) | $(r2 "${PAIR_RATIOS[-1]}") |"$'\n'
		log "both at once, round $r: single $ps, cluster $pc req/server-CPU-s: ${PAIR_RATIOS[-1]}"
	done
	PAIR_MEDIAN=$(printf '%s\n' "${PAIR_RATIOS[@]}" | sort -g | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}')
	log "resolver: cluster $C_BEST / single $S_BEST = $RATIO"
	UP_S=$(calc "$(date +%s.%N) - $t1")
	S5=$("$BIN/etcdsize" -endpoints "$EPS")
	log "after the resolver rounds: $S5"
	stop "$SPG"
	stop "$CPG"
fi

# -------------------------------------------------------------------- report --
per() { calc "$(size "$1" "$2") / $RECS"; }
mib() { r0 "$(calc "$1 / 1048576")"; }
at_quota() { calc "int($QUOTA / $1)"; }
SIZE_ROW() { # LABEL JSON
	local db inuse
	db=$(size db_size "$2") inuse=$(size db_size_in_use "$2")
	echo "| $1 | $(mib "$db") MiB | $(r0 "$(calc "$db / $RECS")") | $(mib "$inuse") MiB | $(r0 "$(calc "$inuse / $RECS")") | $(thousands "$(at_quota "$(calc "$db / $RECS")")") |"
}
REC_BYTES=$(json "$(cat "$DATA/meta.json")" 'd["record_bytes"]')
{
	echo "# Cluster catch-up, etcd size and resolver cost, $(date -u +%Y-%m-%dT%H:%MZ)"
	echo
	echo "Host: $(nproc) CPUs ($(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)), $(free -g | awk '/Mem:/{print $2}') GiB,"
	echo "$(uname -sr); $PINNING. etcd: three members on this host built from the pinned module (\`bench/cmd/etcd\`),"
	echo "fsync on, \`--quota-backend-bytes $QUOTA\`. pidnode commit $COMMIT. Load average at start $LOAD0, at the end"
	echo "$(cut -d' ' -f1-3 /proc/loadavg); the whole run took $(r1 "$(calc "$SECONDS / 60")") min."
	echo "\`make bench-cluster CATCHUP_N=$N DUR=$DUR\` (this part alone: \`CATCHUP_N=$N DUR=$DUR bench/cluster-catchup.sh\` once the binaries are in \`bin/\`)."
	echo
	echo "Data: $(thousands "$N") pid4cat records from \`bench/cmd/gen -n $N -seed $SEED\` ($(r0 "$(calc "$REC_BYTES / $N")") bytes of JSON each),"
	echo "\`pidnode import\` into a single node's data directory ($(r1 "$(calc "$IMPORT_S")") s; bbolt file $(mib "$SINGLE_DB") MiB, $(r0 "$(calc "$SINGLE_DB / $N")") B/record),"
	echo "\`pidnode cluster seed --data DIR\` into the prefix: $(thousands "$KEYS") keys ($(thousands "$RECS") records) in $(r1 "$SEED_S") s"
	echo "($(thousands "$(calc "$KEYS / $SEED_S")") keys/s)."
	echo
	echo "## Catch-up of a new node (snapshot load)"
	echo
	echo "\`pidnode serve --data EMPTY --etcd-endpoints … \` timed from its start to its ready file (written once the"
	echo "snapshot is loaded and every listener is bound); RssAnon sampled every 50 ms meanwhile."
	echo
	if [[ -n $CATCH_FAIL ]]; then
		echo "**The node did not become ready**: it stopped after $(r1 "$CATCH_S") s (RssAnon peak $(mib "$((PEAK * 1024))") MiB) with"
		echo
		echo "    $CATCH_FAIL"
		echo
	else
		echo "| records | seconds to ready | records/s | node CPU | records per node CPU-second | etcd CPU | RssAnon peak | VmHWM | RssAnon at ready |"
		echo "|---|---|---|---|---|---|---|---|---|"
		echo "| $(thousands "$RECS") | $(r1 "$CATCH_S") | $(thousands "$(calc "$RECS / $CATCH_S")") | $(r1 "$(calc "$NODE_T / $CLK_TCK")") s | $(thousands "$(calc "$RECS * $CLK_TCK / $NODE_T")") | $(r1 "$(calc "$ETCD_T / $CLK_TCK")") s | $(mib "$((PEAK * 1024))") MiB | $(mib "$((HWM * 1024))") MiB | $(mib "$((ANON_READY * 1024))") MiB |"
		echo
		echo "The caught-up node's bbolt file: $(mib "$CLUSTER_DB") MiB (the single node's: $(mib "$SINGLE_DB") MiB). Other work on the"
		echo "machine during the catch-up: $(r0 "$CATCH_OTHER") % of both CPUs (busy ticks in /proc/stat not charged to the node or etcd)."
		echo "\`/readyz\` at the end: \`$READYZ\`"
		echo
	fi
	echo "## etcd's file per record and the records at the 8 GiB quota"
	echo
	echo "\`bench/cmd/etcdsize\` (clientv3 \`Status\`: DbSize is the file, which the quota bounds; DbSizeInUse its pages"
	echo "in use), the largest of the three members. Records at the quota = 8 GiB / (DbSize per record): the whole"
	echo "prefix ($(thousands "$KEYS") keys, $(thousands "$RECS") of them records) counted against the records."
	echo
	echo "| state | DbSize | bytes/record | DbSizeInUse | in use/record | records at 8 GiB |"
	echo "|---|---|---|---|---|---|"
	SIZE_ROW "as seeded" "$S1"
	SIZE_ROW "defragmented" "$S2"
	if [[ $TOUCH == 1 ]]; then
		SIZE_ROW "one update of every key, history kept ($(r1 "$(json "$S3" 'd["touch_s"]')") s)" "$S3"
		SIZE_ROW "then compacted and defragmented ($(r1 "$(json "$S4" 'd["defrag_s"]')") s to defragment)" "$S4"
	fi
	echo
	before=${S4:-$S2}
	if [[ -z $CATCH_FAIL ]]; then
		echo "These rows were taken before any node ran. While the caught-up node then served the resolver rounds"
		echo "below (up $(r0 "$UP_S") s, $ROUNDS × ${DUR} s of its own load, $(thousands "$ZIPF_DISTINCT") distinct identifiers resolved), it published"
		echo "its statistics into the prefix: +$(($(json "$S5" 'd["keys"]') - $(json "$before" 'd["keys"]'))) keys (one per identifier and namespace resolved"
		echo "that day, per node), +$(($(json "$S5" 'd["revision"]') - $(json "$before" 'd["revision"]'))) revisions (its flushes, every 10 s, rewrite the totals of"
		echo "every identifier resolved in the interval), etcd's file +$(mib "$(($(size db_size "$S5") - $(size db_size "$before")))") MiB (DbSize $(mib "$(size db_size "$S5")") MiB,"
		echo "in use $(mib "$(size db_size_in_use "$S5")") MiB)."
		echo
	fi
	echo "etcd keeps every revision of a key until a compaction: with one update per record and no compaction the"
	echo "file holds both, so the records at the quota are those of the row \"history kept\" unless etcd compacts"
	echo "(\`--auto-compaction-retention\`), and the file only shrinks when defragmented. Beyond one quota, put groups"
	echo "of prefixes on separate etcd clusters, one \`--etcd-prefix\` (and its nodes) per group."
	echo
	if [[ -z $CATCH_FAIL ]]; then
		echo "## Resolver: cluster node against single node"
		echo
		echo "Redirects on a cache hit (Zipf stream of $(thousands "$REQUESTS") paths, $(thousands "$ZIPF_DISTINCT") distinct, cache warmed by one pass"
		echo "of \`openloop -once\`; \`--cache-entries $CACHE\` on both), \`wrk -t1 -c$CONNS -d${DUR}s -s bench/wrk/stream.lua\`"
		echo "on CPU ${LOAD_CPU:-any}, both servers up at once on CPU ${SERVER_CPU:-any}, $ROUNDS interleaved rounds (the order flips each"
		echo "round), best of each; requests per server CPU-second from the server's process group in /proc/PID/stat."
		echo "The cluster node watches etcd and publishes its statistics to it throughout; its reads never touch etcd."
		echo
		echo "| node | best req/server-CPU-s | req/s of that run | every round | bad responses (last) |"
		echo "|---|---|---|---|---|"
		echo "| single | $(thousands "$S_BEST") | $(thousands "$S_RPS") | ${S_ALL% } | $S_BAD |"
		echo "| cluster | $(thousands "$C_BEST") | $(thousands "$C_RPS") | ${C_ALL% } | $C_BAD |"
		echo
		echo "Ratio cluster / single: **$(r2 "$RATIO")** (target ≥ 0.98). CPU time on the server CPU not charged to the"
		echo "measured server during the wrk runs (other processes, the idle server's own statistics flush, interrupts):"
		echo "$(r0 "$(calc "($RUNT > 0) ? 100 * $OTHER / $RUNT : 0")") % of their wall time."
		echo
		echo "Both at once: $ROUNDS more rounds in which one wrk each drives both servers for the same ${DUR} s, so that"
		echo "other work on the machine falls on both alike; requests per server CPU-second of each (its CPU-seconds in"
		echo "brackets; the two share CPU ${SERVER_CPU:-any}):"
		echo
		echo "| round | single | cluster | cluster / single |"
		echo "|---|---|---|---|"
		printf '%s' "$PAIR_ROWS"
		echo
		echo "Median ratio of these rounds: **$(r2 "$PAIR_MEDIAN")**."
	fi
} | tee "$OUT"
cp "$LOG" "${OUT%.md}.log"
log "wrote $OUT"
exit 0
}
