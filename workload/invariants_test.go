package workload

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
)

// The invariants every workload's phases keep, whatever the relay does,
// and the helpers of TestEveryWorkloadKeepsTheBooks.

// Small options: every count above smallN becomes smallN, every rate above
// smallRate becomes smallRate, every length of time above smallSpan becomes
// smallSpan, a list of sizes keeps its first smallList. Waits for an answer
// (a field named …Timeout, …Grace, …Lateness, …Drain) are never shortened
// (an honest but busy relay would look slow): they keep their default, or
// take the relay case's wait.
const (
	smallN    = 12
	smallRate = 40.0
	smallSpan = 300 * time.Millisecond
	smallList = 2
)

// smallWhenZero are counts whose zero means "many" (subscribe's Events:
// rate × duration, else 10,000): they are set to smallN.
var smallWhenZero = map[string]bool{"Events": true}

var (
	waitField    = regexp.MustCompile(`Timeout|Grace|Lateness|Drain`)
	durationType = reflect.TypeOf(time.Duration(0))
	baseType     = reflect.TypeOf(Base{})
)

// smallOptions shrinks the options cfg points to (New's), in place, and
// sets Base's Timeout, and every other wait for the relay to wait (0: left
// as it is).
func smallOptions(cfg Config, timeout, wait time.Duration) {
	v := reflect.ValueOf(cfg)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("New returned %T, not a pointer to options", cfg))
	}
	shrinkOptions(v.Elem(), timeout, wait)
}

func shrinkOptions(v reflect.Value, timeout, wait time.Duration) {
	t := v.Type()
	for i := range t.NumField() {
		f, fv := t.Field(i), v.Field(i)
		if !f.IsExported() || !fv.CanSet() {
			continue
		}
		switch {
		case f.Type == baseType:
			fv.Addr().Interface().(*Base).Timeout = timeout
		case f.Type == durationType && waitField.MatchString(f.Name):
			if wait > 0 {
				fv.SetInt(int64(wait))
			}
		case f.Type == durationType:
			if fv.Int() > int64(smallSpan) {
				fv.SetInt(int64(smallSpan))
			}
		case f.Anonymous && f.Type.Kind() == reflect.Struct:
			shrinkOptions(fv, timeout, wait)
		case fv.CanInt():
			if fv.Int() > smallN || (fv.Int() == 0 && smallWhenZero[f.Name]) {
				fv.SetInt(smallN)
			}
		case fv.CanFloat():
			if fv.Float() > smallRate {
				fv.SetFloat(smallRate)
			}
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Int:
			if fv.Len() > smallList {
				fv.Set(fv.Slice(0, smallList))
			}
		}
	}
}

// mode is a workload's options with one field set to one of the values
// its enum tag allows (publish, query or mixed load; tag, author or kind
// subscriptions; …): every mode a workload declares is run.
type mode struct {
	name string // "" for New's options, else "/Field=value"
	set  func(cfg Config)
}

// modes are New's options, then each other value of each enum field of
// d's options (one field changed at a time).
func modes(d Decl) []mode {
	out := []mode{{set: func(Config) {}}}
	var walk func(t reflect.Type, path []int)
	walk = func(t reflect.Type, path []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			at := append(append([]int(nil), path...), i)
			switch {
			case !f.IsExported():
			case f.Anonymous && f.Type.Kind() == reflect.Struct:
				walk(f.Type, at)
			case f.Type.Kind() == reflect.String && f.Tag.Get("enum") != "":
				def := reflect.ValueOf(d.New()).Elem().FieldByIndex(at).String()
				for _, v := range strings.Split(f.Tag.Get("enum"), ",") {
					if v != def {
						out = append(out, mode{name: "/" + f.Name + "=" + v, set: func(cfg Config) {
							reflect.ValueOf(cfg).Elem().FieldByIndex(at).SetString(v)
						}})
					}
				}
			}
		}
	}
	walk(reflect.TypeOf(d.New()).Elem(), nil)
	return out
}

