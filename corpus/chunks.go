package corpus

import (
	"context"
	"sync"
	"sync/atomic"
)

// inChunks runs the items [0, n) in chunks of the given size on o.Workers
// goroutines (all cores when zero), each with the function perWorker
// makes for it, and reports progress to o.Progress after every chunk. It
// stops at ctx's end (returning its error) or at the first error a chunk
// returns (returning that).
func inChunks(ctx context.Context, n, chunk int, o Options, perWorker func() func(lo, hi int) error) error {
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	for range workers(o.Workers) {
		wg.Go(func() {
			run := perWorker()
			for {
				lo := int(next.Add(int64(chunk))) - chunk
				if lo >= n || ctx.Err() != nil || failed.Load() != nil {
					return
				}
				hi := min(n, lo+chunk)
				if err := run(lo, hi); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
				if o.Progress != nil {
					mu.Lock()
					done += hi - lo
					o.Progress(done, n)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if e := failed.Load(); e != nil {
		return *e
	}
	return nil
}
