package promtext

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// Metric types for Header.
const (
	Counter   = "counter"
	Gauge     = "gauge"
	Histogram = "histogram"
)

// A Label is one name="value" pair of a sample.
type Label struct {
	Name, Value string
}

// L is shorthand for Label{name, value}.
func L(name, value string) Label { return Label{name, value} }

// Header appends the family's "# HELP name help" and "# TYPE name typ" lines.
// In help, a backslash is written \\ and a newline \n.
func Header(dst []byte, name, typ, help string) []byte {
	dst = append(dst, "# HELP "...)
	dst = append(dst, name...)
	dst = append(dst, ' ')
	dst = appendEscaped(dst, help, false)
	dst = append(dst, "\n# TYPE "...)
	dst = append(dst, name...)
	dst = append(dst, ' ')
	dst = append(dst, typ...)
	return append(dst, '\n')
}

// Uint appends the sample line `name{labels} v`; with no labels, `name v`.
func Uint(dst []byte, name string, v uint64, labels ...Label) []byte {
	dst = appendName(dst, name, labels)
	dst = strconv.AppendUint(dst, v, 10)
	return append(dst, '\n')
}

// Int appends a sample line with a signed value (a gauge that can go below zero).
func Int(dst []byte, name string, v int64, labels ...Label) []byte {
	dst = appendName(dst, name, labels)
	dst = strconv.AppendInt(dst, v, 10)
	return append(dst, '\n')
}

// Float appends a sample line with a float value, written by AppendFloat.
func Float(dst []byte, name string, v float64, labels ...Label) []byte {
	dst = appendName(dst, name, labels)
	dst = AppendFloat(dst, v)
	return append(dst, '\n')
}

// AppendFloat appends f as the format writes numbers: the shortest decimal
// that reads back as f ('g' form), +Inf, -Inf or NaN.
func AppendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "+Inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-Inf"...)
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

// CounterFamily appends a counter family with one sample and no labels.
func CounterFamily(dst []byte, name, help string, v uint64) []byte {
	return Uint(Header(dst, name, Counter, help), name, v)
}

// GaugeFamily appends a gauge family with one sample and no labels.
func GaugeFamily(dst []byte, name, help string, v int64) []byte {
	return Int(Header(dst, name, Gauge, help), name, v)
}

// appendName appends `name{l1="v1",l2="v2"} ` (or `name `).
func appendName(dst []byte, name string, labels []Label) []byte {
	dst = append(dst, name...)
	if len(labels) > 0 {
		dst = append(dst, '{')
		for i, l := range labels {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, l.Name...)
			dst = append(dst, '=', '"')
			dst = appendEscaped(dst, l.Value, true)
			dst = append(dst, '"')
		}
		dst = append(dst, '}')
	}
	return append(dst, ' ')
}

// appendEscaped appends s with backslash and newline escaped, and the double
// quote too in a label value (quote); invalid UTF-8 bytes become U+FFFD.
func appendEscaped(dst []byte, s string, quote bool) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			var esc string
			switch {
			case c == '\\':
				esc = `\\`
			case c == '\n':
				esc = `\n`
			case c == '"' && quote:
				esc = `\"`
			default:
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, esc...)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i++
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}
