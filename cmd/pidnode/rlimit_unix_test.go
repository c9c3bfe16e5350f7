//go:build unix

package main

import (
	"bytes"
	"log/slog"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestRaiseNoFile: a soft descriptor limit under the hard one is raised to
// it, and both are logged.
func TestRaiseNoFile(t *testing.T) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	if rl.Max < 512 || rl.Max > 1<<30 {
		t.Skipf("hard descriptor limit %d: no room to lower the soft one, or too large to compare", rl.Max)
	}
	low := rl
	low.Cur = 256
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl) //nolint:errcheck // restores what the test found
	var log bytes.Buffer
	got := raiseNoFile(slog.New(slog.NewTextHandler(&log, nil)))
	var now syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &now); err != nil {
		t.Fatal(err)
	}
	if got != int(rl.Max) || now.Cur != rl.Max {
		t.Errorf("raiseNoFile = %d, soft limit now %d; want both the hard limit %d", got, now.Cur, rl.Max)
	}
	hard := strconv.FormatUint(uint64(rl.Max), 10)
	if !strings.Contains(log.String(), "soft="+hard) || !strings.Contains(log.String(), "hard="+hard) {
		t.Errorf("log %q does not show both limits", log.String())
	}
}
