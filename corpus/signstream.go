package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/relaybench/relaybench/internal/secp"
	"github.com/relaybench/relaybench/nostr"
)

// SignStreamed builds n events with build (called in order, from one
// goroutine: it sets CreatedAt, Kind, Tags and Content and returns the key
// that signs the event) and signs them on all cores, writing their wire
// JSON to a temporary file as they are signed; it returns them as a
// streamed corpus (RawAt, IDAt, SizeAt, ReleaseBefore; no Events). Memory
// stays flat whatever n: only the batches being signed are held, and the
// file is unlinked once mapped (its space is freed when the process
// exits). The aux randomness is the event id, as with SignEvents, so the
// result is reproducible. It stops promptly with ctx.Err() when ctx is
// cancelled. o.Progress is called as batches are signed.
func SignStreamed(ctx context.Context, n int, build func(i int, e *nostr.Event) *Author, o Options) (*Corpus, error) {
	if n <= 0 {
		return nil, fmt.Errorf("corpus: %d events to sign", n)
	}
	signer, err := o.signer()
	if err != nil {
		return nil, err
	}
	fw, err := newFileWriter(os.TempDir(), "relaybench-fresh-", "fresh", signer.Name(), nil, n)
	if err != nil {
		return nil, fmt.Errorf("corpus: a file for %d events: %w", n, err)
	}
	ok := false
	defer func() {
		if !ok {
			fw.discard()
		}
	}()
	type batch struct {
		b    int
		evs  []nostr.Event
		keys []*secp.Key
		wire []byte
		offs []int
	}
	ictx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	jobs := make(chan *batch, 4)
	signed := make(chan *batch, workers(o.Workers))
	free := sync.Pool{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range workers(o.Workers) {
		wg.Go(func() {
			ser := make([]byte, 0, 4096)
			for b := range jobs {
				if ictx.Err() != nil {
					continue
				}
				b.wire = b.wire[:0]
				b.offs = append(b.offs[:0], 0)
				for k := range b.evs {
					e := &b.evs[k]
					ser = e.AppendSerialized(ser[:0])
					id := sha256.Sum256(ser)
					sig, err := signer.SignKey(b.keys[k], &id, &id)
					if err != nil {
						cancel(fmt.Errorf("corpus: signing event %d: %w", b.b*batchSize+k, err))
						break
					}
					e.ID = hex.EncodeToString(id[:])
					e.Sig = hex.EncodeToString(sig[:])
					b.wire = e.AppendJSON(b.wire)
					b.offs = append(b.offs, len(b.wire))
				}
				if ictx.Err() != nil {
					continue
				}
				nb := len(b.evs) // b is the writer's once sent
				signed <- b
				if o.Progress != nil {
					mu.Lock()
					done += nb
					o.Progress(done, n)
					mu.Unlock()
				}
			}
		})
	}
	wrote := make(chan error, 1)
	go func() {
		pending := map[int]*batch{}
		next := 0
		var err error
		for b := range signed {
			pending[b.b] = b
			for {
				b, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				for k := range b.evs {
					fw.add(b.wire[b.offs[k]:b.offs[k+1]])
				}
				next++
				free.Put(b)
			}
		}
		if err == nil {
			err = fw.flush()
		}
		wrote <- err
	}()

	// Build in order, one batch at a time.
	keys := map[*Author]*secp.Key{}
	pubs := map[*Author]string{}
	var perr error
	for lo := 0; lo < n && perr == nil; lo += batchSize {
		b, _ := free.Get().(*batch)
		if b == nil {
			b = &batch{}
		}
		b.b = lo / batchSize
		b.evs = b.evs[:0]
		b.keys = b.keys[:0]
		for i := lo; i < min(n, lo+batchSize); i++ {
			b.evs = append(b.evs, nostr.Event{})
			e := &b.evs[len(b.evs)-1]
			a := build(i, e)
			if a == nil {
				perr = fmt.Errorf("corpus: no key for event %d", i)
				break
			}
			k, ok := keys[a]
			if !ok {
				if k, err = signer.NewKey(a.Secret); err != nil {
					perr = fmt.Errorf("corpus: key for event %d: %w", i, err)
					break
				}
				keys[a], pubs[a] = k, hex.EncodeToString(k.Pub[:])
			}
			e.PubKey = pubs[a]
			b.keys = append(b.keys, k)
		}
		if perr != nil {
			break
		}
		select {
		case jobs <- b:
		case <-ictx.Done():
			perr = context.Cause(ictx)
		}
	}
	close(jobs)
	wg.Wait()
	close(signed)
	werr := <-wrote
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if cause := context.Cause(ictx); cause != nil && !errors.Is(cause, context.Canceled) {
		return nil, cause
	}
	if perr != nil {
		return nil, perr
	}
	if werr != nil {
		return nil, fmt.Errorf("corpus: writing signed events: %w", werr)
	}
	name := fw.f.Name()
	ok = true
	if err := fw.finish(); err != nil {
		os.Remove(name)
		return nil, fmt.Errorf("corpus: writing signed events: %w", err)
	}
	p := Params{Events: n}
	s, _, _, err := openStore(name, p, "fresh", false)
	os.Remove(name) // mapped: freed when the process exits
	if err != nil {
		return nil, err
	}
	c := &Corpus{Params: p, Key: "fresh", Signer: signer.Name(), store: s}
	c.Bytes = int64(s.off(s.n) - s.off(0) - s.n)
	return c, nil
}

// TempFree is the space free in os.TempDir() for SignStreamed, in bytes (0
// when unknown).
func TempFree() int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(os.TempDir(), &st); err != nil {
		return 0
	}
	return int64(st.Bavail) * int64(st.Bsize)
}
