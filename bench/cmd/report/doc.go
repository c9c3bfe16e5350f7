// Command report renders a recorded run of the end-to-end suite again: the
// results JSON bench/cmd/suite writes beside every report becomes the
// markdown report and the SVG chart beside it, with the same renderer the
// suite uses (bench/internal/report).
//
//	go run ./bench/cmd/report -json bench/results/2026-01-01-host.json -out /tmp/report.md
//
// Part of bench/, imported by nothing.
package main
