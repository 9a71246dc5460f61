// Package progress shows how far a long phase is: a live bar on a terminal
// (mpb), plain lines in the reference suite's style ("  Published 1,000
// events...", counts grouped as in the summary) when the output is not a terminal, nothing when disabled.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/sys/unix"

	"github.com/relaybench/relaybench/internal/numfmt"
)

// Reporter makes one progress display per phase.
type Reporter struct {
	w       io.Writer
	tty     bool
	enabled bool
	tap     func(label string, total int64) func(done int64)
	drawn   *atomic.Pointer[mpb.Progress] // the bar drawn now on a terminal (nil: none); shared by copies
}

// Write prints b (whole lines) to the reporter's writer: above the bar
// drawn now on a terminal, so that a line a workload says while its bar
// runs (mixed's parts) is neither erased nor breaks the bar.
func (r *Reporter) Write(b []byte) (int, error) {
	if r.drawn != nil {
		if p := r.drawn.Load(); p != nil {
			if n, err := p.Write(b); err == nil {
				return n, nil
			}
		}
	}
	return r.w.Write(b)
}

// Tap makes every phase also report to tap (a live view of the run), with
// or without a display. Call it before the first phase.
func (r *Reporter) Tap(tap func(label string, total int64) func(done int64)) { r.tap = tap }

// New returns a reporter writing to w (normally os.Stderr).
func New(w io.Writer, enabled bool) *Reporter {
	r := &Reporter{w: w, enabled: enabled, drawn: &atomic.Pointer[mpb.Progress]{}}
	if f, ok := w.(*os.File); ok {
		_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
		r.tty = err == nil
	}
	return r
}

// Phase starts a display for a phase of total units, labelled label (e.g.
// "Publishing 10000 events to ws://…"), with unit naming what is counted in
// the plain-line form ("Published %d events..."). It returns the update
// function (called with the running count; safe from any goroutine) and a
// stop function that must be called when the phase ends.
//
// A label made by Counting carries its own count lines' form, which
// replaces doneFmt; an empty doneFmt with none counts "Done %d of N...".
func (r *Reporter) Phase(label, doneFmt string, total int64) (update func(done int64), stop func()) {
	if l, f := Split(label); f != "" {
		label, doneFmt = l, f
	} else if doneFmt == "" {
		doneFmt = CountFmt("Done", "", "", total)
	}
	if r != nil && r.tap != nil {
		seen := r.tap(label, total)
		r2 := *r
		r2.tap = nil
		show, stop := r2.Phase(label, doneFmt, total)
		return func(done int64) { seen(done); show(done) }, stop
	}
	if r == nil || !r.enabled {
		return func(int64) {}, func() {}
	}
	if r.tty {
		p := mpb.New(mpb.WithOutput(r.w), mpb.WithWidth(40), mpb.WithAutoRefresh()) // r.tty: a terminal, as mpb finds too
		bar := p.AddBar(total,
			mpb.PrependDecorators(decor.Name(label+" ")),
			mpb.AppendDecorators(decor.CountersNoUnit("%d/%d"), decor.Name(" "), decor.AverageSpeed(0, "%.0f/s")),
		)
		if r.drawn != nil {
			r.drawn.Store(p)
		}
		var mu sync.Mutex
		var last int64
		return func(done int64) {
				mu.Lock()
				defer mu.Unlock()
				if done > last {
					bar.IncrInt64(done - last)
					last = done
				}
			}, func() {
				mu.Lock()
				if last < total {
					bar.Abort(false)
				}
				mu.Unlock()
				p.Wait()
				if r.drawn != nil {
					r.drawn.CompareAndSwap(p, nil)
				}
			}
	}
	fmt.Fprintln(r.w, label+"...")
	step := total / 10
	if step < 1 {
		step = 1
	}
	var mu sync.Mutex
	next := step
	return func(done int64) {
		mu.Lock()
		defer mu.Unlock()
		for done >= next && next <= total { // every tenth, and the total last
			fmt.Fprintf(r.w, "  "+doneFmt+"\n", grouped(next))
			if next == total {
				next++
			} else {
				next = min(next+step, total)
			}
		}
	}, func() {}
}

// grouped prints a count with thousands separators (3,000) for %d, as the
// summary does.
type grouped int64

func (g grouped) Format(f fmt.State, _ rune) { fmt.Fprint(f, numfmt.Group(int64(g))) }

// unitSep joins a label and the form of its count lines (Counting).
const unitSep = "\x1f"

// Counting is a phase's label that also names what the phase counts, so
// that every count line says done of total and of what ("Timed 20 of 200
// events...", never "Done 20..."): verb is the work in the past tense,
// one and many the unit, many with the makeup of the total where it has
// one ("rounds (3 scenarios × 10)"). Each phase names its unit this way
// when it starts; Phase reads it, and shows and taps label alone.
func Counting(label, verb, one, many string, total int64) string {
	return label + unitSep + CountFmt(verb, one, many, total)
}

// Split gives the label shown of a label made by Counting, and its count
// lines' form ("" for a label that names no unit).
func Split(label string) (shown, doneFmt string) {
	shown, doneFmt, _ = strings.Cut(label, unitSep)
	return shown, doneFmt
}

// CountFmt is a count line's format for done of total things, the total
// always said ("Executed 1 of 5 queries...", never "Executed 1
// queries...", nor "Executed 2 queries..." of an unsaid total).
func CountFmt(verb, one, many string, total int64) string {
	esc := func(s string) string { return strings.ReplaceAll(s, "%", "%%") }
	if total == 1 {
		return strings.TrimSuffix(esc(verb)+" %d "+esc(one), " ") + "..."
	}
	return strings.TrimSuffix(fmt.Sprintf("%s %%d of %s %s", esc(verb), numfmt.Group(total), esc(many)), " ") + "..."
}
