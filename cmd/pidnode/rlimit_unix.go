//go:build unix

package main

import (
	"log/slog"
	"syscall"
)

// raiseNoFile raises the soft RLIMIT_NOFILE to the hard limit (connections
// are descriptors; the soft limit is often 1,024) and returns the soft limit
// in force, logging both.
func raiseNoFile(log *slog.Logger) int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		log.Warn("reading the file descriptor limit", "err", err)
		return fallbackNoFile
	}
	if rl.Cur < rl.Max {
		up := rl
		up.Cur = up.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &up); err != nil {
			log.Warn("raising the file descriptor limit", "soft", rl.Cur, "hard", rl.Max, "err", err)
		} else {
			rl = up
		}
	}
	log.Info("file descriptor limit", "soft", rl.Cur, "hard", rl.Max)
	return int(min(rl.Cur, 1<<30))
}
