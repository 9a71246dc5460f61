package workload

import "sync"

// A window watcher is told when every timed window opens and closes: the
// relay's own metrics (package relaymetrics) are read there, outside the
// clock. opened runs before the clock starts and the relay's sampling
// begins; the function it returns runs after the clock stopped and the
// sampling ended, with the window's start and end (mono).
var (
	windowMu      sync.Mutex
	windowWatcher func() (closed func(start, end int64))
)

// WatchWindows makes opened the window watcher until stop is called.
func WatchWindows(opened func() (closed func(start, end int64))) (stop func()) {
	windowMu.Lock()
	windowWatcher = opened
	windowMu.Unlock()
	return func() {
		windowMu.Lock()
		windowWatcher = nil
		windowMu.Unlock()
	}
}

// windowOpening tells the watcher a window opens; it returns what to call
// when it closes (nil: no watcher).
func windowOpening() func(start, end int64) {
	windowMu.Lock()
	fn := windowWatcher
	windowMu.Unlock()
	if fn == nil {
		return nil
	}
	return fn()
}
