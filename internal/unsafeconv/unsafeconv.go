// Package unsafeconv views a byte slice as a string, or a string as a byte
// slice, without copying: the one place pidnode does so, for lookups and
// parsers on the hot path that must not allocate.
//
// Both results share memory with their argument, so the caller promises what
// the compiler cannot check. For String: the bytes must not change while the
// string is in use (nor for ever, if the string is kept). For Bytes: the bytes
// must never be written, and may be read only while the string is reachable
// through something else. Each call site says in a comment why its promise
// holds.
//
// It imports only unsafe and must stay a leaf: every package may use it.
package unsafeconv

import "unsafe"

// String returns b's bytes as a string without copying. An empty b gives "".
func String(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Bytes returns s's bytes as a slice without copying; the slice must never be
// written. An empty s gives a nil or empty slice.
func Bytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