// checkBooks checks the invariants every phase keeps on any relay.
func checkBooks(t *testing.T, rc relayCase, ph results.Phase) {
	t.Helper()
	if ph.Name == "" || ph.Workload == "" || ph.Counts == nil {
		t.Errorf("phase %q (workload %q): a phase has a name, a workload and counters", ph.Name, ph.Workload)
	}
	checkAccounts(t, ph)
	checkMirrors(t, ph)
	checkVerifications(t, ph)
	wrong, incomplete, _ := judge.Phase(&ph)
	if ph.Skipped != "" {
		checkSkipped(t, ph, wrong, incomplete)
	}
	for _, w := range wrong {
		if rc.wrongOK == nil || !rc.wrongOK(ph, w) {
			t.Errorf("%s: judged wrong on a relay that did not do that wrong: %s", ph.Name, w)
		}
	}
}

// checkAccounts: each operation has exactly one outcome, and the reasons
// add up to their outcome.
func checkAccounts(t *testing.T, ph results.Phase) {
	t.Helper()
	seen := map[string]bool{}
	for _, a := range ph.Accounts {
		if seen[a.Op] {
			t.Errorf("%s: two %s accounts", ph.Name, a.Op)
		}
		seen[a.Op] = true
		if !a.Balanced() {
			t.Errorf("%s: %s account does not add up: %d outcomes for %d requested (%+v)", ph.Name, a.Op, a.Total(), a.Requested, a)
		}
		for what, n := range map[string]int64{"accepted": a.Accepted, "refused": a.Refused, "timed out": a.TimedOut,
			"connection lost": a.ConnLost, "not run": a.NotRun, "cancelled": a.Cancelled} {
			if n < 0 {
				t.Errorf("%s: %s account: %d %s", ph.Name, a.Op, n, what)
			}
		}
		if s := sumCounts(a.RefusedBy); s != a.Refused {
			t.Errorf("%s: %s account: refused %d, by class %v (sum %d)", ph.Name, a.Op, a.Refused, a.RefusedBy, s)
		}
		if s := sumCounts(a.NotRunBy); s != a.NotRun {
			t.Errorf("%s: %s account: not run %d, by why %v (sum %d)", ph.Name, a.Op, a.NotRun, a.NotRunBy, s)
		}
	}
}

// figures: the counter of an op's credited operations, the latency that
// times them and their rate. The counter equals the account's accepted, and
// so does the number of samples of the latency (each credited operation is
// timed once, nothing else is; a phase of parts splits it as <latency> and
// <latency>_alone); the rate is the counter over the phase's timed window
// (results.PerSecond, the same for every workload). In a group (a shape, a
// part, a size) with no account of its own, the latency's samples equal the
// counter. Sent has no account and no latency.
var figures = []struct{ op, count, latency, rate string }{
	{results.OpEvent, results.CountAccepted, results.LatencyOK, results.RateEvents},
	{results.OpQuery, results.CountQueries, results.LatencyEOSE, results.RateQueries},
	{results.OpQuery, results.CountSearches, results.LatencyEOSE, results.RateSearches},
	{results.OpDelivery, results.CountDeliveries, results.LatencyDeliver, results.RateDeliveries},
	{results.OpCount, results.CountCounts, results.LatencyCount, results.RateCounts},
	{"", results.CountSent, "", results.RateSent},
}

func checkMirrors(t *testing.T, ph results.Phase) {
	t.Helper()
	for _, m := range figures {
		a := ph.Account(m.op)
		if n, ok := ph.Counts[m.count]; a != nil && ok && n != a.Accepted {
			t.Errorf("%s: counts[%s] = %d, but the %s account credits %d (%s)", ph.Name, m.count, n, m.op, a.Accepted, outcome.Split(*a))
		}
		if h := ph.Latency[m.latency]; a != nil && h != nil {
			n := h.Count
			if alone := ph.Latency[m.latency+"_alone"]; alone != nil {
				n += alone.Count // a phase of parts: ok together, ok_alone alone
			}
			if n != a.Accepted {
				t.Errorf("%s: latency %s has %d samples, but the %s account credits %d (%s)", ph.Name, m.latency, n, m.op, a.Accepted, outcome.Split(*a))
			}
		}
		r, rok := ph.Rates[m.rate]
		n, nok := ph.Counts[m.count]
		if want := results.PerSecond(n, ph.Duration); rok && nok && math.Abs(r-want) > 1e-9*max(1, want) {
			t.Errorf("%s: rates[%s] = %g, but counts[%s] = %d over the %v window is %g", ph.Name, m.rate, r, m.count, n, time.Duration(ph.Duration), want)
		}
		for _, g := range ph.Groups {
			n, ok := g.Counts[m.count]
			if h := g.Latency[m.latency]; ok && h != nil && h.Count != n {
				t.Errorf("%s/%s: latency %s has %d samples, but counts[%s] = %d", ph.Name, g.Name, m.latency, h.Count, m.count, n)
			}
		}
	}
	checkPrimaryMirror(t, ph)
	var refused int64
	for _, a := range ph.Accounts {
		refused += a.Refused
	}
	if s := sumCounts(ph.Refused); s > refused {
		t.Errorf("%s: refusals by class %v (sum %d), but the accounts book %d refused", ph.Name, ph.Refused, s, refused)
	}
}

