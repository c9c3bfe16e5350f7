//go:build !unix

package main

import "log/slog"

// raiseNoFile: without RLIMIT_NOFILE, the connection budget assumes
// fallbackNoFile descriptors.
func raiseNoFile(*slog.Logger) int { return fallbackNoFile }
