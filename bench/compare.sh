#!/usr/bin/env bash
# bench/compare.sh — the hot paths' Go benchmarks of two revisions, measured in
# one invocation and compared with benchstat.
#
# A change that moves code around can still cost a cache hit an allocation or a
# few percent of CPU; figures from two different days on this VM differ by more
# than that. So both trees are benchmarked here, in alternating rounds (base,
# head, base, head, …), so that whatever else the machine does lands on both.
#
# Settings (environment): BASE (revision to compare against, default HEAD~1),
# COUNT (rounds, 6), BENCH (benchmark regexp, '.'), BENCHTIME (per benchmark,
# 200ms), PKGS (packages, the read path's), CPU (-cpu, 1: the benchmarks' own
# RunParallel still runs on one processor, like a pinned server).
# HEAD means the work tree as it is, uncommitted changes included.
set -euo pipefail
cd "$(dirname "$0")/.."

BASE=${BASE:-HEAD~1}
COUNT=${COUNT:-6}
BENCH=${BENCH:-.}
BENCHTIME=${BENCHTIME:-200ms}
CPU=${CPU:-1}
PKGS=${PKGS:-./handlev/ ./cache/ ./resolver/ ./resolver/dns/ ./resolver/hdl/}
BENCHSTAT_VERSION=v0.0.0-20260908200009-22c9c6c9d4da

base_rev=$(git rev-parse --verify "$BASE^{commit}")
work=$(mktemp -d)
cleanup() {
	git worktree remove --force "$work/base" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

git worktree add --detach -q "$work/base" "$base_rev"

bin=$(go env GOPATH)/bin
if ! [[ -x $bin/benchstat ]]; then
	go install "golang.org/x/perf/cmd/benchstat@$BENCHSTAT_VERSION"
fi

# Packages of PKGS that the base tree does not have yet are benchmarked in head
# only; benchstat then shows them without a comparison.
binname() { echo "$1" | tr -c 'a-zA-Z0-9\n' _; }
compile() { # dir out-dir
	local dir=$1 out=$2 pkg name
	mkdir -p "$out"
	for pkg in $PKGS; do
		[[ -d $dir/$pkg ]] || continue
		(cd "$dir" && go test -c -o "$out/$(binname "$pkg").test" "$pkg")
	done
}
echo "compare: building base ($(git rev-parse --short "$base_rev")) and head ($(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo +changes))" >&2
compile "$work/base" "$work/bin-base"
compile "$PWD" "$work/bin-head"

run() { # tree bin-dir out-file
	local pkg t
	for pkg in $PKGS; do
		t=$2/$(binname "$pkg").test
		[[ -x $t ]] || continue
		# A test binary runs from its package directory (golden files, testdata).
		(cd "$1/$pkg" && "$t" -test.run '^$' -test.bench "$BENCH" -test.benchtime "$BENCHTIME" \
			-test.benchmem -test.count 1 -test.cpu "$CPU") | grep -E '^(Benchmark|goos|goarch|pkg|cpu)' >>"$3"
	done
}
for ((i = 1; i <= COUNT; i++)); do
	echo "compare: round $i of $COUNT" >&2
	run "$work/base" "$work/bin-base" "$work/base.txt"
	run "$PWD" "$work/bin-head" "$work/head.txt"
done

"$bin/benchstat" base="$work/base.txt" head="$work/head.txt"
