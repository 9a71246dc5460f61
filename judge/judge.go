// Package judge gives the one judgement of a run from its results file: did
// all requested work run, did every check pass, and if not, whose doing was
// it. The CLI's exit status is the verdict's Status, so the same results
// file always gets the same status.
//
// Statuses, most severe cause first:
//
//	130  interrupted: the user stopped the run (Ctrl-C, SIGTERM); work not
//	     done is cancelled, and nothing about it is blamed on the relay
//	3    wrong answers: verification failed (invalid, missing, extra,
//	     non-matching or duplicated events) or the relay broke NIP-01
//	     (malformed frames, OKs for events never sent, EVENTs under
//	     subscription ids never opened, a conformance check of a MUST
//	     failed)
//	4    incomplete: the relay prevented requested work (timeouts, lost
//	     connections, work not run because of it, refusals other than
//	     "duplicate:"/"replaced:"/"mute:", a phase stopped for no progress,
//	     a find-max search stopped at a step the relay or the busy machine
//	     limited),
//	     or a phase's verification checked no answer ("not verified"),
//	     or a requested workload was skipped (the relay does not announce
//	     its NIP: "skipped: …"), or a conformance check ended unknown (no
//	     decisive answer) or not run (the relay refused what it needs)
//	1    error: relaybench could not run the benchmark, or a relay asked
//	     for (set-up failure, a relay skipped for want of its binary), or
//	     could not run the requested work though the relay did not prevent
//	     it (operations not run with a "client-limited:" why: the client's
//	     CPU or scheduling was the limit; a find-max search stopped at a
//	     step the client limited, see ClientShort)
//	2    usage: a threshold names a figure or relay the results do not
//	     hold (the reason lists what they hold)
//	5    thresholds failed: every requested operation ran and every check
//	     passed, but a --threshold was not met (report --fail-on: a
//	     significant change beyond its limit)
//	0    passed: every requested operation ran, every check passed and
//	     every threshold was met
//
// Thresholds come last: a relay that answered wrongly or prevented work
// gets that status whatever its figures, and figures of a run that did not
// complete are not judged against limits (their failures are still listed
// among the reasons and in the results file).
package judge

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/safe"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/threshold"
)

// Exit statuses.
const (
	Passed       = 0
	Error        = 1
	Usage        = 2
	WrongAnswers = 3
	Incomplete   = 4
	// ThresholdsFailed: a threshold (--threshold) was not met, or a
	// --fail-on change limit was crossed significantly.
	ThresholdsFailed = 5
	Interrupted      = 130
)

// Outcome names of the statuses, as written in results files.
var outcomeName = map[int]string{
	Passed: "passed", Error: "error", Usage: "usage", WrongAnswers: "wrong answers",
	Incomplete: "incomplete", ThresholdsFailed: "thresholds failed", Interrupted: "interrupted",
}

// Name is the outcome name of status s.
func Name(s int) string {
	if n, ok := outcomeName[s]; ok {
		return n
	}
	return fmt.Sprintf("status %d", s)
}