// checkVerifications: a verification passes only when answers were
// checked, its state agrees with its figures, and nothing passes when no
// answer was credited.
func checkVerifications(t *testing.T, ph results.Phase) {
	t.Helper()
	credited, answers := answerCredit(ph)
	check := func(where string, v *results.Verification) {
		if v == nil {
			return
		}
		st := v.Status()
		if v.State != "" && v.State != st {
			t.Errorf("%s: state %q, but its figures say %q (%+v)", where, v.State, st, *v)
		}
		if v.Passed != (st == results.VerificationPassed) {
			t.Errorf("%s: passed=%v with state %q", where, v.Passed, st)
		}
		if v.Checked == 0 && (v.Passed || v.State == results.VerificationPassed) {
			t.Errorf("%s: nothing checked, yet passed", where)
		}
		if answers && credited == 0 && st == results.VerificationPassed {
			t.Errorf("%s: passed, but no answer was credited (%s)", where, accountSplits(ph))
		}
	}
	check(ph.Name, ph.Verification)
	for _, g := range ph.Groups {
		check(ph.Name+"/"+g.Name, g.Verification)
	}
}

// answerCredit is the credited answers of ph's operations other than
// EVENTs (queries, subscriptions, deliveries, read-backs, counts, …), and
// whether it has any such operation.
func answerCredit(ph results.Phase) (credited int64, has bool) {
	for _, a := range ph.Accounts {
		if a.Op != results.OpEvent && a.Requested > 0 {
			credited += a.Accepted
			has = true
		}
	}
	return credited, has
}

// checkSkipped: a workload skipped on this relay did nothing the relay
// could be blamed for; the only judgement is the skip.
func checkSkipped(t *testing.T, ph results.Phase, wrong, incomplete []string) {
	t.Helper()
	for _, a := range ph.Accounts {
		if a.Requested != 0 {
			t.Errorf("%s: skipped (%s), yet it booked %s", ph.Name, ph.Skipped, outcome.Split(a))
		}
	}
	if ph.Verification != nil && ph.Verification.Status() != results.VerificationNotVerified {
		t.Errorf("%s: skipped, yet verification %s", ph.Name, ph.Verification.Status())
	}
	if len(wrong) > 0 || len(incomplete) != 1 || !strings.HasPrefix(incomplete[0], "skipped: ") {
		t.Errorf("%s: skipped, judged wrong %q, incomplete %q: want the skip alone", ph.Name, wrong, incomplete)
	}
}

// detectRefusedREQs: the relay answers every REQ with CLOSED and sends no
// event: no answer is credited, nothing verified passes, and a phase that
// sent REQs is not passed.
func detectRefusedREQs(t *testing.T, ph results.Phase) {
	t.Helper()
	credited, answers := answerCredit(ph)
	if credited != 0 {
		t.Errorf("%s: %d answers credited from a relay that refuses every REQ (%s)", ph.Name, credited, accountSplits(ph))
	}
	if v := ph.Verification; v != nil && v.Status() == results.VerificationPassed {
		t.Errorf("%s: verification passed on a relay that refuses every REQ", ph.Name)
	}
	if answers && ph.Skipped == "" && judgedPassed(ph) {
		t.Errorf("%s: judged passed, yet every REQ was refused (%s)", ph.Name, accountSplits(ph))
	}
}

// detectInvalid: every event the relay sends is corrupted: an answer that
// holds events, or should, fails; no live delivery is credited.
func detectInvalid(t *testing.T, ph results.Phase) {
	t.Helper()
	check := func(where string, v *results.Verification) {
		if v != nil && v.Checked > 0 && (v.Returned > 0 || v.Expected > 0 || v.Invalid > 0) && v.Status() != results.VerificationFailed {
			t.Errorf("%s: every event the relay sent was corrupted, yet verification %s (%+v)", where, v.Status(), *v)
		}
	}
	check(ph.Name, ph.Verification)
	for _, g := range ph.Groups {
		check(ph.Name+"/"+g.Name, g.Verification)
	}
	if a := ph.Account(results.OpDelivery); a != nil && a.Accepted > 0 {
		t.Errorf("%s: %d corrupted deliveries credited (%s)", ph.Name, a.Accepted, outcome.Split(*a))
	}
}

