// Package outcome keeps one honest account of every operation a workload was
// asked to do. Each operation — an EVENT, a REQ, an expected live delivery, a
// read-your-write probe, an open-loop slot — ends in exactly one outcome:
// accepted, refused (with its reason class), timed out, connection lost, not
// run (with why) or cancelled (the user stopped the run). A Ledger counts
// them; Settle gives every operation still without an outcome one at the end,
// so the counts always add up to what was requested. Workloads never count
// outcomes by hand.
package outcome

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/wire"
)

// Kind is an operation's outcome.
type Kind uint8

// Outcomes. None is the zero value: no outcome yet.
const (
	None      Kind = iota
	Accepted       // the relay did what was asked: OK true, EOSE, a valid delivery
	Refused        // the relay said no: OK false or CLOSED, with a reason class
	TimedOut       // no answer before the deadline
	ConnLost       // the connection dropped before an answer
	NotRun         // never attempted, with why
	Cancelled      // the user stopped the run (Ctrl-C, SIGTERM): never the relay's fault
)

var kindNames = [...]string{"none", "accepted", "refused", "timed out", "connection lost", "not run", "cancelled"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Reasons an operation was not run.
const (
	WhyConnGone  = "connection gone"    // its connection was lost and could not be replaced
	WhyAborted   = "phase aborted"      // the phase stopped early (no progress)
	WhyRelayDied = "relay died"         // the relay process exited
	WhyNotSent   = "publisher not sent" // the event it depends on was never accepted
	// WhyClientLimited starts every reason that is the client's limit, not
	// the relay's (an open-loop slot that could not start in time): such
	// work is not blamed on the relay.
	WhyClientLimited = "client-limited:"
)

// OverCap is the refusal class of an answer that grew past the client's cap
// (wire.ErrAnswerOverCap: far more events than the filters' limit before
// EOSE). The client refused to take it: it is neither credited nor
// verified, and the work counts as prevented by the relay (NIP-01: relays
// SHOULD use limit, "returning (much) more should be avoided to prevent
// overwhelming clients").
const OverCap = "answer over cap"

// Ledger counts the outcomes of operations of one kind (results.OpEvent,
// OpQuery, …). It is safe for concurrent use; Add is a few atomic adds.
type Ledger struct {
	op        string
	requested atomic.Int64
	n         [7]atomic.Int64
	mu        sync.Mutex
	refused   map[string]int64
	notRun    map[string]int64
}

// New returns a ledger for requested operations of kind op.
func New(op string, requested int64) *Ledger {
	l := &Ledger{op: op, refused: map[string]int64{}, notRun: map[string]int64{}}
	l.requested.Store(requested)
	announce(l)
	return l
}

// Op is the kind of operation the ledger counts.
func (l *Ledger) Op() string { return l.op }

// Request adds n operations to what was requested (for work whose size is
// known only as it runs, e.g. expected deliveries of accepted events).
func (l *Ledger) Request(n int64) { l.requested.Add(n) }

// Requested is the number of operations requested so far.
func (l *Ledger) Requested() int64 { return l.requested.Load() }

// Add books one operation's outcome. detail is the reason class for
// Refused and the why for NotRun; it is ignored otherwise.
func (l *Ledger) Add(k Kind, detail string) { l.AddN(k, detail, 1) }

// AddN books n operations with the same outcome.
func (l *Ledger) AddN(k Kind, detail string, n int64) {
	if n <= 0 || k == None {
		return
	}
	l.n[k].Add(n)
	switch k {
	case Refused, NotRun:
		if detail == "" {
			detail = "other"
		}
		l.mu.Lock()
		if k == Refused {
			l.refused[detail] += n
		} else {
			l.notRun[detail] += n
		}
		l.mu.Unlock()
	}
}

// Count is the number of operations booked with outcome k.
func (l *Ledger) Count(k Kind) int64 { return l.n[k].Load() }

// Booked is the number of operations with an outcome.
func (l *Ledger) Booked() int64 {
	var t int64
	for k := Accepted; k <= Cancelled; k++ {
		t += l.n[k].Load()
	}
	return t
}

// Open is the number of requested operations still without an outcome.
func (l *Ledger) Open() int64 { return l.requested.Load() - l.Booked() }

// Settle gives every operation still without an outcome the outcome k
// (NotRun with why, or Cancelled) and returns how many it settled. Call it
// once the phase's work has stopped.
func (l *Ledger) Settle(k Kind, why string) int64 {
	n := l.Open()
	l.AddN(k, why, n)
	return n
}

// SettleFor settles the open operations as Cancelled when ctx was cancelled
// by the user, and as NotRun with why otherwise.
func (l *Ledger) SettleFor(ctx context.Context, why string) int64 {
	if ctx.Err() != nil {
		return l.Settle(Cancelled, "")
	}
	return l.Settle(NotRun, why)
}

// Result is the ledger as a results account.
func (l *Ledger) Result() results.Account {
	a := results.Account{
		Op:        l.op,
		Requested: l.requested.Load(),
		Accepted:  l.n[Accepted].Load(),
		Refused:   l.n[Refused].Load(),
		TimedOut:  l.n[TimedOut].Load(),
		ConnLost:  l.n[ConnLost].Load(),
		NotRun:    l.n[NotRun].Load(),
		Cancelled: l.n[Cancelled].Load(),
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.refused) > 0 {
		a.RefusedBy = make(map[string]int64, len(l.refused))
		for k, v := range l.refused {
			a.RefusedBy[k] = v
		}
	}
	if len(l.notRun) > 0 {
		a.NotRunBy = make(map[string]int64, len(l.notRun))
		for k, v := range l.notRun {
			a.NotRunBy[k] = v
		}
	}
	return a
}

// OfErr classifies the error of an operation that got no answer: Cancelled
// when the user's ctx ended, TimedOut on a deadline, Refused for an answer
// over the client's cap (class OverCap, see OfErrDetail), ConnLost
// otherwise. userCtx is the run's context (cancelled only by Ctrl-C or
// SIGTERM), not the operation's own deadline context.
func OfErr(userCtx context.Context, err error) Kind {
	switch {
	case err == nil:
		return None
	case userCtx.Err() != nil:
		return Cancelled
	case errors.Is(err, wire.ErrAnswerOverCap):
		return Refused
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, wire.ErrTimeout):
		return TimedOut
	case errors.Is(err, context.Canceled):
		// a cancel that is not the user's: the phase stopping its own work
		return NotRun
	}
	return ConnLost
}