// Judge returns the verdict of f. interrupted says the user stopped the run;
// runErrs are errors that stopped relaybench itself (set-up failures). The
// reasons name each relay (when the file holds several) and phase.
func Judge(f *results.File, interrupted bool, runErrs ...error) results.Verdict {
	var wrong, incomplete, cancelled, errs, skipped []string
	for _, err := range runErrs {
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	multi := len(f.Runs) > 1
	for _, r := range f.Runs {
		who := ""
		if multi {
			who = relayName(r) + " "
		}
		if r.Skipped != "" {
			// Named in every verdict, not only when nothing worse
			// happened: a relay asked for that did not run.
			skipped = append(skipped, "not run: "+r.Skipped)
			errs = append(errs, skipped[len(skipped)-1])
			continue
		}
		// The run's errors first: a relay that died is why its phases
		// fell short, the verdict's first reason.
		for _, e := range r.Errors {
			if interrupted {
				continue // the error is the interrupt's doing
			}
			incomplete = append(incomplete, strings.TrimSpace(who+e))
		}
		w, inc, c, e := phaseReasons(r, who)
		wrong, incomplete, cancelled, errs = append(wrong, w...), append(incomplete, inc...), append(cancelled, c...), append(errs, e...)
		w, inc = Conformance(r.Conformance)
		for _, s := range w {
			wrong = append(wrong, who+s)
		}
		for _, s := range inc {
			if interrupted {
				cancelled = append(cancelled, who+s)
			} else {
				incomplete = append(incomplete, who+s)
			}
		}
		if len(r.Phases) == 0 && len(r.Conformance) == 0 && len(r.Errors) == 0 && !interrupted && len(errs) == 0 {
			incomplete = append(incomplete, strings.TrimSpace(who+"no phase ran"))
		}
	}
	if len(f.Runs) == 0 && len(errs) == 0 && !interrupted {
		errs = append(errs, "the results hold no run")
	}
	failedTh, badTh := thresholdReasons(f, multi)
	v := results.Verdict{}
	switch {
	case interrupted:
		v.Status = Interrupted
		v.Reasons = append([]string{"interrupted by the user: work not done is counted as cancelled, not blamed on the relay"}, cancelled...)
		// Wrong answers seen before the interrupt are still wrong answers.
		v.Reasons = append(v.Reasons, wrong...)
	case len(wrong) > 0:
		v.Status = WrongAnswers
		v.Reasons = append(append(wrong, incomplete...), failedTh...)
	case len(incomplete) > 0:
		v.Status = Incomplete
		v.Reasons = append(incomplete, failedTh...)
	case len(errs) > 0:
		v.Status = Error
		v.Reasons = errs
	case len(badTh) > 0:
		v.Status = Usage
		v.Reasons = append(badTh, failedTh...)
	case len(failedTh) > 0:
		v.Status = ThresholdsFailed
		v.Reasons = failedTh
	default:
		v.Status = Passed
	}
	if v.Status != Error && v.Status != Passed {
		v.Reasons = append(v.Reasons, skipped...) // Error's reasons hold them already
	}
	v.Outcome = Name(v.Status)
	return v
}

// phaseReasons are the reasons of run r's phases, each naming its phase
// (and the relay: who): wrong answers, work the relay prevented, work the
// user cancelled, and requested work the client could not run (errors).
func phaseReasons(r results.Run, who string) (wrong, incomplete, cancelled, errs []string) {
	for _, ph := range r.Phases {
		w, inc, c := Phase(&ph)
		for _, s := range w {
			wrong = append(wrong, who+ph.Name+": "+s)
		}
		for _, s := range inc {
			incomplete = append(incomplete, who+ph.Name+": "+s)
		}
		for _, s := range c {
			cancelled = append(cancelled, who+ph.Name+": "+s)
		}
		if s := ClientShort(&ph); s != "" {
			errs = append(errs, "relaybench could not run the requested work: "+who+ph.Name+": "+s)
		}
	}
	return wrong, incomplete, cancelled, errs
}

// thresholdReasons are the reasons of f's thresholds: those not met, and
// those that could not be judged (a figure or relay the results lack).
func thresholdReasons(f *results.File, multi bool) (failed, bad []string) {
	for _, t := range f.Thresholds {
		switch {
		case t.Error != "":
			bad = append(bad, "threshold "+t.Threshold+": "+t.Error)
		case !t.Passed:
			failed = append(failed, ThresholdReason(t, multi))
		}
	}
	return failed, bad
}

// Phase judges one phase: what it got wrong (wrong answers), what the relay
// prevented (incomplete) and what the user cancelled.
func Phase(ph *results.Phase) (wrong, incomplete, cancelled []string) {
	if ph.Skipped != "" {
		// The workload was requested and did not run on this relay (it
		// does not announce the NIP): the work asked for was not done.
		incomplete = append(incomplete, "skipped: "+ph.Skipped)
	}
	if v := ph.Verification; v != nil {
		switch v.Status() {
		case results.VerificationFailed:
			wrong = append(wrong, "verification failed ("+v.Faults()+")")
		case results.VerificationNotVerified:
			// The requested verification did not happen: zero answers
			// checked is never a pass. When the user cancelled the phase,
			// that is why (never blamed on the relay; what the relay did
			// refuse is in its accounts).
			if !cancelledAny(ph) {
				incomplete = append(incomplete, NotVerifiedReason)
			}
		}
	}
	if n := ph.Counts[results.CountMalformedFrames]; n > 0 {
		wrong = append(wrong, fmt.Sprintf("the relay sent %d malformed frames (NIP-01)", n))
	}
	if n := ph.Counts[results.CountUnmatchedOKs]; n > 0 && !cancelledAny(ph) { // results files before foreign_oks
		wrong = append(wrong, fmt.Sprintf("the relay sent %d OKs for events not in flight", n))
	}
	if n := ph.Counts[results.CountForeignOKs]; n > 0 {
		wrong = append(wrong, fmt.Sprintf("the relay sent %d OKs for events never sent on their connection or already answered (NIP-01)", n))
	}
	if n := ph.Counts[results.CountUnsolicitedEvents]; n > 0 {
		wrong = append(wrong, fmt.Sprintf("the relay sent %d EVENTs under subscription ids never opened (NIP-01)", n))
	}
	// find-max drives the relay until a step fails: failures in its steps are
	// the measurement, not work the relay prevented.
	search := ph.Workload == "find-max"
	for _, a := range ph.Accounts {
		if !a.Balanced() {
			wrong = append(wrong, "relaybench accounting error: "+outcome.Split(a))
			continue
		}
		if a.Cancelled > 0 {
			cancelled = append(cancelled, outcome.Split(a))
		}
		if s := preventedSplit(a); s != "" && !search {
			incomplete = append(incomplete, s)
		}
	}
	if search && ph.Rates[results.RateMaxRate] == 0 && !ph.ClientLimited && ph.Aborted == "" {
		incomplete = append(incomplete, "no rate passed: the relay did not sustain even the lowest rate tried")
	}
	if s := findMaxPrevented(ph); s != "" {
		incomplete = append(incomplete, s)
	}
	if ph.Aborted != "" && !strings.HasPrefix(ph.Aborted, "interrupted") {
		incomplete = append(incomplete, "stopped early: "+ph.Aborted)
	}
	return wrong, incomplete, cancelled
}

// ClientShort says how much of ph's requested work the client could not
// start (not run with a "client-limited:" why: its CPU or scheduling, not
// the relay, was the limit), "" when none. The run did not do what was
// asked, without the relay's doing: an error, never passed and never
// blamed on the relay. find-max's failing steps are its measurement: a
// search says only whether it stopped at a step the client limited
// (findMaxShort).
func ClientShort(ph *results.Phase) string {
	if ph.Workload == "find-max" {
		return findMaxShort(ph)
	}
	var n int64
	var whys []string
	for _, a := range ph.Accounts {
		for why, c := range a.NotRunBy {
			if c > 0 && strings.HasPrefix(why, outcome.WhyClientLimited) {
				n += c
				if w := strings.TrimSpace(strings.TrimPrefix(why, outcome.WhyClientLimited)); !slices.Contains(whys, w) {
					whys = append(whys, w)
				}
			}
		}
	}
	if n == 0 {
		return ""
	}
	slices.Sort(whys)
	return fmt.Sprintf("%s not started, the client was the limit (%s)", numfmt.Count(n, "operation"), strings.Join(whys, "; "))
}

// Conformance judges a relay's conformance checks (results.Check): a
// failed check broke a MUST (wrong answers, like a failed verification);
// a check that is unknown (no decisive answer: a wait ran out) or not run
// (the relay refused what it needs, the connection failed) is work the
// relay prevented (incomplete, never wrong); a named difference from a
// SHOULD or MAY, a pass and a NIP the relay does not announce are not
// held against it.
func Conformance(checks []results.Check) (wrong, incomplete []string) {
	for _, c := range checks {
		what := fmt.Sprintf("conformance %s (NIP-%02d %s)", c.ID, c.NIP, c.Level)
		if c.Detail != "" {
			what += ": " + safe.Line(c.Detail) // the relay's words: untrusted
		}
		switch c.Status {
		case results.CheckFail:
			wrong = append(wrong, what)
		case results.CheckUnknown, results.CheckNotRun:
			incomplete = append(incomplete, string(c.Status)+": "+what)
		}
	}
	return wrong, incomplete
}

// NotVerifiedReason is the reason given for a phase whose verification
// checked no answer.
const NotVerifiedReason = "not verified: no answer was checked (every REQ or subscription refused or unanswered): the requested verification did not happen"

// preventedSplit is the account's split when the relay prevented any of its
// work, "" otherwise.
func preventedSplit(a results.Account) string {
	blocking := a.TimedOut + a.ConnLost + a.NotRun
	for why, n := range a.NotRunBy {
		if strings.HasPrefix(why, outcome.WhyClientLimited) {
			blocking -= n // the client's limit, reported as client-limited, not the relay's doing
		}
	}
	for class, n := range a.RefusedBy {
		if !outcome.Benign(class) {
			blocking += n
		}
	}
	if blocking == 0 {
		return ""
	}
	return outcome.Split(a)
}

func cancelledAny(ph *results.Phase) bool {
	for _, a := range ph.Accounts {
		if a.Cancelled > 0 {
			return true
		}
	}
	return false
}

func relayName(r results.Run) string {
	if r.Relay.Name != "" {
		return r.Relay.Name
	}
	return r.Relay.URL
}

// ThresholdReason says why threshold t failed, e.g. "threshold
// publish.ok.p99<20ms not met: 31.2ms" (naming the relay with multi).
func ThresholdReason(t results.ThresholdResult, multi bool) string {
	who := ""
	if multi && t.Relay != "" {
		who = " by " + t.Relay
	}
	return fmt.Sprintf("threshold %s not met%s: %s", t.Threshold, who, threshold.FormatValue(t))
}

// Summary is the verdict in one line, for the end of a run's output.
func Summary(v results.Verdict) string {
	if v.Status == Passed {
		return "PASSED: all requested work ran and every check passed"
	}
	if v.Status == ThresholdsFailed && len(v.Reasons) == 0 {
		return "THRESHOLDS FAILED"
	}
	head := strings.ToUpper(v.Outcome)
	if len(v.Reasons) == 0 {
		return head
	}
	rs := append([]string(nil), v.Reasons...)
	more := ""
	if len(rs) > 3 {
		more = fmt.Sprintf("; and %d more", len(rs)-3)
		rs = rs[:3]
	}
	for i, r := range rs {
		rs[i] = clip(r)
	}
	return head + ": " + strings.Join(rs, "; ") + more
}

// summaryReason is the most of one reason the one-line summary keeps: the
// verdict in the summary and the results file keep each reason whole.
const summaryReason = 200

// clip cuts r to summaryReason bytes, at a word, marked with "…".
func clip(r string) string {
	if len(r) <= summaryReason {
		return r
	}
	cut := strings.LastIndexByte(r[:summaryReason], ' ')
	if cut < summaryReason/2 {
		cut = summaryReason
		for cut > 0 && !utf8.RuneStart(r[cut]) {
			cut--
		}
	}
	return r[:cut] + " …"
}
