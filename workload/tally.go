package workload

import (
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/wire"
)

// shapeTally is the one per-shape accumulator of the request workloads
// (queries, searches, COUNTs): for the phase and for each shape, the
// requests answered (counter ok) and failed, their latency and
// first-event histograms, and the time spent in each shape's requests.
// Rates are defined once here: the phase's divide by its timed window
// (every connection together), a shape's by the time spent in its own
// requests (that shape's rate on one connection).
type shapeTally struct {
	ph      *results.Phase
	ok      string   // counter of the requests that got their answer ("queries")
	latency string   // latency name ("eose", "count")
	what    string   // the request, in errors ("query")
	zero    []string // the counters every group shows, 0 or not
	all     *metrics.Histogram
	first   *metrics.Histogram
	shapes  map[string]*shapeAcc
}

// shapeAcc is one shape's group in progress.
type shapeAcc struct {
	g     *results.Group
	lat   *metrics.Histogram
	first *metrics.Histogram
	busy  int64 // ns spent in the shape's answered requests
	ver   *results.Verification
}

// newShapeTally accumulates into ph: each group shows the counters ok,
// failed and those of zero.
func newShapeTally(ph *results.Phase, ok, latency, what string, zero ...string) *shapeTally {
	return &shapeTally{ph: ph, ok: ok, latency: latency, what: what, zero: append([]string{ok, results.CountFailed}, zero...),
		all: metrics.NewHistogram(), first: metrics.NewHistogram(), shapes: map[string]*shapeAcc{}}
}

// of is shape's accumulator; verified says whether its answers are
// compared with what the relay accepted.
func (t *shapeTally) of(shape string, verified bool) *shapeAcc {
	s := t.shapes[shape]
	if s == nil {
		s = &shapeAcc{g: &results.Group{Name: shape, Counts: map[string]int64{}, Latency: map[string]*results.Histogram{}},
			lat: metrics.NewHistogram(), first: metrics.NewHistogram(), ver: &results.Verification{Verified: verified}}
		for _, k := range t.zero {
			s.g.Counts[k] = 0
		}
		t.shapes[shape] = s
	}
	return s
}

// add adds n to counter k of the phase and of s's group.
func (t *shapeTally) add(s *shapeAcc, k string, n int64) {
	s.g.Counts[k] += n
	t.ph.Counts[k] += n
}

// failed counts a request of s that got no answer (ended how, err why).
func (t *shapeTally) failed(s *shapeAcc, ended wire.QueryEnd, err string) {
	t.add(s, results.CountFailed, 1)
	if ended == wire.EndTimeout {
		t.ph.Counts[results.CountTimedOut]++
	}
	t.ph.Errors = verify.AppendUnique(t.ph.Errors, s.g.Name+" "+t.what+": "+err)
}

// answered counts a request of s answered after latency ns, its first
// event after first ns (0: none).
func (t *shapeTally) answered(s *shapeAcc, latency, first int64) {
	t.add(s, t.ok, 1)
	t.all.Record(latency)
	s.lat.Record(latency)
	s.busy += latency
	if first > 0 {
		t.first.Record(first)
		s.first.Record(first)
	}
}

// finish puts the latencies and the rates rate (of counter ok) and, when
// not "", returned (of counter results.CountEventsReturned) into the phase
// and its groups, and appends the groups in the order of shapes, each
// with its verification added to total (nil: none).
func (t *shapeTally) finish(shapes []string, rate, returned string, total *results.Verification) {
	ph := t.ph
	ph.Latency[t.latency] = t.all.Result()
	if t.first.Count() > 0 {
		ph.Latency[results.LatencyFirstEvent] = t.first.Result()
	}
	if ph.Rates == nil {
		ph.Rates = map[string]float64{}
	}
	if ph.Duration > 0 {
		ph.Rates[rate] = results.PerSecond(ph.Counts[t.ok], ph.Duration)
		if returned != "" {
			ph.Rates[returned] = results.PerSecond(ph.Counts[results.CountEventsReturned], ph.Duration)
		}
	}
	for _, name := range shapes {
		s := t.shapes[name]
		if s == nil {
			continue
		}
		s.g.Latency[t.latency] = s.lat.Result()
		if s.first.Count() > 0 {
			s.g.Latency[results.LatencyFirstEvent] = s.first.Result()
		}
		s.g.Rates = map[string]float64{}
		if s.busy > 0 {
			s.g.Rates[rate] = results.PerSecond(s.g.Counts[t.ok], s.busy)
			if returned != "" {
				s.g.Rates[returned] = results.PerSecond(s.g.Counts[results.CountEventsReturned], s.busy)
			}
		}
		if total != nil {
			verify.Add(total, s.ver)
			verify.Finish(s.ver)
			s.g.Verification = s.ver
		}
		ph.Groups = append(ph.Groups, *s.g)
	}
}
