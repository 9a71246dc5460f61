package verify

import (
	"sync"
	"sync/atomic"

	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
)

// Found is a fault the verifier found, told as it finds it (WatchFaults):
// an event of a stream (Stream.Event, Stream.EventAt) or the faults of one
// judged answer (Judge).
type Found struct {
	Kind string // "invalid", "not matching", "duplicated", "missing" or "extra"
	N    int64  // how many of Kind
	// Raw is the relay's bytes of a faulty event of a stream (nil for a
	// judged answer): untrusted, valid only during the call.
	Raw []byte
	// Filter is what the event or answer was checked against (may be nil).
	Filter *nostr.Filter
}

// Kinds of Found, in the order of the verification's fault counts.
const (
	FoundInvalid     = "invalid"
	FoundNotMatching = "not matching"
	FoundDuplicated  = "duplicated"
	FoundMissing     = "missing"
	FoundExtra       = "extra"
)

// watching is the functions told of every fault (copy on write): the
// checking paths read it with one atomic load, only when they found a
// fault; nothing is added to a valid event's path.
var (
	watching  atomic.Pointer[[]faultWatcher]
	watchesMu sync.Mutex
	watchID   int
)

type faultWatcher struct {
	id int
	fn func(Found)
}

// WatchFaults calls fn with every fault the verifier finds from now on,
// until stop is called. fn runs on the goroutine that checks (a
// workload's): it must count, keep little and return without waiting.
func WatchFaults(fn func(Found)) (stop func()) {
	watchesMu.Lock()
	defer watchesMu.Unlock()
	watchID++
	id := watchID
	var ws []faultWatcher
	if p := watching.Load(); p != nil {
		ws = append(ws, *p...)
	}
	ws = append(ws, faultWatcher{id, fn})
	watching.Store(&ws)
	return func() {
		watchesMu.Lock()
		defer watchesMu.Unlock()
		var kept []faultWatcher
		for _, w := range *watching.Load() {
			if w.id != id {
				kept = append(kept, w)
			}
		}
		if len(kept) == 0 {
			watching.Store(nil)
			return
		}
		watching.Store(&kept)
	}
}

// tell gives f to every watcher.
func tell(f Found) {
	p := watching.Load()
	if p == nil {
		return
	}
	for _, w := range *p {
		w.fn(f)
	}
}

// faulty returns e and fault (not Valid) after telling the watchers of
// the event.
func (s *Stream) faulty(e *nostr.Event, fault Fault, raw []byte) (*nostr.Event, Fault) {
	if watching.Load() != nil {
		tell(Found{Kind: faultKind(fault), N: 1, Raw: raw, Filter: s.Filter})
	}
	return e, fault
}

func faultKind(f Fault) string {
	switch f {
	case Invalid:
		return FoundInvalid
	case NotMatching:
		return FoundNotMatching
	}
	return FoundDuplicated
}

// toldAnswers tells the faults of judged answers, one Found per kind and
// answer.
func toldAnswers(replies []Reply, answers []results.Verification) {
	if watching.Load() == nil {
		return
	}
	for i := range answers {
		v := &answers[i]
		var f *nostr.Filter
		if fs := replies[i].filters(); len(fs) > 0 {
			f = fs[0]
		}
		for _, k := range []struct {
			kind string
			n    int64
		}{{FoundInvalid, v.Invalid}, {FoundNotMatching, v.NotMatching}, {FoundDuplicated, v.Duplicated}, {FoundMissing, v.Missing}, {FoundExtra, v.Extra}} {
			if k.n > 0 {
				tell(Found{Kind: k.kind, N: k.n, Filter: f})
			}
		}
	}
}
