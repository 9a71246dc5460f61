package workload

import "github.com/relaybench/relaybench/corpus"

// Segment is an execution segment (--segment I/N, see corpus.Segment): a
// workload given one runs only its share of the test. The zero value is the
// whole test.
type Segment = corpus.Segment

// segmentShare is a segment's share of n requested operations drawn as xs
// (len(xs) ≤ n: the ones that could be drawn, in order): operation k is
// segment k mod N's. It returns how many of the n are this segment's and the
// elements of xs that are.
func segmentShare[T any](s Segment, n int, xs []T) (int, []T) {
	return s.Share(n), corpus.Pick(s, xs)
}

// segmentPlan is a load's number of operations and publishing operations
// for o's segment, of a pattern of total operations; it gives the segment
// its share of the pool and the connections (at least one each).
func (o *LoadOptions) segmentPlan(total int64) (ops, pubs int64) {
	s := o.Segment
	if s.Whole() {
		return total, o.publishes(total)
	}
	o.Pool = s.AtLeastOne(o.Pool)
	o.Connections = s.AtLeastOne(o.Connections)
	for k := int64(s.Index); k < total; k += int64(s.Count) {
		ops++
		if o.publishes(k+1) > o.publishes(k) {
			pubs++
		}
	}
	return ops, pubs
}

// segmentOwns is the schedule's filter of a segment's operations (nil:
// all).
func (o *LoadOptions) segmentOwns() func(seq int64) bool {
	if o.Segment.Whole() {
		return nil
	}
	s := o.Segment
	return func(seq int64) bool { return s.Owns(seq) }
}
