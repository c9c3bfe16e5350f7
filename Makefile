# pidnode — run `make` for the list of targets.
SHELL      := /bin/bash
GO         ?= go
BIN        := bin
DATA       ?= ./data
FUZZTIME   ?= 10s
CHECKFUZZ  ?= 3s
GOFLAGS_TEST ?= -race -shuffle=on -timeout 9m
# The race detector allocates on its own, so a test that asserts zero allocations
# is built only without it (//go:build !race) or skips under it: these packages,
# which hold every such test, run a second time without -race.
GOFLAGS_NORACE ?= -shuffle=on -count=1 -timeout 5m
NORACE_PKGS  ?= ./handlev/... ./cache/ ./store/ ./resolver/...
SOAK_DURATION ?= 10m
# The binaries record their git revision, commit time and modified state
# (pidnode version, pidnode_build_info, make run's banner): -buildvcs=auto,
# Go's default, here so that a GOFLAGS=-buildvcs=false in the environment does
# not silently drop them. BUILDVCS=false builds where git cannot be run.
BUILDVCS      ?= auto
CRASH_ROUNDS  ?= 50

.DEFAULT_GOAL := help

.PHONY: help
help: ## show this list
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  \033[1m%-14s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## build bin/pidnode and bin/pidctl
	$(GO) build -trimpath -buildvcs=$(BUILDVCS) -o $(BIN)/pidnode ./cmd/pidnode
	$(GO) build -trimpath -buildvcs=$(BUILDVCS) -o $(BIN)/pidctl ./cmd/pidctl

.PHONY: run
run: build ## start the node with demo data on loopback (data in ./data)
	$(BIN)/pidnode serve --data $(DATA) --demo

.PHONY: cluster
cluster: build ## a 3-member etcd and three pidnode nodes on loopback with demo data (data in ./data-cluster)
	$(GO) build -trimpath -o $(BIN)/etcd ./bench/cmd/etcd
	BIN=$(BIN) bench/cluster.sh

.PHONY: bench-cluster
bench-cluster: DUR ?= 10
bench-cluster: CATCHUP_N ?= 100000
bench-cluster: build ## bench-cluster-cpu, then cluster vs single node: creates/s (1/16/64 clients, one and two nodes), lag, then catch-up, etcd bytes/record and resolver cost with CATCHUP_N records (100000; 1000000 for the report, ~10 min more; 0 skips); writes bench/results/cluster-DATE.md and cluster-catchup-DATE.md
	$(GO) build -trimpath -o $(BIN)/etcd ./bench/cmd/etcd
	$(GO) build -trimpath -o $(BIN)/ ./bench/cmd/admincreate ./bench/cmd/clusterlag ./bench/cmd/etcdsize ./bench/cmd/gen ./bench/cmd/openloop
	$(MAKE) --no-print-directory bench-cluster-cpu DUR=$(DUR) BASE=$(BASE)
	BIN=$(BIN) DUR=$(DUR) bench/cluster-bench.sh
	if [ "$(CATCHUP_N)" != 0 ]; then BIN=$(BIN) DUR=$(DUR) CATCHUP_N=$(CATCHUP_N) bench/cluster-catchup.sh; fi

.PHONY: bench-cluster-cpu
bench-cluster-cpu: DUR ?= 10
bench-cluster-cpu: ROUNDS ?= 1
bench-cluster-cpu: build ## CPU per create per process (3 etcd members, 2 nodes; 1/16/64 clients, DUR s each) and etcd bytes/record after compaction+defrag; BASE=rev measures that revision's pidnode too, alternating (~1 min per build and round); writes bench/results/cluster-cpu-DATE.md
	$(GO) build -trimpath -o $(BIN)/etcd ./bench/cmd/etcd
	$(GO) build -trimpath -o $(BIN)/ ./bench/cmd/admincreate ./bench/cmd/clustercpu
	set -e; builds=head=$(BIN)/pidnode; \
	if [ -n "$(BASE)" ]; then \
		w=$$(mktemp -d); git worktree add --detach -q "$$w/base" "$(BASE)"; \
		(cd "$$w/base" && $(GO) build -trimpath -o "$(CURDIR)/$(BIN)/pidnode-base" ./cmd/pidnode) || rc=1; \
		git worktree remove --force "$$w/base"; rm -rf "$$w"; [ -z "$$rc" ]; \
		builds="base=$(BIN)/pidnode-base,$$builds"; \
	fi; \
	$(BIN)/clustercpu -bin $(BIN) -pidnode "$$builds" -duration $(DUR)s -rounds $(ROUNDS) -out bench/results/cluster-cpu-$$(date -u +%Y-%m-%d).md

.PHONY: bench-etcd-size
bench-etcd-size: DUR ?= 10
bench-etcd-size: N ?= 20000
bench-etcd-size: build ## bytes of etcd's file per record, admin-created (DUR s of creates, 10) and imported (N records, 20000), one etcd member, compacted and defragmented
	$(GO) build -trimpath -o $(BIN)/etcd ./bench/cmd/etcd
	$(GO) build -trimpath -o $(BIN)/ ./bench/cmd/admincreate ./bench/cmd/etcdsize ./bench/cmd/gen
	BIN=$(BIN) DUR=$(DUR) N=$(N) bench/etcd-size.sh

# strace: internal/e2e's TestDurabilityOrder watches a node's syncs and replies
# with it; curl and dig: TestReadmeShellBlocks and TestBannerCommands run the
# README's and the banner's examples (Debian's packages, installed when
# missing, as e2e does chromium).
.PHONY: test-tools
test-tools:
	@command -v strace >/dev/null && command -v curl >/dev/null && command -v dig >/dev/null || \
	  (apt-get update && apt-get install -y strace curl bind9-dnsutils)

.PHONY: test
test: test-tools ## run every test (race detector, shuffled order), then the allocation tests without it
	$(GO) test $(GOFLAGS_TEST) ./...
	@echo "== race-free pass: allocation tests (and the tests -race leaves out) of $(NORACE_PKGS), and admin's fairness test"
	$(GO) test $(GOFLAGS_NORACE) $(NORACE_PKGS)
	$(GO) test $(GOFLAGS_NORACE) -run '^TestWritersShareCommitsFairly$$' ./admin/

.PHONY: check
check: ## gofmt, go vet, lint, every test, the OpenAPI lint, and a short run of every fuzz target
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory test
	$(MAKE) --no-print-directory openapi-lint
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(CHECKFUZZ)

# staticcheck and deadcode are pinned by the tool directives of tools/go.mod, a
# module of their own, so their dependencies never enter pidnode's go.mod or
# build; go tool builds them once and caches them. deadcode lists functions no
# main package (cmd/ and bench/cmd/) nor, with -test, any test reaches; it
# exits 0 whatever it finds, so its output is the failure. Both always run, so
# one pass shows every finding.
TOOL ?= $(GO) tool -modfile=tools/go.mod

.PHONY: lint
lint: ## staticcheck and the dead-code check (deadcode -test), both pinned in tools/go.mod
	@rc=0; \
	echo "$(TOOL) staticcheck ./..."; $(TOOL) staticcheck ./... || rc=1; \
	echo "$(TOOL) deadcode -test ./..."; out=$$($(TOOL) deadcode -test ./...) || rc=1; \
	if [ -n "$$out" ]; then echo "$$out"; echo "deadcode: unreachable functions (remove or use them)"; rc=1; fi; \
	exit $$rc

# The description linted is admin/testdata/openapi.json, which admin's
# TestOpenAPIGolden keeps equal to what /openapi.json serves. Redocly CLI is
# pinned by tools/openapi/package-lock.json (npm ci installs exactly it);
# tools/openapi/redocly.yaml says why each remaining finding stays. The lint
# sends no telemetry and looks for no update.
.PHONY: openapi-lint
openapi-lint: ## Redocly CLI's lint (recommended, strict) of the admin API's OpenAPI description
	cd tools/openapi && npm ci --no-audit --no-fund --loglevel=error && \
	  REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_NOTIFICATIONS=true \
	  ./node_modules/.bin/redocly lint --config redocly.yaml ../../admin/testdata/openapi.json

.PHONY: zstd-dict
zstd-dict: ## regenerate cluster/zstd.dict, cluster mode's zstd dictionary for values in etcd (same bytes every run)
	$(GO) run ./bench/cmd/zstddict -out cluster/zstd.dict

.PHONY: fuzz
fuzz: ## run every native fuzz target for FUZZTIME each (default 10s)
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f ($(FUZZTIME))"; \
	    out=$$(mktemp); rc=0; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 20x $$pkg >$$out 2>&1 || rc=$$?; \
	    cat $$out; \
	    if [ $$rc -ne 0 ]; then \
	      if grep -q 'Failing input written to' $$out || ! grep -q 'context deadline exceeded' $$out; then rm -f $$out; exit 1; fi; \
	      echo "fuzz: $$f stopped by Go's own fuzztime deadline race (go.dev/issue/75804, unfixed in go1.26) with no failing input: not a finding"; \
	    fi; \
	    rm -f $$out; \
	  done; \
	done

.PHONY: soak
soak: ## long runs of the real binary: CRASH_ROUNDS SIGKILL rounds (50), SOAK_DURATION mixed traffic (10m), 10 SIGTERMs under load
	PIDNODE_CRASH_ROUNDS=$(CRASH_ROUNDS) PIDNODE_SOAK_DURATION=$(SOAK_DURATION) PIDNODE_SHUTDOWN_RUNS=10 \
	  $(GO) test -count=1 -timeout 60m -v -run '^(TestCrashSafety|TestSoak|TestGracefulShutdown)$$' ./internal/e2e/

.PHONY: e2e
e2e: ## headless Chromium loads the resolver's pages (installs Debian's chromium if missing)
	@command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)
	$(GO) test -count=1 -tags e2e -v ./internal/e2e/browser/

