package metrics

import "github.com/relaybench/relaybench/internal/watch"

// watchers see every series made while they are registered: a live view
// of a run (package live) reads the latency histograms of its completed
// seconds as the run goes, under the series' own lock, by copy.
var watchers watch.Set[*Series]

// WatchSeries calls fn with every series NewSeries makes from now on,
// until stop is called. fn runs on the goroutine calling NewSeries: it
// must only keep the pointer and return.
func WatchSeries(fn func(*Series)) (stop func()) { return watchers.Add(fn) }

// announce tells the watchers about a new series.
func announce(s *Series) { watchers.Announce(s) }

// What a series' latency times, as the live view labels it.
const (
	TimesOK       = "OK"       // EVENT written → its OK read
	TimesEOSE     = "EOSE"     // REQ written → its EOSE read
	TimesDelivery = "delivery" // an event's publish → its delivery to a subscriber
)

// Times says what the series' latency times (TimesOK, TimesEOSE,
// TimesDelivery) and returns s: the live view plots each kind apart and
// says which it plots.
func (s *Series) Times(what string) *Series {
	s.mu.Lock()
	s.times = what
	s.mu.Unlock()
	return s
}

// Timing is what the series' latency times ("": not said).
func (s *Series) Timing() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.times
}

// NewCoarse returns an empty histogram of the series' precision (1 µs to
// 60 s, 2 significant digits), to merge LatencySeconds into.
func NewCoarse() *Histogram { return newCoarse() }

// LatencySeconds merges into into the latency histograms of the series'
// one-second buckets from index from up to, not including, the bucket
// holding mono time now (the one still filling), and returns the index to
// start from next time. The series is locked for the merge only.
func (s *Series) LatencySeconds(into *Histogram, from int, now int64) (next int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	upto := min(int(s.offset(now)/s.sec.width), len(s.sec.lat))
	for i := from; i < upto; i++ {
		if h := s.sec.lat[i]; h != nil {
			into.Merge(h)
		}
	}
	return max(from, upto)
}

// Bucket is one bar of a histogram's distribution: Count values at or
// above From and at or below To (ns), at the histogram's precision.
type Bucket struct {
	From, To, Count int64
}

// Buckets is the histogram's distribution, bar by bar (empty bars left
// out), for exporting it in another bucket layout.
func (h *Histogram) Buckets() []Bucket {
	var out []Bucket
	for _, b := range h.h.Distribution() {
		if b.Count > 0 {
			out = append(out, Bucket{From: b.From, To: b.To, Count: b.Count})
		}
	}
	return out
}
