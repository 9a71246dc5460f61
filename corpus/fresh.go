package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/relaybench/relaybench/internal/secp"
	"github.com/relaybench/relaybench/nostr"
)

// SignEvents signs caller-built events in parallel: keys[i] signs evs[i].
// For each event it sets PubKey, ID and Sig (the other fields must be set).
// Use it to pre-sign fresh events for live workloads before their clock
// starts. The aux randomness is the event id, so the result is reproducible.
// It stops promptly with ctx.Err() when ctx is cancelled.
func SignEvents(ctx context.Context, evs []*nostr.Event, keys []*Author, o Options) error {
	if len(evs) != len(keys) {
		return fmt.Errorf("corpus: %d events but %d keys", len(evs), len(keys))
	}
	signer, err := o.signer()
	if err != nil {
		return err
	}
	prepared := map[*Author]*secp.Key{}
	pubs := map[*Author]string{}
	for i, a := range keys {
		if a == nil {
			return fmt.Errorf("corpus: no key for event %d", i)
		}
		if _, ok := prepared[a]; ok {
			continue
		}
		k, err := signer.NewKey(a.Secret)
		if err != nil {
			return fmt.Errorf("corpus: key for event %d: %w", i, err)
		}
		prepared[a] = k
		pubs[a] = hex.EncodeToString(k.Pub[:])
	}

	const chunk = 64
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	for range workers(o.Workers) {
		wg.Go(func() {
			buf := make([]byte, 0, 2048)
			for {
				lo := int(next.Add(chunk)) - chunk
				if lo >= len(evs) || ctx.Err() != nil || failed.Load() != nil {
					return
				}
				hi := min(len(evs), lo+chunk)
				for i := lo; i < hi; i++ {
					e, a := evs[i], keys[i]
					e.PubKey = pubs[a]
					buf = e.AppendSerialized(buf[:0])
					id := sha256.Sum256(buf)
					sig, err := signer.SignKey(prepared[a], &id, &id)
					if err != nil {
						err = fmt.Errorf("corpus: signing event %d: %w", i, err)
						failed.CompareAndSwap(nil, &err)
						return
					}
					e.ID = hex.EncodeToString(id[:])
					e.Sig = hex.EncodeToString(sig[:])
				}
				if o.Progress != nil {
					mu.Lock()
					done += hi - lo
					o.Progress(done, len(evs))
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

// NewRand returns a PCG-seeded PRNG for Content, deterministic in (seed,
// stream): use a distinct stream per goroutine.
func NewRand(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), stream^0x6672657368)) // "fresh"
}
