package store

import "syscall"

// madvPopulateRead is MADV_POPULATE_READ (Linux 5.14): fault the range in
// for reading, page tables included, in one call.
const madvPopulateRead = 22

// populate maps n bytes of bbolt's mapping starting at base+off. base is
// the mapping's address (bbolt Info.Data), off a multiple of the page size;
// the caller's read transaction keeps the mapping in place.
var populate = func(base uintptr, off, n int64) error {
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, base+uintptr(off), uintptr(n), madvPopulateRead)
	if errno != 0 {
		return errno
	}
	return nil
}

// adviseSequential tells the kernel that n bytes of bbolt's mapping from
// base will be read in order, so that a fault reads ahead (bbolt asks for
// random access, which reads each faulted page alone).
func adviseSequential(base uintptr, n int64) error {
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, base, uintptr(n), syscall.MADV_SEQUENTIAL)
	if errno != 0 {
		return errno
	}
	return nil
}
