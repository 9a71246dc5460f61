package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/relaybench/relaybench/internal/numfmt"
)

// dash stands for a figure the results file does not hold. It is never
// replaced by a guess.
const dash = "–"

// fmtInt formats n with thousands separators: 12345 → "12,345".
var fmtInt = numfmt.Group

// fmtFloat formats v with prec decimals and thousands separators.
func fmtFloat(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return dash
	}
	s := strconv.FormatFloat(math.Abs(v), 'f', prec, 64)
	intPart, frac := s, ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		intPart, frac = s[:i], s[i:]
	}
	n, _ := strconv.ParseInt(intPart, 10, 64)
	out := fmtInt(n) + frac
	if v < 0 && strings.Trim(out, "0.,") != "" {
		out = "-" + out
	}
	return out
}

// fmtRate formats a per-second rate: two decimals below 100, none above.
func fmtRate(v float64) string {
	if math.Abs(v) >= 100 {
		return fmtFloat(v, 0)
	}
	return fmtFloat(v, 2)
}

// fmtMiBps formats a data rate in MiB/s with three significant digits, as
// byte counts are (fmtBytes): 0.123, 7.99, 12.3, 123, and whole numbers
// with separators from 1,000 on; a sweep's small payloads read "0.1"
// where "0.123" was measured.
func fmtMiBps(v float64) string {
	a := math.Abs(v)
	if a == 0 || a >= 999.5 || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmtFloat(v, 0)
	}
	e := math.Floor(math.Log10(a)) - 2
	v = math.Round(v/math.Pow(10, e)) * math.Pow(10, e) // 9.996 is 10.0, not 10.00
	return fmtFloat(v, max(0, 2-int(math.Floor(math.Log10(math.Abs(v))))))
}

// fmtDur formats nanoseconds with a human unit and three significant digits:
// 950ns, 12.3µs, 1.29ms, 3.57s, 74.4s, 16.7min (numfmt.DurNs, the one rule).
var fmtDur = numfmt.DurNs

// fmtBytes formats a size in binary units (1 KiB = 1024 B, 1 MiB = 2^20 B,
// 1 GiB = 2^30 B) with three significant digits: one convention for every
// byte count and memory size, as payload sizes and the machine's memory
// are counted, and the workloads' notes say them (numfmt.Bytes).
func fmtBytes(b float64) string { return numfmt.Bytes(b) }

// fmtPayload formats a payload size the way sweep tables label them:
// 256 B, 1 KiB, 128 KiB (binary multiples, as payload sizes usually are).
func fmtPayload(b float64) string {
	switch {
	case b >= 1<<20 && math.Mod(b, 1<<20) == 0:
		return fmt.Sprintf("%.0f MiB", b/(1<<20))
	case b >= 1<<10 && math.Mod(b, 1<<10) == 0:
		return fmt.Sprintf("%.0f KiB", b/(1<<10))
	default:
		return fmt.Sprintf("%.0f B", b)
	}
}

// fmtPct formats a ratio (0.31) as a percentage ("31%").
func fmtPct(r float64) string {
	return strconv.FormatFloat(r*100, 'f', 0, 64) + "%"
}

// fmtDelta formats a relative change in percent with a sign: "+3.5%".
func fmtDelta(base, cand float64) string {
	if base == 0 {
		return dash
	}
	d := (cand - base) / math.Abs(base) * 100
	return fmt.Sprintf("%+.1f%%", d)
}

// fmtTime formats a timestamp in UTC to the second.
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return dash
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// title capitalises the first letter of a phase name: "publish" → "Publish".
func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
