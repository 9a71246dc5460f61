// Package numfmt formats numbers for people.
package numfmt

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Group formats n with thousands separators: 3120 → "3,120", -4500 →
// "-4,500".
func Group(n int64) string {
	s := strconv.FormatInt(n, 10)
	digits := strings.TrimPrefix(s, "-")
	var b strings.Builder
	b.WriteString(s[:len(s)-len(digits)])
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Dur formats a duration with a human unit and three significant digits:
// 950ns, 12.3µs, 1.29ms, 3.57s, 74.4s, 600s, 16.7min, 2.50h. It is the one
// rule for every duration printed for a reader (summaries, tables, notes):
// a minute is "60.0s" beside "5.00s", not Go's "1m0s", and seconds run to
// 999s, so that a table's durations compare at a glance.
func Dur(d time.Duration) string { return DurNs(float64(d)) }

// DurNs is Dur of a duration kept as nanoseconds in a float; NaN and
// infinities are "–" (no figure).
func DurNs(ns float64) string {
	if math.IsNaN(ns) || math.IsInf(ns, 0) {
		return "–"
	}
	if ns == 0 {
		return "0s" // nothing: no unit to pick
	}
	if math.Abs(ns) < 1e3 {
		return strconv.FormatFloat(math.Round(ns), 'f', 0, 64) + "ns"
	}
	// Each unit takes a figure up to 999 of it; the unit is chosen after
	// rounding to three significant digits, so 999.6µs is 1.00ms, not
	// 1000µs.
	for _, u := range []struct {
		ns   float64
		name string
	}{{1e3, "µs"}, {1e6, "ms"}, {1e9, "s"}, {60e9, "min"}} {
		if v := round3(ns / u.ns); math.Abs(v) < 1000 {
			return sig3(v) + u.name
		}
	}
	return sig3(round3(ns/3600e9)) + "h"
}

// sig3 prints v (already rounded to three significant digits) with the
// decimals that show them: 1.29, 12.3, 129.
func sig3(v float64) string {
	a := math.Abs(v)
	switch {
	case a < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
}

// Ratio prints a ratio for a "×" figure: two decimals from 0.1 to 10
// (0.70, 1.17), three significant digits elsewhere (12.3, 123; 0.0448,
// 0.00448), where two decimals would read 0.00 or claim four digits.
func Ratio(r float64) string {
	a := math.Abs(r)
	switch {
	case a == 0 || math.IsNaN(r) || math.IsInf(r, 0) || (a >= 0.1 && a < 10):
		return strconv.FormatFloat(r, 'f', 2, 64)
	case a >= 10:
		return sig3(round3(r))
	}
	return strconv.FormatFloat(r, 'f', 2-int(math.Floor(math.Log10(a))), 64)
}

// Round rounds d to three significant digits (whole nanoseconds below
// 1µs), so that %v of it prints as Dur does, give or take trailing zeros:
// 1.250303ms → 1.25ms, 1.70079s → 1.7s.
func Round(d time.Duration) time.Duration {
	a := math.Abs(float64(d))
	if a < 1e3 {
		return d
	}
	e := math.Pow(10, math.Floor(math.Log10(a))-2)
	return time.Duration(math.Round(float64(d)/e) * e)
}

// AllOf is "all n nouns" in words that fit n: "the one noun" for 1,
// "both nouns" for 2 ("all 2 in-flight slots" read oddly), "all 10
// nouns" else; Were is its verb.
func AllOf(n int, noun string) string {
	switch n {
	case 1:
		return "the one " + noun
	case 2:
		return "both " + Plural(noun)
	}
	return "all " + strconv.Itoa(n) + " " + Plural(noun)
}

// Were is "was" for one, "were" for any other count.
func Were(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

// Count is n and noun, the noun plural unless n is 1: "1 publisher", "3
// publishers", "1,200 queries".
func Count[T ~int | ~int64](n T, noun string) string {
	if n != 1 {
		noun = Plural(noun)
	}
	return Group(int64(n)) + " " + noun
}

// Plural is an English noun's plural: event → events, query → queries,
// process → processes.
func Plural(noun string) string {
	switch {
	case strings.HasSuffix(noun, "y") && len(noun) > 1 && !strings.ContainsRune("aeiou", rune(noun[len(noun)-2])):
		return noun[:len(noun)-1] + "ies"
	case strings.HasSuffix(noun, "s"), strings.HasSuffix(noun, "x"), strings.HasSuffix(noun, "sh"), strings.HasSuffix(noun, "ch"):
		return noun + "es"
	}
	return noun + "s"
}

// Bytes formats a byte count in binary units (1 KiB = 1024 B, 1 MiB =
// 2^20 B, 1 GiB = 2^30 B) with three significant digits, as Dur gives
// durations, for every size and memory figure printed for a reader: "512
// B", "56.0 KiB", "332 KiB", "1.49 MiB", "2.00 GiB"; "–" when not a
// number. From 1,000 to 1,023 of a unit the whole number is given, grouped
// ("1,023 B", "1,000 KiB"), and the unit is chosen after rounding: 1,048,575 B is
// "1.00 MiB", not "1024 KiB".
func Bytes(b float64) string {
	if math.IsNaN(b) || math.IsInf(b, 0) {
		return "–"
	}
	if math.Abs(b) < 1<<10 {
		return Group(int64(math.Round(b))) + " B"
	}
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	v, u := b/(1<<10), 0
	for u < len(units)-1 && math.Abs(round3(v)) >= 1<<10 {
		v, u = v/(1<<10), u+1
	}
	if r := round3(v); math.Abs(r) >= 1000 {
		return Group(int64(r)) + " " + units[u] // "1,006 MiB", grouped as every count
	}
	return sig3(round3(v)) + " " + units[u]
}

// Fig3 prints a figure with three significant digits: grouped whole from
// 1,000 on ("13,380") and for a whole number ("10"), else the decimals that
// show three (13.4, 1.29, 0.129, 0.0129).
func Fig3(v float64) string {
	a := math.Abs(v)
	switch {
	case (a >= 1000 || v == math.Trunc(v)) && a < 1e18:
		return Group(int64(math.Round(v))) // a whole number as it is: 10, not 10.0
	case a == 0 || a >= 1 || math.IsNaN(v) || math.IsInf(v, 0):
		if r := round3(v); math.Abs(r) >= 1000 && !math.IsInf(r, 0) {
			return Group(int64(r)) // 999.6 → 1,000
		}
		return sig3(round3(v))
	}
	return strconv.FormatFloat(v, 'f', 2-int(math.Floor(math.Log10(a))), 64)
}

// Round3 is v rounded to three significant digits (whole from 1,000 on), as
// Fig3 prints it.
func Round3(v float64) float64 { return round3(v) }

// round3 rounds v to three significant digits, or to a whole number from
// 1,000 on (a byte figure below 1,024 of its unit).
func round3(v float64) float64 {
	a := math.Abs(v)
	if a == 0 || a >= 1000 {
		return math.Round(v)
	}
	e := math.Pow(10, math.Floor(math.Log10(a))-2)
	return math.Round(v/e) * e
}