.PHONY: bench
bench: N ?= 1000000
bench: DUR ?= 5
bench: ## end-to-end suite vs nginx, a bare fasthttp map, a bare native-TCP map and a bare DNS map, N=1000000, about 10 minutes once the dataset exists (N=… DUR=… ROUNDS=… to change; bench/README.md); writes bench/results/
	N=$(N) DUR=$(DUR) $(GO) run ./bench/cmd/suite

.PHONY: bench-full
bench-full: N ?= 10000000
bench-full: NGINX_WAIT ?= 1500
bench-full: ## the end-to-end suite at N=10000000 (~25 min, ~50 GB of free disk; nginx takes 6-16 min of it to load its 10M map)
	N=$(N) NGINX_WAIT=$(NGINX_WAIT) $(GO) run ./bench/cmd/suite

.PHONY: bench-go
bench-go: ## Go benchmarks of the hot paths beside the code (allocations reported)
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./handlev/... ./cache/ ./store/ ./resolver/... ./admin/

.PHONY: bench-compare
bench-compare: ## the read path's Go benchmarks at BASE (HEAD~1) and at the work tree, alternating rounds, through benchstat
	BASE=$(or $(BASE),HEAD~1) bench/compare.sh

.PHONY: clean
clean: ## remove build output (keeps ./data)
	rm -rf $(BIN)
