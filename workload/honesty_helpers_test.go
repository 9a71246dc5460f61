package workload

import (
	"context"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
)

// cancelAfterEvents returns a context that the "user" cancels (a Ctrl-C)
// once the relay has received n EVENTs, and a channel that receives the
// time of that cancel, to check that the workload returned promptly.
func cancelAfterEvents(t *testing.T, r *testrelay.Relay, n int) (context.Context, <-chan time.Time) {
	ctx, cancel := context.WithCancel(testCtx(t))
	t.Cleanup(cancel)
	go func() {
		for r.Stats().Events < n && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	stamp := make(chan time.Time, 1)
	go func() { <-ctx.Done(); stamp <- time.Now() }()
	return ctx, stamp
}
