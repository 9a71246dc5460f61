package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"

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

	return inChunks(ctx, len(evs), 64, o, func() func(lo, hi int) error {
		buf := make([]byte, 0, 2048)
		return func(lo, hi int) error {
			for i := lo; i < hi; i++ {
				e, a := evs[i], keys[i]
				e.PubKey = pubs[a]
				buf = e.AppendSerialized(buf[:0])
				id := sha256.Sum256(buf)
				sig, err := signer.SignKey(prepared[a], &id, &id)
				if err != nil {
					return fmt.Errorf("corpus: signing event %d: %w", i, err)
				}
				e.ID = hex.EncodeToString(id[:])
				e.Sig = hex.EncodeToString(sig[:])
			}
			return nil
		}
	})
}

// NewRand returns a PCG-seeded PRNG for Content, deterministic in (seed,
// stream): use a distinct stream per goroutine.
func NewRand(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), stream^0x6672657368)) // "fresh"
}
