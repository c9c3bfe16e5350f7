// Command pidctl is the command-line client of a pidnode: of its admin API and of
// its native Handle protocol interface (pidctl hdl …). See SPEC §9.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run dispatches a subcommand and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "hdl":
		return hdlMain(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	default:
		// Everything else is an admin API command; global flags such as
		// --admin and --key-file may precede it.
		return adminMain(args, stdout, stderr)
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: pidctl COMMAND [arguments]

commands:
  hdl resolve HANDLE --server HOST:PORT [--udp] [--type T]… [--index N]… [--json]
  hdl siteinfo --server HOST:PORT [--udp]

`+adminUsage)
}
