//go:build race

package e2e

// raceEnabled: the test binary runs under the race detector (make test), so
// TestMain builds the node with -race too; it then reuses the race-built
// packages of the same run and reports data races in the real binary, which
// checkStderr turns into failures.
const raceEnabled = true
