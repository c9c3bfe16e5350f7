package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"
	"syscall"

	"pidnode/store"
)

// startError is a failure to start as the operator reads it: what is wrong,
// naming the file, address or setting, and what to do about it. main prints
// it as the one line of a failed start.
type startError struct {
	msg  string // "data/pidnode.db is in use by another pidnode (pid 1234)"
	hint string // "stop it or choose another --data"; may be empty
	err  error  // the cause, for errors.Is/As
}

func (e *startError) Error() string {
	if e.hint == "" {
		return e.msg
	}
	return e.msg + "; " + e.hint
}

func (e *startError) Unwrap() error { return e.err }

// cause is err's text without what the message around it already says: the
// operation and path of a *fs.PathError (the message names the file), the
// "open"/"listen" of a *net.OpError, a package prefix such as "tls: ".
func cause(err error) string {
	var pe *fs.PathError
	var oe *net.OpError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &oe):
		err = oe.Err
		var se *os.SyscallError
		if errors.As(err, &se) {
			err = se.Err
		}
	}
	s := err.Error()
	for _, p := range []string{"tls: ", "toml: ", "admin: ", "model: "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

// openError explains a failed store.Open of the database at path.
func openError(path string, err error) error {
	var le *store.LockedError
	if errors.As(err, &le) {
		who := "another process"
		if le.PID > 0 {
			who = fmt.Sprintf("another pidnode (pid %d)", le.PID)
		}
		return &startError{msg: fmt.Sprintf("%s is in use by %s", path, who), hint: "stop it or choose another --data", err: err}
	}
	return err
}

// listenError explains a failed bind of a listener: name is "resolver",
// "admin", "dns" or "hdl", network "tcp" or "udp" (empty for a listener that
// has only TCP), flag the setting that chose addr.
func listenError(name, network, addr, flag string, err error) error {
	where := name + " listener " + addr
	if network != "" {
		where += " (" + network + ")"
	}
	hint := "check --" + flag
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		hint = "stop what holds it or set --" + flag
	case errors.Is(err, syscall.EACCES):
		hint = "ports below 1024 need privileges; choose another port with --" + flag
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		hint = "the address is not one of this host's; set --" + flag
	}
	return &startError{msg: where + ": " + cause(err), hint: hint, err: err}
}

// fileError explains a file named by a setting that cannot be used: what is
// "model file", "resolver TLS certificate", …
func fileError(what, path, flag string, err error) error {
	hint := "check --" + flag
	if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
		hint = "fix it or check --" + flag
	}
	return &startError{msg: what + " " + path + ": " + cause(err), hint: hint, err: err}
}

// oneLine makes an error message a single line: main prints one line per
// failure, and a few causes (errors.Join, some parsers) hold newlines.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ")
}

// checkSecretFile refuses a key file that users other than its owner may
// read: the operator key and the native-protocol signing key grant
// everything, so a world- or group-readable copy is a leak waiting to be
// copied (OpenSSH refuses such private keys for the same reason). The node
// does not chmod it itself: who else can read it is the operator's decision
// to correct, and a silent fix would hide that it was ever exposed.
// A missing file is not this check's business (nil); the caller reports it.
func checkSecretFile(what, path, flag string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return &startError{
			msg:  fmt.Sprintf("%s %s is readable by other users (mode %04o)", what, path, perm),
			hint: fmt.Sprintf("run chmod 600 %s, or point %s at a file only this user can read", path, flag),
		}
	}
	return nil
}
