// Command pidctl is the command-line client of a pidnode: of its admin API and of
// its native Handle protocol interface (pidctl hdl …). See docs/product.md §9.
package main

import (
	"errors"
	"io"
	"os"
	"strings"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run parses the command line and runs the command; it returns the exit status
// (0 ok, 1 the server refused, 2 usage or network).
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if args[0] == "help" {
		return helpMain(args[1:], stdout, stderr)
	}
	p, err := parseArgs(args)
	if err != nil {
		var ae *argError
		if errors.As(err, &ae) && ae.group != "" {
			return groupUsageError(stderr, ae.group, ae.msg)
		}
		if errors.As(err, &ae) {
			return usageError(stderr, ae.cmd, ae.msg)
		}
		return usageError(stderr, nil, err.Error())
	}
	if p.help {
		if p.cmd == nil {
			usage(stdout)
		} else {
			p.cmd.help(stdout)
		}
		return 0
	}
	if p.cmd.hdl != nil {
		return p.cmd.hdl(p, stdout, stderr)
	}
	return adminRun(p, stdout, stderr)
}

// helpMain is `pidctl help [COMMAND]`: every command's usage line, or one
// command's full help (every command of a group for "keys" or "hdl").
func helpMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stdout)
		return 0
	}
	name := strings.Join(args, " ")
	if c := findCommand(name); c != nil {
		c.help(stdout)
		return 0
	}
	found := false
	for _, c := range commands {
		if strings.HasPrefix(c.name, name+" ") {
			if found {
				io.WriteString(stdout, "\n")
			}
			c.help(stdout)
			found = true
		}
	}
	if !found {
		return usageError(stderr, nil, "help: unknown command \""+name+"\"")
	}
	return 0
}