// detectUnanswered: only the relay's first 3 EVENTs are answered: no more
// are credited, and a phase that sent more is not passed (the others are
// timed out: unknown, never wrong, which checkBooks checks).
func detectUnanswered(t *testing.T, ph results.Phase) {
	t.Helper()
	a := ph.Account(results.OpEvent)
	if a == nil {
		return
	}
	if a.Accepted+a.Refused > 3 {
		t.Errorf("%s: %d EVENTs answered by a relay that answers 3 (%s)", ph.Name, a.Accepted+a.Refused, outcome.Split(*a))
	}
	if a.Requested > 3 && judgedPassed(ph) {
		t.Errorf("%s: judged passed, yet its EVENTs went unanswered (%s)", ph.Name, outcome.Split(*a))
	}
}

// detectForeignOKs: an OK for an id never sent follows every OK, so a
// connection that got two OKs read the first one's foreign OK: a phase
// credited more EVENTs than it can have connections counts them and is
// judged wrong.
func detectForeignOKs(t *testing.T, ph results.Phase) {
	t.Helper()
	a := ph.Account(results.OpEvent)
	if a == nil || a.Accepted <= smallN+1 {
		return
	}
	if ph.Counts[results.CountForeignOKs] == 0 {
		t.Errorf("%s: %d EVENTs credited, each OK followed by a foreign one, yet foreign_oks is 0 (counts %v)", ph.Name, a.Accepted, ph.Counts)
	}
}

// reasonMentions is a wrongOK that takes reasons containing s.
func reasonMentions(s string) func(results.Phase, string) bool {
	return func(_ results.Phase, reason string) bool { return strings.Contains(reason, s) }
}

// searchFailed is the wrongOK of a relay that announces NIP-50 and does
// not search: the verification of searches (a phase that counts them)
// fails, nothing else.
func searchFailed(ph results.Phase, reason string) bool {
	_, searches := ph.Counts[results.CountSearches]
	return searches && strings.Contains(reason, "verification failed")
}

// judgedPassed says whether the judge passes ph alone.
func judgedPassed(ph results.Phase) bool {
	wrong, incomplete, cancelled := judge.Phase(&ph)
	return len(wrong)+len(incomplete)+len(cancelled) == 0
}

func sumCounts(m map[string]int64) int64 {
	var s int64
	for _, n := range m {
		s += n
	}
	return s
}

// accountSplits is ph's accounts, one split each.
func accountSplits(ph results.Phase) string {
	var parts []string
	for _, a := range ph.Accounts {
		parts = append(parts, outcome.Split(a))
	}
	return strings.Join(parts, "; ")
}

// logPhase logs what a phase booked, for a reader of -v.
func logPhase(t *testing.T, ph results.Phase) {
	t.Helper()
	ver := "no verification"
	if v := ph.Verification; v != nil {
		ver = "verification " + v.Status()
	}
	wrong, incomplete, _ := judge.Phase(&ph)
	t.Logf("%s: %s; %s; wrong %d, incomplete %d%s", ph.Name, accountSplits(ph), ver, len(wrong), len(incomplete), skipNote(ph))
}

func skipNote(ph results.Phase) string {
	if ph.Skipped == "" {
		return ""
	}
	return "; skipped"
}

// detectUnimplemented: a relay that announces NIP-45 and NIP-77 but
// answers neither COUNT nor NEG-OPEN: nothing of them is credited or
// passed.
func detectUnimplemented(t *testing.T, ph results.Phase) {
	t.Helper()
	for _, op := range []string{results.OpCount, OpReconcile} {
		a := ph.Account(op)
		if a == nil || a.Requested == 0 {
			continue
		}
		if a.Accepted > 0 || judgedPassed(ph) {
			t.Errorf("%s: %s credited or passed by a relay that never answers it (%s)", ph.Name, op, outcome.Split(*a))
		}
		if v := ph.Verification; v != nil && v.Status() == results.VerificationPassed {
			t.Errorf("%s: verification passed, yet the relay answered no %s", ph.Name, op)
		}
	}
}

