package main

import (
	"flag"
	"fmt"
	"os"
)

func newFlagSet(name string) *flag.FlagSet {
	return flag.NewFlagSet("likeforlike "+name, flag.ContinueOnError)
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: likeforlike render|check [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "render":
		err = render(os.Args[2:])
	case "check":
		err = check(os.Args[2:])
	default:
		fmt.Fprintf(os.Stderr, "likeforlike: unknown command %q (render or check)\n", os.Args[1])
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "likeforlike:", err)
		os.Exit(1)
	}
}
