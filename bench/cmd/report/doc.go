// Command report renders a recorded run of the end-to-end suite again: the
// results JSON bench/cmd/suite writes beside every report becomes the
// markdown report and the SVG chart beside it, with the same renderer the
// suite uses (bench/internal/report).
//
//	go run ./bench/cmd/report -json bench/results/2026-01-01-host.json -out /tmp/report.md
//
// With -readme it renders the README's short performance table instead (the
// figures with a target, a line linking the report, and the markers naming
// the JSON) and prints it, or with -out replaces the marked table in that
// file. Run it from the repository root with the JSON's relative path: the
// marker records the path, and bench/internal/report's TestReadmePerfTable
// renders that JSON again and fails while the README differs.
//
//	go run ./bench/cmd/report -json bench/results/2026-01-01-host.json -readme -out README.md
//
// Part of bench/, imported by nothing.
package main
