package outcome

import "sync"

// A watcher sees every ledger made while it is registered: a live view of
// a run (package live) reads their counts as the run goes, with the same
// atomic loads Result uses. Watching adds nothing to the booking path.
var (
	watchMu  sync.Mutex
	watchers = map[int]func(*Ledger){}
	watchID  int
)

// Watch calls fn with every ledger New makes from now on, until stop is
// called. fn runs on the goroutine calling New: it must only keep the
// pointer and return.
func Watch(fn func(*Ledger)) (stop func()) {
	watchMu.Lock()
	watchID++
	id := watchID
	watchers[id] = fn
	watchMu.Unlock()
	return func() {
		watchMu.Lock()
		delete(watchers, id)
		watchMu.Unlock()
	}
}

// announce tells the watchers about a new ledger.
func announce(l *Ledger) {
	watchMu.Lock()
	defer watchMu.Unlock()
	for _, fn := range watchers {
		fn(l)
	}
}
