//go:build !linux

package resolver

import "time"

var cpuStart = time.Now()

// threadCPU falls back to wall time where thread CPU time is not at hand.
func threadCPU() time.Duration { return time.Since(cpuStart) }
