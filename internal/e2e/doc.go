// Package e2e holds end-to-end tests that try hard to break the real pidnode
// binary: SIGKILL crash rounds with acknowledged-write checks and a
// bbolt consistency check, graceful SIGTERM under resolution load, hostile
// input against the real resolver, admin, native-protocol and DNS listeners
// (slowloris, oversized headers/bodies/handles, request smuggling, invalid
// UTF-8 and NUL, JSON bombs, CR/LF header injection, XSS payloads parsed back
// out of the HTML), a mixed-traffic soak watching memory, threads and p99,
// and a node under strace whose acknowledged writes must be synced to the
// database file before the reply's first byte (strace is then required; make
// test installs it).
//
// It has tests only, no non-test code. TestMain builds cmd/pidnode once into
// a temporary directory (with -race when the tests run under -race); every
// test runs that binary on 127.0.0.1:0 with its own data directory and fails
// if the node's stderr shows a panic or a data race.
//
// Environment:
//   - PIDNODE_CRASH_ROUNDS (default 3), PIDNODE_SOAK_DURATION (default 5s),
//     PIDNODE_SHUTDOWN_RUNS (default 2): the long forms `make soak` sets.
//   - PIDNODE_E2E_BIN: run this prebuilt binary instead of building one.
//
// The browser suite lives in internal/e2e/browser behind the e2e build tag
// (`make e2e`).
package e2e
