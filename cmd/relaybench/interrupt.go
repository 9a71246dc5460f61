package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
)

// A measuring command interrupted (Ctrl-C, SIGTERM) before its first
// phase — while it signs the corpus, starts the relay or reaches it — has
// measured nothing. What it was doing then, and the relays it was about to
// measure, are kept here, so that the results file it still saves says so
// in words, not with a Go error (saveInterrupted).
var beforeFirst struct {
	sync.Mutex
	doing  string          // "signing the corpus", "starting strfry", …
	relays []results.Relay // the relays the command would measure
}

// notReachedTurn is why a relay of a comparison interrupted before its
// turn has no measurement.
const notReachedTurn = "cancelled: the run was interrupted before this relay's turn"

// resultsSaved is set once the command's results were written (or their
// writing failed and said so): they are not saved a second time.
var resultsSaved atomic.Bool

// forgetBeforeFirst starts a command with nothing pending: no results file
// reserved or saved, nothing being done, no stop line for a signal (tests
// run several commands in one process).
func forgetBeforeFirst() {
	pendingRun.Store(nil)
	servingRelay.Store(false)
	relayStopSignal.Store(nil)
	signalStops.Store(nil)
	resultsSaved.Store(false)
	beforeFirst.Lock()
	beforeFirst.doing, beforeFirst.relays = "", nil
	beforeFirst.Unlock()
}

// doingBeforeFirstPhase records what the command does now, before its
// first phase ("signing the corpus").
func doingBeforeFirstPhase(doing string) {
	beforeFirst.Lock()
	beforeFirst.doing = doing
	beforeFirst.Unlock()
}

// measuring records the relays the command is about to measure, named as
// they will be in the results.
func measuring(refs ...relayRef) {
	rs := make([]results.Relay, 0, len(refs))
	for _, r := range refs {
		if r.URL != "" {
			rs = append(rs, results.Relay{URL: r.URL})
		} else {
			rs = append(rs, results.Relay{Name: r.Spec.Name})
		}
	}
	beforeFirst.Lock()
	beforeFirst.relays = rs
	beforeFirst.Unlock()
}

// interruptedNote is the note of a run interrupted before its first
// phase: what it was doing, and err when it is more than the interruption.
func interruptedNote(err error) string {
	beforeFirst.Lock()
	doing := beforeFirst.doing
	beforeFirst.Unlock()
	why := ""
	if doing != "" {
		why = " (while " + doing + ")"
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		why += " (" + oneLine(err) + ")"
	}
	return "interrupted before the first phase" + why + ": nothing was measured"
}

// interruptedQuietly reports whether err is only the interruption the
// user asked for: the summary (or the signal's own line) says it, and
// "context canceled" on standard error would say nothing more.
func interruptedQuietly(ctx context.Context, err error) bool {
	return ctx.Err() != nil && errors.Is(err, context.Canceled)
}

// saveInterrupted saves the results file of a run interrupted before its
// first phase (while signing the corpus, starting the relay): the file
// holds the interruption, the relays it was to measure and no measurement;
// the summary's verdict says interrupted, and nothing is blamed on the
// relay. 130 either way. Without a results file (a command that writes
// none), the interruption is said on one line.
func saveInterrupted(ctx context.Context, err error) int {
	p := pendingRun.Load()
	if p == nil {
		beforeFirst.Lock()
		doing := beforeFirst.doing
		beforeFirst.Unlock()
		if interruptedQuietly(ctx, err) && doing != "" {
			fmt.Fprintf(os.Stderr, "relaybench: %s\n", interruptedNote(err))
		}
		return judge.Interrupted
	}
	if resultsSaved.Load() {
		return judge.Interrupted // written already
	}
	file := newResultsFile(p.command, p.started)
	note := interruptedNote(err)
	beforeFirst.Lock()
	relays := beforeFirst.relays
	beforeFirst.Unlock()
	if len(relays) == 0 {
		relays = []results.Relay{{}}
	}
	// The first relay's run says why nothing was measured; the others
	// were never reached, as compare says of the relays after a stop.
	file.Runs = append(file.Runs, results.Run{Relay: relays[0], Notes: []string{note}})
	for _, r := range relays[1:] {
		file.Runs = append(file.Runs, results.Run{Relay: r, Skipped: notReachedTurn})
	}
	_ = finishRun(ctx, file, p.path, false, nil)
	return judge.Interrupted
}
