//go:build !unix

package main

// steadySysmon: without exec the node runs with the runtime's default
// monitor (sysmon_unix.go says what it changes).
func steadySysmon([]string) {}