// detectRefusedEvents: every third EVENT the relay gets is refused
// ("blocked:"): a phase with 3 answered EVENTs has a refusal, booked by
// its class, and is not passed.
func detectRefusedEvents(t *testing.T, ph results.Phase) {
	t.Helper()
	onlyClass(t, ph, "blocked")
	a := ph.Account(results.OpEvent)
	if a == nil || a.Accepted+a.Refused < 3 {
		return
	}
	if a.Refused == 0 || judgedPassed(ph) {
		t.Errorf("%s: every third EVENT refused, yet %s, judged passed=%v", ph.Name, outcome.Split(*a), judgedPassed(ph))
	}
}

// detectRateLimited: the relay's only refusal is "rate-limited:", and a
// phase with refusals is not passed.
func detectRateLimited(t *testing.T, ph results.Phase) {
	t.Helper()
	onlyClass(t, ph, "rate-limited")
	for _, a := range ph.Accounts {
		if a.Refused > 0 && judgedPassed(ph) {
			t.Errorf("%s: judged passed with %s", ph.Name, outcome.Split(a))
		}
	}
}

// onlyClass: every refusal of ph is of class (the only one the relay
// gives), or the client's refusal of an answer over its cap.
func onlyClass(t *testing.T, ph results.Phase, class string) {
	t.Helper()
	for _, a := range ph.Accounts {
		for c := range a.RefusedBy {
			if c != class && c != outcome.OverCap {
				t.Errorf("%s: %s account: refusals of class %q from a relay whose refusals are %q (%s)", ph.Name, a.Op, c, class, outcome.Split(a))
			}
		}
	}
	for c := range ph.Refused {
		if c != class && c != outcome.OverCap {
			t.Errorf("%s: refusals of class %q from a relay whose refusals are %q (%v)", ph.Name, c, class, ph.Refused)
		}
	}
}

// detectCancelled: on an honest relay the user stopped the run: no work
// is blamed on the relay (timed out, connection lost, not run other than
// the client's limit), and the judge finds nothing incomplete but a skip.
func detectCancelled(t *testing.T, ph results.Phase) {
	t.Helper()
	for _, a := range ph.Accounts {
		notRun := a.NotRun
		for why, n := range a.NotRunBy {
			if strings.HasPrefix(why, outcome.WhyClientLimited) {
				notRun -= n
			}
		}
		if a.TimedOut+a.ConnLost+notRun > 0 {
			t.Errorf("%s: the user cancelled on an honest relay, yet %s", ph.Name, outcome.Split(a))
		}
	}
	_, incomplete, _ := judge.Phase(&ph)
	for _, s := range incomplete {
		if !strings.HasPrefix(s, "skipped: ") {
			t.Errorf("%s: the user cancelled on an honest relay, yet judged incomplete: %s", ph.Name, s)
		}
	}
}

// checkPrimaryMirror: the phase's refused and timed_out counters are those
// of its primary account (the first of figures whose counter the phase
// has), and sent lies between the EVENTs the relay answered and those
// requested.
func checkPrimaryMirror(t *testing.T, ph results.Phase) {
	t.Helper()
	var a *results.Account
	for _, m := range figures {
		if _, ok := ph.Counts[m.count]; ok && ph.Account(m.op) != nil {
			a = ph.Account(m.op)
			break
		}
	}
	if a == nil {
		return
	}
	for _, m := range []struct {
		count string
		n     int64
	}{{results.CountRefused, a.Refused}, {results.CountTimedOut, a.TimedOut}} {
		if n, ok := ph.Counts[m.count]; ok && n != m.n {
			t.Errorf("%s: counts[%s] = %d, but the %s account books %d (%s)", ph.Name, m.count, n, a.Op, m.n, outcome.Split(*a))
		}
	}
	// Only the answered were surely written: an EVENT can time out or
	// lose its connection before its write, and one in flight when the
	// phase stops is not run or cancelled.
	sent, ok := ph.Counts[results.CountSent]
	if answered := a.Accepted + a.Refused; ok && a.Op == results.OpEvent && (sent < answered || sent > a.Requested) {
		t.Errorf("%s: counts[sent] = %d, outside [%d answered, %d requested] (%s)", ph.Name, sent, answered, a.Requested, outcome.Split(*a))
	}
}
