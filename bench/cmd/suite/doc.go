// Command suite runs pidnode's end-to-end benchmark suite
// (bench/internal/suite) with the settings bench/README.md lists, read from
// the environment, and writes bench/results/<date>-<host>[-n<N>].{json,md,svg,log}.
// It takes no arguments; -h prints the usage.
//
//	N=100000 DUR=3 go run ./bench/cmd/suite     # make bench N=100000 DUR=3
//
// Part of bench/, imported by nothing.
package main
