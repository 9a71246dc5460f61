package outcome

import "github.com/relaybench/relaybench/internal/watch"

// watchers see every ledger made while they are registered: a live view
// of a run (package live) reads their counts as the run goes, with the
// same atomic loads Result uses. Watching adds nothing to the booking path.
var watchers watch.Set[*Ledger]

// Watch calls fn with every ledger New makes from now on, until stop is
// called. fn runs on the goroutine calling New: it must only keep the
// pointer and return.
func Watch(fn func(*Ledger)) (stop func()) { return watchers.Add(fn) }

// announce tells the watchers about a new ledger.
func announce(l *Ledger) { watchers.Announce(l) }
