// Package flagcheck checks the values of a command's flags before anything
// starts: before a corpus is signed, a relay started or a file written.
// Every numeric, duration and list flag has a range; a value out of range is
// refused, never replaced by a default, with a one-line error naming the
// flag and the value (--events -5: must be at least 1). What a run's counts
// cost, in memory, disk and open files, is checked the same way (budget.go).
//
// The CLI's shared flag groups and the workloads' options (workload.Checked)
// both check with a Ranges, which keeps the first bad value found.
package flagcheck

import (
	"fmt"
	"math"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/numfmt"
)

// Ranges keeps the first bad flag value found.
type Ranges struct{ err error }

// Err is the first bad flag value found, nil when none.
func (r *Ranges) Err() error { return r.err }

// Add keeps err when it is the first.
func (r *Ranges) Add(err error) {
	if r.err == nil && err != nil {
		r.err = err
	}
}

// Bad refuses v, the value of flag, for the reason format says.
func (r *Ranges) Bad(flag string, v any, format string, args ...any) {
	r.Add(fmt.Errorf("--%s %v: %s", flag, v, fmt.Sprintf(format, args...)))
}

// Min: an integer of at least lo.
func (r *Ranges) Min(flag string, v, lo int) {
	if v < lo {
		r.Bad(flag, v, "must be at least %s", numfmt.Group(int64(lo)))
	}
}

// Min64: an int64 of at least lo.
func (r *Ranges) Min64(flag string, v, lo int64) {
	if v < lo {
		r.Bad(flag, v, "must be at least %s", numfmt.Group(lo))
	}
}

// Between: an integer from lo to hi.
func (r *Ranges) Between(flag string, v, lo, hi int) {
	switch {
	case v < lo:
		r.Bad(flag, v, "must be at least %s", numfmt.Group(int64(lo)))
	case v > hi:
		r.Bad(flag, v, "must be at most %s", numfmt.Group(int64(hi)))
	}
}

// Positive: a duration above 0.
func (r *Ranges) Positive(flag string, d time.Duration) {
	if d <= 0 {
		r.Bad(flag, d, "must be a positive duration")
	}
}

// NotNegative: a duration of 0 or more (0 meaning what the help says).
func (r *Ranges) NotNegative(flag string, d time.Duration) {
	if d < 0 {
		r.Bad(flag, d, "must not be negative")
	}
}

// Rate: a finite number above 0, or at least 0 with zeroOK.
func (r *Ranges) Rate(flag string, v float64, zeroOK bool) {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		r.Bad(flag, v, "must be a finite number")
	case zeroOK && v < 0:
		r.Bad(flag, v, "must not be negative")
	case !zeroOK && v <= 0:
		r.Bad(flag, v, "must be above 0")
	}
}

// Fraction: a number strictly between 0 and 1.
func (r *Ranges) Fraction(flag string, v float64) {
	if !(v > 0 && v < 1) {
		r.Bad(flag, v, "must be a fraction between 0 and 1 (exclusive)")
	}
}

// Size: content bytes, 1 to the corpus's cap.
func (r *Ranges) Size(flag string, v int) {
	r.Between(flag, v, 1, corpus.MaxAvgSize)
}

// Sane maxima of the counts no machine's memory check bounds (each is far
// beyond what one client machine can do, so a value above is a typo or an
// overflow, never a plan): refused as usage errors naming the flag.
const (
	// MaxRate: operations per second one client could ever sign and send
	// (relaybench signs a few tens of thousands of events a second a core).
	MaxRate = 1_000_000
	// MaxRunEvents: events one run could ever sign and send.
	MaxRunEvents = 1_000_000_000
	// MaxWindow: unacknowledged EVENTs one connection may have in flight.
	MaxWindow = 1_000_000
	// MaxQueryLimit: the limit of a REQ filter (NIP-01 limits are small;
	// relays cap them at hundreds to thousands).
	MaxQueryLimit = 1_000_000
)

// RateMax refuses a rate (the value of flag) that is not finite, not above
// 0 (at least 0 with zeroOK), above MaxRate, or that over d (the run's
// length, named durFlag; 0: unknown) would send more than MaxRunEvents.
func (r *Ranges) RateMax(flag string, v float64, zeroOK bool, durFlag string, d time.Duration) {
	r.Rate(flag, v, zeroOK)
	if r.err != nil {
		return
	}
	switch n := v * d.Seconds(); {
	case v > MaxRate:
		r.Bad(flag, v, "must be at most %s/s (more than one client could ever sign and send)", numfmt.Group(MaxRate))
	case d > 0 && n > MaxRunEvents:
		r.Bad(flag, v, "× --%s %v is %s events, more than the %s one run may send", durFlag, d, groupFloat(n), numfmt.Group(MaxRunEvents))
	}
}

// groupFloat prints a whole count held in a float with thousands
// separators (3,600,000,000,000), as every count the CLI prints; one too
// large for an int64 in %.3g form.
func groupFloat(v float64) string {
	if math.Abs(v) >= math.MaxInt64 {
		return fmt.Sprintf("%.3g", v)
	}
	return numfmt.Group(int64(math.Round(v)))
}

// Window refuses a window of unacknowledged EVENTs (the value of flag)
// above MaxWindow, or, when above its default dflt, above the events of
// the run (events > 0): a window no connection could fill.
func (r *Ranges) Window(flag string, w, dflt int, events float64) {
	switch {
	case w > MaxWindow:
		r.Bad(flag, w, "must be at most %s", numfmt.Group(MaxWindow))
	case w > dflt && events > 0 && float64(w) > events:
		r.Bad(flag, w, "is more than the %s events of the run: no connection could fill it", groupFloat(events))
	}
}

// QueryLimit refuses a filter limit (the value of flag) below 1 or above
// MaxQueryLimit.
func (r *Ranges) QueryLimit(flag string, v int) {
	if v > MaxQueryLimit {
		r.Bad(flag, v, "must be at most %s (NIP-01 limits are small: relays cap them at hundreds to thousands)", numfmt.Group(MaxQueryLimit))
		return
	}
	r.Min(flag, v, 1)
}

// Span refuses a length of time n×d (the value of flag) beyond what a
// time.Duration holds (292 years).
func (r *Ranges) Span(flag string, v any, n float64, d time.Duration) {
	if s := n * d.Seconds(); s > float64(math.MaxInt64)/1e9 || math.IsNaN(s) {
		r.Bad(flag, v, "makes the run longer than 292 years (the longest time relaybench can count)")
	}
}
