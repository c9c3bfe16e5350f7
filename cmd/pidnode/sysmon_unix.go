//go:build unix

package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// sysmonSetting keeps the Go runtime's monitor thread (sysmon) out of its
// deep sleep. The runtime puts the monitor into that sleep whenever every
// processor is idle, and the next system call wakes it and resets its tick
// to 20 µs, which lasts until the processors idle again. A node under
// moderate load idles between most requests, so nearly every request paid a
// futex wake, the monitor's short sleeps and the context switches between
// them, on the node's own core. With schedtrace set the runtime never
// enters that sleep (runtime/proc.go, sysmon) and the tick backs off to
// 10 ms while nothing needs the monitor. Its value is the largest the
// runtime takes, in milliseconds: schedtrace prints one line of scheduler
// state to standard error once per that period of the host's uptime (about
// 24.8 days), and a scheduler dump beside a fatal error's stack traces.
const sysmonSetting = "schedtrace=2147483647"

// steadySysmon re-executes `pidnode serve` (the same binary, arguments and
// environment) with sysmonSetting added to GODEBUG, which the runtime reads
// only at start. A GODEBUG that names schedtrace already, schedtrace=0
// included, is the operator's choice and is left alone: that is how to turn
// this off. It returns only when nothing is to be done or exec failed (said
// on standard error); the node then runs as it would have without it.
func steadySysmon(args []string) {
	if len(args) < 2 || args[1] != "serve" {
		return
	}
	godebug := os.Getenv("GODEBUG")
	if setsSchedtrace(godebug) {
		return
	}
	exe, err := os.Executable()
	if err == nil {
		err = syscall.Exec(exe, args, withGODEBUG(os.Environ(), godebug))
	}
	fmt.Fprintf(os.Stderr, "pidnode: starting without GODEBUG=%s (%v); set GODEBUG=schedtrace=0 to skip this step\n", sysmonSetting, err)
}

// setsSchedtrace reports whether the GODEBUG value godebug sets schedtrace.
func setsSchedtrace(godebug string) bool {
	for _, kv := range strings.Split(godebug, ",") {
		if k, _, _ := strings.Cut(kv, "="); strings.TrimSpace(k) == "schedtrace" {
			return true
		}
	}
	return false
}

// withGODEBUG is environ with GODEBUG replaced by godebug plus sysmonSetting.
func withGODEBUG(environ []string, godebug string) []string {
	v := sysmonSetting
	if godebug != "" {
		v = godebug + "," + v
	}
	env := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "GODEBUG=") {
			env = append(env, kv)
		}
	}
	return append(env, "GODEBUG="+v)
}
