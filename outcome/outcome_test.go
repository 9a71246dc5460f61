package outcome

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/wire"
)

func TestLedgerAddsUp(t *testing.T) {
	l := New(results.OpEvent, 10)
	l.Add(Accepted, "")
	l.AddN(Refused, "rate-limited", 3)
	l.Add(TimedOut, "")
	l.Add(ConnLost, "")
	if n := l.Settle(NotRun, WhyConnGone); n != 4 {
		t.Fatalf("settled %d, want 4", n)
	}
	a := l.Result()
	if !a.Balanced() || a.NotRunBy[WhyConnGone] != 4 || a.RefusedBy["rate-limited"] != 3 {
		t.Fatalf("account %+v", a)
	}
	s := Split(a)
	for _, want := range []string{"10 events", "1 accepted", "3 refused (rate-limited)", "1 timed out", "1 connection lost", "4 not run (connection gone)"} {
		if !strings.Contains(s, want) {
			t.Errorf("split %q lacks %q", s, want)
		}
	}
	// Several reasons: each with its count first, so that a reason ending
	// in a flag never reads as taking the count as its value.
	b := results.Account{Op: results.OpEvent, Requested: 5, NotRun: 5,
		NotRunBy: map[string]int64{"not started within --load-max-lateness": 3, "connection gone": 2}}
	if got, want := Split(b), "5 events: 5 not run (3 not started within --load-max-lateness; 2 connection gone)"; got != want {
		t.Errorf("split %q, want %q", got, want)
	}
	l.Add(Accepted, "") // one outcome too many
	if l.Result().Balanced() || !strings.Contains(Split(l.Result()), "ACCOUNTING ERROR") {
		t.Fatal("an unbalanced account must be flagged")
	}
}

func TestOfErrNeverBlamesTheRelayForAnInterrupt(t *testing.T) {
	user, cancel := context.WithCancel(context.Background())
	if k := OfErr(user, wire.ErrTimeout); k != TimedOut {
		t.Fatalf("timeout: %v", k)
	}
	if k := OfErr(user, wire.ErrClosed); k != ConnLost {
		t.Fatalf("closed: %v", k)
	}
	if k := OfErr(user, context.DeadlineExceeded); k != TimedOut {
		t.Fatalf("deadline: %v", k)
	}
	cancel()
	for _, err := range []error{wire.ErrTimeout, wire.ErrClosed, context.Canceled, errors.New("x")} {
		if k := OfErr(user, err); k != Cancelled {
			t.Fatalf("after the interrupt %v must be cancelled, got %v", err, k)
		}
	}
}

func TestOfOK(t *testing.T) {
	ctx := context.Background()
	if k, _ := OfOK(ctx, wire.OK{Accepted: true}, nil); k != Accepted {
		t.Fatal(k)
	}
	if k, c := OfOK(ctx, wire.OK{Class: wire.ClassRateLimited}, nil); k != Refused || c != "rate-limited" {
		t.Fatal(k, c)
	}
	if k, c := OfOK(ctx, wire.OK{}, nil); k != Refused || c != "other" {
		t.Fatal(k, c)
	}
	if k, _ := OfOK(ctx, wire.OK{Err: wire.ErrTimeout}, nil); k != TimedOut {
		t.Fatal(k)
	}
	if !Benign("duplicate") || !Benign("replaced") || Benign("rate-limited") {
		t.Fatal("benign classes")
	}
}

func TestWatchdogAbortsAfterLimit(t *testing.T) {
	user := context.Background()
	pctx, w := NewWatchdog(user, 3, "queries ended without EOSE")
	defer w.Stop()
	w.Book(TimedOut)
	w.Book(TimedOut)
	w.Book(Accepted) // progress resets
	w.Book(TimedOut)
	w.Book(ConnLost)
	if pctx.Err() != nil {
		t.Fatal("aborted too early")
	}
	w.Book(TimedOut)
	if pctx.Err() == nil || !errors.Is(context.Cause(pctx), ErrAborted) {
		t.Fatal("not aborted after 3 failures in a row")
	}
	if !strings.Contains(w.Aborted(), "3 queries ended without EOSE in a row") {
		t.Fatalf("reason %q", w.Aborted())
	}
	l := New(results.OpQuery, 5)
	l.Add(Accepted, "")
	if n := w.Settle(l, WhyConnGone); n != 4 || l.Result().NotRunBy[WhyAborted] != 4 {
		t.Fatalf("settle %d %+v", n, l.Result())
	}
}

func TestWatchdogYieldsToTheUser(t *testing.T) {
	user, cancel := context.WithCancel(context.Background())
	_, w := NewWatchdog(user, 1, "x")
	cancel()
	w.Book(TimedOut)
	if w.Aborted() != "" {
		t.Fatal("an interrupted phase must not be reported as aborted by the relay")
	}
	l := New(results.OpQuery, 2)
	w.Settle(l, WhyConnGone)
	if l.Result().Cancelled != 2 {
		t.Fatalf("%+v", l.Result())
	}
}

// The events one lost connection had in flight share one error: the loss
// counts once towards the watchdog's limit, however full the window was;
// losses of different connections each count.
func TestWatchdogCountsALostConnectionOnce(t *testing.T) {
	_, wd := NewWatchdog(context.Background(), 2, "EVENTs without an OK")
	first := &wire.LostError{Cause: errors.New("reset")}
	for range 50 {
		wd.BookErr(ConnLost, first)
	}
	if why := wd.Aborted(); why != "" {
		t.Fatalf("one lost connection with 50 events in flight aborted the phase: %s", why)
	}
	wd.BookErr(ConnLost, &wire.LostError{Cause: errors.New("reset")})
	if wd.Aborted() == "" {
		t.Fatal("two connections lost in a row, nothing answered: not aborted")
	}
	_, wd = NewWatchdog(context.Background(), 2, "EVENTs without an OK")
	for range 2 {
		wd.BookErr(TimedOut, nil) // timeouts count one by one, as before
	}
	if wd.Aborted() == "" {
		t.Fatal("two timeouts in a row: not aborted")
	}
}
