package metrics

import (
	"sort"
	"sync"

	"github.com/relaybench/relaybench/results"
)

// Series is a per-second time series for one phase: named counters per
// second, gauges sampled per second, and a latency histogram per second. It
// is safe for concurrent use; workers with very high rates should keep a
// local Series each and Merge them (one mutex per record is ~20 ns).
type Series struct {
	mu     sync.Mutex
	start  int64 // mono ns
	counts []map[string]int64
	gauges []map[string]int64
	lat    []*Histogram
}

// NewSeries starts a series at start (a mono.Now() value).
func NewSeries(start int64) *Series { return &Series{start: start} }

// Start returns the mono time the series starts at.
func (s *Series) Start() int64 { return s.start }

func (s *Series) bucket(t int64) int {
	if t < s.start {
		return 0
	}
	i := int((t - s.start) / 1e9)
	for len(s.counts) <= i {
		s.counts = append(s.counts, nil)
		s.gauges = append(s.gauges, nil)
		s.lat = append(s.lat, nil)
	}
	return i
}

// Add adds n to counter name in the second containing mono time t.
func (s *Series) Add(t int64, name string, n int64) {
	s.mu.Lock()
	i := s.bucket(t)
	if s.counts[i] == nil {
		s.counts[i] = map[string]int64{}
	}
	s.counts[i][name] += n
	s.mu.Unlock()
}

// Gauge sets gauge name for the second containing t to the maximum seen.
func (s *Series) Gauge(t int64, name string, v int64) {
	s.mu.Lock()
	i := s.bucket(t)
	if s.gauges[i] == nil {
		s.gauges[i] = map[string]int64{}
	}
	if old, ok := s.gauges[i][name]; !ok || v > old {
		s.gauges[i][name] = v
	}
	s.mu.Unlock()
}

// Latency records a latency observed at time t (the completion time).
func (s *Series) Latency(t int64, ns int64) {
	s.mu.Lock()
	i := s.bucket(t)
	if s.lat[i] == nil {
		s.lat[i] = newCoarse()
	}
	s.lat[i].Record(ns)
	s.mu.Unlock()
}

// Merge adds o's points into s (both must share the start time).
func (s *Series) Merge(o *Series) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range o.counts {
		t := s.start + int64(i)*1e9
		j := s.bucket(t)
		for k, v := range o.counts[i] {
			if s.counts[j] == nil {
				s.counts[j] = map[string]int64{}
			}
			s.counts[j][k] += v
		}
		for k, v := range o.gauges[i] {
			if s.gauges[j] == nil {
				s.gauges[j] = map[string]int64{}
			}
			if old, ok := s.gauges[j][k]; !ok || v > old {
				s.gauges[j][k] = v
			}
		}
		if o.lat[i] != nil {
			if s.lat[j] == nil {
				s.lat[j] = newCoarse()
			}
			s.lat[j].Merge(o.lat[i])
		}
	}
}

// Result returns the series as results points, one per second up to end
// (a mono time; seconds after it are dropped, a partial last second kept).
func (s *Series) Result(end int64) []results.Second {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.counts)
	if end > s.start {
		if m := int((end - s.start + 1e9 - 1) / 1e9); m < n {
			n = m
		} else if m > n {
			n = m
		}
	}
	out := make([]results.Second, 0, n)
	for i := 0; i < n; i++ {
		p := results.Second{T: i}
		if i < len(s.counts) {
			p.Counts = copyMap(s.counts[i])
			p.Gauges = copyMap(s.gauges[i])
			if h := s.lat[i]; h != nil && h.Count() > 0 {
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
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string]int64, len(m))
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}