// OfErrDetail is OfErr with the detail to book: the refusal class (OverCap)
// or, for NotRun, why (WhyAborted: the phase stopped its own work).
func OfErrDetail(userCtx context.Context, err error) (Kind, string) {
	switch k := OfErr(userCtx, err); k {
	case Refused:
		return k, OverCap
	case NotRun:
		return k, WhyAborted
	default:
		return k, ""
	}
}

// OfOK classifies an OK (or its failure) for an EVENT: Accepted, Refused
// (detail: the reason class), TimedOut, ConnLost or Cancelled.
func OfOK(userCtx context.Context, ok wire.OK, err error) (Kind, string) {
	if err == nil {
		err = ok.Err
	}
	if err != nil {
		return OfErrDetail(userCtx, err)
	}
	if ok.Accepted {
		return Accepted, ""
	}
	return Refused, RefusalClass(ok.Class)
}

// RefusalClass is the class name a refusal is booked under.
func RefusalClass(c wire.Class) string {
	if c == wire.ClassNone {
		return string(wire.ClassOther)
	}
	return string(c)
}

// Benign refusal classes: the relay says it already holds the event (or a
// newer version of it), or that nobody listened to an ephemeral event. Such a
// refusal is a correct answer, not work the relay prevented.
func Benign(class string) bool {
	switch wire.Class(class) {
	case wire.ClassDuplicate, wire.ClassMute, wire.ClassReplaced:
		return true
	}
	return false
}

// Split is the one-line outcome split of an account, e.g.
// "2,000 events: 1,500 accepted, 500 refused (rate-limited 500)".
func Split(a results.Account) string {
	var parts []string
	add := func(n int64, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", numfmt.Group(n), what))
		}
	}
	add(a.Accepted, "accepted")
	if a.Refused > 0 {
		parts = append(parts, fmt.Sprintf("%s refused (%s)", numfmt.Group(a.Refused), byCount(a.RefusedBy)))
	}
	add(a.TimedOut, "timed out")
	add(a.ConnLost, "connection lost")
	if a.NotRun > 0 {
		parts = append(parts, fmt.Sprintf("%s not run (%s)", numfmt.Group(a.NotRun), byCount(a.NotRunBy)))
	}
	add(a.Cancelled, "cancelled")
	if len(parts) == 0 {
		parts = append(parts, "none done")
	}
	s := fmt.Sprintf("%s %s: %s", numfmt.Group(a.Requested), Noun(a.Op, a.Requested), strings.Join(parts, ", "))
	if !a.Balanced() {
		s += fmt.Sprintf(" [ACCOUNTING ERROR: %s outcomes for %s requested]", numfmt.Group(a.Total()), numfmt.Group(a.Requested))
	}
	return s
}

// Noun is what n operations of op are called ("1 event", "2 queries",
// "3 read-backs").
func Noun(op string, n int64) string {
	names := map[string][2]string{
		results.OpEvent:    {"event", "events"},
		results.OpQuery:    {"query", "queries"},
		results.OpDelivery: {"delivery", "deliveries"},
		results.OpRead:     {"read-back", "read-backs"},
		results.OpSub:      {"subscription", "subscriptions"},
	}
	p, ok := names[op]
	if !ok {
		p = [2]string{op, op + "s"}
	}
	if n == 1 {
		return p[0]
	}
	return p[1]
}

// MostFirst returns the keys of counts, most counted first (ties by key,
// so the order never depends on map iteration).
func MostFirst[N int | int64](counts map[string]N) []string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

func byCount(m map[string]int64) string {
	keys := MostFirst(m)
	if len(keys) == 1 {
		return keys[0] // its count is the outcome's, said before it
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		// The count first: a reason may end in a flag or a number
		// ("not started within --load-max-lateness"), which a count after
		// it would read as the flag's value.
		parts[i] = fmt.Sprintf("%s %s", numfmt.Group(m[k]), k)
	}
	return strings.Join(parts, "; ")
}

// Book books the answer to one EVENT (its OK, or the error instead) and
// returns its outcome and refusal class. userCtx is the run's context; an
// error caused by the phase stopping its own work (a Watchdog abort) is
// NotRun (WhyAborted).
func (l *Ledger) Book(userCtx context.Context, ok wire.OK, err error) (Kind, string) {
	k, class := OfOK(userCtx, ok, err)
	l.Add(k, class)
	return k, class
}

// BookErr books an operation that ended with err (nil: Accepted).
func (l *Ledger) BookErr(userCtx context.Context, err error) Kind {
	if err == nil {
		l.Add(Accepted, "")
		return Accepted
	}
	k, detail := OfErrDetail(userCtx, err)
	l.Add(k, detail)
	return k
}
