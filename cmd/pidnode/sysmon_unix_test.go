//go:build unix

package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestSetsSchedtrace(t *testing.T) {
	for godebug, want := range map[string]bool{
		"":                                 false,
		"madvdontneed=1":                   false,
		"schedtraces=1":                    false,
		"schedtrace=0":                     true,
		"gctrace=1,schedtrace=1000":        true,
		"gctrace=1, schedtrace=5,x=y":      true,
		"scheddetail=1,madvdontneed=1,a=b": false,
	} {
		if got := setsSchedtrace(godebug); got != want {
			t.Errorf("setsSchedtrace(%q) = %v, want %v", godebug, got, want)
		}
	}
}

func TestWithGODEBUG(t *testing.T) {
	env := []string{"HOME=/h", "GODEBUG=gctrace=1", "PATH=/bin"}
	if got, want := withGODEBUG(env, "gctrace=1"), []string{"HOME=/h", "PATH=/bin", "GODEBUG=gctrace=1," + sysmonSetting}; !slices.Equal(got, want) {
		t.Errorf("withGODEBUG = %q, want %q", got, want)
	}
	if got, want := withGODEBUG([]string{"HOME=/h"}, ""), []string{"HOME=/h", "GODEBUG=" + sysmonSetting}; !slices.Equal(got, want) {
		t.Errorf("withGODEBUG without GODEBUG = %q, want %q", got, want)
	}
}

// TestServeKeepsSysmonAwake: the process the test started (exec keeps its
// PID) serves with sysmonSetting after what GODEBUG held; a GODEBUG that
// names schedtrace is left as it is.
func TestServeKeepsSysmonAwake(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/PID/environ")
	}
	for env, want := range map[string]string{
		"madvdontneed=1": "madvdontneed=1," + sysmonSetting,
		"schedtrace=0":   "schedtrace=0",
	} {
		t.Setenv("GODEBUG", env)
		n := startBinary(t, t.TempDir())
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", n.cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, kv := range strings.Split(string(b), "\x00") {
			if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok {
				got = append(got, v)
			}
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("GODEBUG=%s: the node runs with GODEBUG %q, want %q", env, got, want)
		}
		n.stop(t)
	}
}
