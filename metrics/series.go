package metrics

import (
	"maps"
	"sync"

	"github.com/relaybench/relaybench/results"
)

// A series is recorded twice while it is young: in one-second buckets for
// its whole length, and in FineStep buckets for its first FineSpan. Result
// returns the fine buckets for a phase shorter than FineSpan, so that a
// phase of half a second still has a handful of points instead of one, and
// the one-second buckets otherwise (long phases keep their files and their
// memory as they were).
const (
	FineStep int64 = 100e6 // ns: the bucket width of a short phase's series
	FineSpan int64 = 3e9   // ns: phases shorter than this get FineStep buckets
)

// buckets are the points of a series at one bucket width.
type buckets struct {
	width  int64 // ns
	limit  int   // most buckets kept (0: no limit); later times are not recorded
	counts []map[string]int64
	gauges []map[string]int64
	lat    []*Histogram
}

// index returns the bucket of offset d (ns since the start, d ≥ 0), growing
// the slices to hold it; ok is false past the limit.
func (b *buckets) index(d int64) (int, bool) {
	i := int(d / b.width)
	if b.limit > 0 && i >= b.limit {
		return 0, false
	}
	for len(b.counts) <= i {
		b.counts = append(b.counts, nil)
		b.gauges = append(b.gauges, nil)
		b.lat = append(b.lat, nil)
	}
	return i, true
}

// at returns bucket d's map in ms (b.counts or b.gauges), made on first
// use; nil past the limit.
func (b *buckets) at(d int64, ms *[]map[string]int64) map[string]int64 {
	i, ok := b.index(d)
	if !ok {
		return nil
	}
	if (*ms)[i] == nil {
		(*ms)[i] = map[string]int64{}
	}
	return (*ms)[i]
}

func (b *buckets) add(d int64, name string, n int64) {
	if m := b.at(d, &b.counts); m != nil {
		m[name] += n
	}
}

func (b *buckets) gauge(d int64, name string, v int64) {
	if m := b.at(d, &b.gauges); m != nil {
		if old, ok := m[name]; !ok || v > old {
			m[name] = v
		}
	}
}

func (b *buckets) latency(d int64, ns int64) {
	i, ok := b.index(d)
	if !ok {
		return
	}
	if b.lat[i] == nil {
		b.lat[i] = newCoarse()
	}
	b.lat[i].Record(ns)
}

// merge adds o's buckets (same width, same start) into b.
func (b *buckets) merge(o *buckets) {
	for i := range o.counts {
		j, ok := b.index(int64(i) * b.width)
		if !ok {
			return
		}
		for k, v := range o.counts[i] {
			if b.counts[j] == nil {
				b.counts[j] = map[string]int64{}
			}
			b.counts[j][k] += v
		}
		for k, v := range o.gauges[i] {
			if b.gauges[j] == nil {
				b.gauges[j] = map[string]int64{}
			}
			if old, ok := b.gauges[j][k]; !ok || v > old {
				b.gauges[j][k] = v
			}
		}
		if o.lat[i] != nil {
			if b.lat[j] == nil {
				b.lat[j] = newCoarse()
			}
			b.lat[j].Merge(o.lat[i])
		}
	}
}

// Series is a time series for one phase: named counters per bucket, gauges
// sampled per bucket, and a latency histogram per bucket. Buckets are one
// second wide, or FineStep wide for a phase shorter than FineSpan (see
// Result). It is safe for concurrent use; workers with very high rates
// should keep a local Series each and Merge them (one mutex per record is
// ~20 ns).
type Series struct {
	mu   sync.Mutex
	sec  buckets
	fine buckets
	// start is the mono ns the series starts at.
	start int64
	times string // what its latency times (Times): TimesOK, TimesEOSE, …
}

// NewSeries starts a series at start (a mono.Now() value).
func NewSeries(start int64) *Series {
	s := &Series{start: start, sec: buckets{width: 1e9}, fine: buckets{width: FineStep, limit: int(FineSpan / FineStep)}}
	announce(s)
	return s
}

// Start returns the mono time the series starts at.
func (s *Series) Start() int64 { return s.start }

// offset is t's distance from the start (times before it count as the start).
func (s *Series) offset(t int64) int64 { return max(t-s.start, 0) }

// Add adds n to counter name in the bucket containing mono time t.
func (s *Series) Add(t int64, name string, n int64) {
	s.record(t, func(b *buckets, d int64) { b.add(d, name, n) })
}

// Gauge sets gauge name for the bucket containing t to the maximum seen.
func (s *Series) Gauge(t int64, name string, v int64) {
	s.record(t, func(b *buckets, d int64) { b.gauge(d, name, v) })
}

// Latency records a latency observed at time t (the completion time).
func (s *Series) Latency(t int64, ns int64) {
	s.record(t, func(b *buckets, d int64) { b.latency(d, ns) })
}

// record applies rec to both bucket widths at t's offset, under the lock.
func (s *Series) record(t int64, rec func(b *buckets, d int64)) {
	s.mu.Lock()
	d := s.offset(t)
	rec(&s.sec, d)
	rec(&s.fine, d)
	s.mu.Unlock()
}

// Merge adds o's points into s (both must share the start time).
func (s *Series) Merge(o *Series) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sec.merge(&o.sec)
	s.fine.merge(&o.fine)
}

// Result returns the series as results points up to end (a mono time;
// buckets after it are dropped, a partial last bucket kept). A series that
// ends less than FineSpan after its start has FineStep buckets (each
// point's AtMs and WidthMs say where it lies); a longer one, or one without
// an end (end ≤ start), has one point per second.
func (s *Series) Result(end int64) []results.Second {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, fine := &s.sec, false
	if end > s.start && end-s.start < FineSpan {
		b, fine = &s.fine, true
	}
	n := len(b.counts)
	if end > s.start {
		n = int((end - s.start + b.width - 1) / b.width)
	}
	out := make([]results.Second, 0, n)
	for i := 0; i < n; i++ {
		p := results.Second{T: int(int64(i) * b.width / 1e9)}
		if fine {
			p.AtMs = int64(i) * b.width / 1e6
			p.WidthMs = b.width / 1e6
		}
		if i < len(b.counts) {
			p.Counts = copyMap(b.counts[i])
			p.Gauges = copyMap(b.gauges[i])
			if h := b.lat[i]; h != nil && h.Count() > 0 {
				p.LatP50Ns = h.Quantile(50)
				p.LatP99Ns = h.Quantile(99)
				p.LatMaxNs = h.Max()
			}
		}
		out = append(out, p)
	}
	return out
}

func copyMap(m map[string]int64) map[string]int64 {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}
