package workload

import (
	"sync"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/metrics"
)

// loadTimes is what a load's op latency times, as the live view labels
// its series (mixed's are labelled per kind too): an EVENT's OK, a REQ's
// EOSE, or either in a mixed load, whose one schedule times both.
func loadTimes(kind string) string {
	switch kind {
	case LoadQuery:
		return metrics.TimesEOSE
	case LoadMixed:
		return metrics.TimesOK + " or " + metrics.TimesEOSE
	}
	return metrics.TimesOK
}

// okTimes tells, in a mixed load, the events still being published when a
// REQ was sent from those stored before it (mixedlimit.go's rule): for each
// event of the load written lately, when its OK came (0: none yet). Kept
// bounded: an entry ended more than two timeouts ago is dropped, as every
// answer still to be looked at is to a REQ sent after it ended (a query
// waits at most one timeout, and is looked at as it ends); an event not
// found was acknowledged before the REQ, or is not this load's.
type okTimes struct {
	mu      sync.Mutex
	m       map[string]okTime
	horizon int64 // how long an ended entry is kept (two timeouts)
	adds    int
}

// okTime is one event's: OK read (recv, 0 if none came) and its op's end.
type okTime struct{ recv, end int64 }

func newOKTimes(timeout int64) *okTimes {
	return &okTimes{m: map[string]okTime{}, horizon: 2 * timeout}
}

// sending records that event id is about to be written (no OK yet); every
// 1,024 events, the entries ended before the horizon are dropped.
func (t *okTimes) sending(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m[id] = okTime{}
	if t.adds++; t.adds%1024 == 0 {
		old := mono.Now() - t.horizon
		for k, v := range t.m {
			if v.end > 0 && v.end < old {
				delete(t.m, k)
			}
		}
	}
}

// ended records event id's OK read at recv (0: none came).
func (t *okTimes) ended(id string, recv int64) {
	t.mu.Lock()
	t.m[id] = okTime{recv: recv, end: max(recv, mono.Now())}
	t.mu.Unlock()
}

// liveIn counts the distinct events of an answer to a REQ written at sent
// that were still being published then: their OK had not come back when
// the REQ was sent, or never did (stillPublishing's rule).
func (t *okTimes) liveIn(raws [][]byte, sent int64) int64 {
	seen := make(map[string]bool, len(raws))
	t.mu.Lock()
	defer t.mu.Unlock()
	var n int64
	for _, raw := range raws {
		id := string(EventIDOf(raw))
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		if v, ok := t.m[id]; ok && (v.recv == 0 || v.recv > sent) {
			n++
		}
	}
	return n
}
