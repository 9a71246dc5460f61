package outcome

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/relaybench/relaybench/wire"
)

// ErrAborted is the cause of a phase context the Watchdog cancelled.
var ErrAborted = errors.New("phase aborted: the relay made no progress")

// Watchdog stops a phase early when the relay makes no progress: after Limit
// operations in a row ended without an answer (timed out, connection lost)
// and none succeeded in between, or Limit answers in a row failed
// verification (Answer), it cancels the phase's context with a one-line
// reason. Work not done after that is NotRun (WhyAborted), never
// waited for one timeout at a time. It is safe for concurrent use.
type Watchdog struct {
	limit  int64
	what   string
	fails  atomic.Int64
	wrong  atomic.Int64 // answers in a row that failed verification
	cancel context.CancelCauseFunc
	once   sync.Once
	mu     sync.Mutex
	why    string
	user   context.Context
	lost   error // the last connection loss counted (see BookErr)
}

// NewWatchdog returns a phase context derived from the user's ctx and the
// watchdog that cancels it. what names the operation in the reason, e.g.
// "queries ended without EOSE".
func NewWatchdog(ctx context.Context, limit int, what string) (context.Context, *Watchdog) {
	if limit < 1 {
		limit = 1
	}
	pctx, cancel := context.WithCancelCause(ctx)
	return pctx, &Watchdog{limit: int64(limit), what: what, cancel: cancel, user: ctx}
}

// Progress records an operation that got its answer.
func (w *Watchdog) Progress() { w.fails.Store(0) }

// Book records an outcome: Accepted and Refused are progress (the relay
// answered); TimedOut and ConnLost count towards the limit.
func (w *Watchdog) Book(k Kind) {
	switch k {
	case Accepted, Refused:
		w.Progress()
	case TimedOut, ConnLost:
		if n := w.fails.Add(1); n >= w.limit {
			w.Abort(fmt.Sprintf("%d %s in a row, nothing answered in between", n, w.what))
		}
	}
}

// BookErr is Book for an outcome that ended with err: the events one lost
// connection had in flight share one error value (wire.LostError), and
// that loss counts once towards the limit, not once per event: a relay
// that closes a connection with a full window in flight has made one
// failure, not a window's worth in a row.
func (w *Watchdog) BookErr(k Kind, err error) {
	if k == ConnLost && err != nil {
		var lost *wire.LostError
		if errors.As(err, &lost) {
			w.mu.Lock()
			seen := w.lost == error(lost)
			w.lost = lost
			w.mu.Unlock()
			if seen {
				return
			}
		}
	}
	w.Book(k)
}

// Answer records a complete answer the client checked: valid (it held
// what was asked for, valid) is progress; wrong (it held only events that
// failed verification: a bad id or signature, outside the filter) counts
// toward Limit, so that a relay that corrupts every answer stops the
// phase at once instead of having each answer retried to its deadline.
// An answer holding nothing yet is neither.
func (w *Watchdog) Answer(valid, wrong bool) {
	switch {
	case valid:
		w.wrong.Store(0)
	case wrong:
		if n := w.wrong.Add(1); n >= w.limit {
			w.Abort(fmt.Sprintf("%d answers in a row failed verification (invalid id or signature, or outside the filter), none valid in between", n))
		}
	}
}

// Abort stops the phase now with why (the first reason wins). It does
// nothing once the user has interrupted the run.
func (w *Watchdog) Abort(why string) {
	if w.user.Err() != nil {
		return
	}
	w.once.Do(func() {
		w.mu.Lock()
		w.why = why
		w.mu.Unlock()
		w.cancel(ErrAborted)
	})
}

// Aborted is the reason the phase was stopped early, "" if it was not.
func (w *Watchdog) Aborted() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.why
}

// Stop releases the phase context.
func (w *Watchdog) Stop() { w.cancel(nil) }

// Settle gives l's open operations their end outcome: Cancelled when the
// user interrupted, NotRun (WhyAborted) when the watchdog stopped the phase,
// NotRun with why otherwise.
func (w *Watchdog) Settle(l *Ledger, why string) int64 {
	switch {
	case w.user.Err() != nil:
		return l.Settle(Cancelled, "")
	case w.Aborted() != "":
		return l.Settle(NotRun, WhyAborted)
	}
	return l.Settle(NotRun, why)
}
