package corpus

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxSegments bounds --segment's N.
const MaxSegments = 10000

// Segment is an execution segment: instance Index (0-based) of Count
// instances that together run one test (k6's execution segments, equal
// widths). Every instance builds the same corpus and schedule and does only
// its share, interleaved so that each share looks like the whole:
//
//   - corpus index i, query k, open-loop operation k and fresh event j
//     belong to segment (i, k, j) mod Count (Owns);
//   - a count of connections or subscribers C is split into C/Count each,
//     the first C mod Count segments taking one more (Split); with the
//     interleaving this is also the size of a segment's share of C items
//     (Share == Split).
//
// The union of the Count shares is exactly the single-instance test, and no
// item belongs to two segments. The zero value (and any Count ≤ 1) is the
// whole test.
type Segment struct {
	Index int
	Count int
}

// Whole reports whether s is the whole test (no segmentation).
func (s Segment) Whole() bool { return s.Count <= 1 }

// String is "I/N" ("" for the whole test).
func (s Segment) String() string {
	if s.Whole() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Owns reports whether item k (a corpus index, a query's or an open-loop
// operation's position) belongs to s.
func (s Segment) Owns(k int64) bool {
	if s.Whole() {
		return true
	}
	return k%int64(s.Count) == int64(s.Index)
}

// Share is how many of the items 0 … n-1 belong to s.
func (s Segment) Share(n int) int {
	if s.Whole() || n <= 0 {
		return max(n, 0)
	}
	share := n / s.Count
	if s.Index < n%s.Count {
		share++
	}
	return share
}

// Split is s's part of a count c of connections or subscribers: c/Count,
// plus one for the first c mod Count segments. It may be 0 (more segments
// than c); AtLeastOne is the form for counts a segment with work needs.
func (s Segment) Split(c int) int { return s.Share(c) }

// AtLeastOne is Split, but at least 1: a segment that has operations to
// run needs a connection even when c is smaller than the segment count.
func (s Segment) AtLeastOne(c int) int { return max(s.Split(c), 1) }

// Indexes returns the items of 0 … n-1 that belong to s, in order.
func (s Segment) Indexes(n int) []int {
	out := make([]int, 0, s.Share(n))
	step, first := 1, 0
	if !s.Whole() {
		step, first = s.Count, s.Index
	}
	for i := first; i < n; i += step {
		out = append(out, i)
	}
	return out
}

// Pick keeps the elements of xs whose position belongs to s.
func Pick[T any](s Segment, xs []T) []T {
	if s.Whole() {
		return xs
	}
	out := make([]T, 0, s.Share(len(xs)))
	for i := s.Index; i < len(xs); i += s.Count {
		out = append(out, xs[i])
	}
	return out
}

// ParseSegment parses --segment: "I/N" (instance I of N, 0-based, e.g.
// 0/4 … 3/4), or k6's "FROM:TO" with fractions of equal width 1/N (e.g.
// "0:1/4", "1/4:2/4", "3/4:1"). "" is the whole test.
func ParseSegment(v string) (Segment, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return Segment{}, nil
	}
	bad := func(why string) (Segment, error) {
		return Segment{}, fmt.Errorf("--segment %s: %s (want I/N, instance I of N counted from 0, e.g. 0/3; or k6's FROM:TO, e.g. 0:1/3)", v, why)
	}
	if from, to, ok := strings.Cut(v, ":"); ok {
		fn, fd, err1 := fraction(from)
		tn, td, err2 := fraction(to)
		if err1 != nil || err2 != nil {
			return bad("not two fractions")
		}
		// from = fn/fd, to = tn/td; width must be 1/N with from a multiple of it.
		num, den := tn*fd-fn*td, fd*td // width as num/den
		if num <= 0 {
			return bad("FROM must be below TO")
		}
		if den%num != 0 {
			return bad("the width TO-FROM must be 1/N")
		}
		n := den / num
		// index = from × n = fn × n / fd
		if (fn*n)%fd != 0 {
			return bad("FROM must be a multiple of the width")
		}
		return check(v, Segment{Index: int((fn * n) / fd), Count: int(n)})
	}
	is, ns, ok := strings.Cut(v, "/")
	if !ok {
		return bad("no /N")
	}
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if err1 != nil || err2 != nil {
		return bad("not two integers")
	}
	return check(v, Segment{Index: i, Count: n})
}

func check(v string, s Segment) (Segment, error) {
	switch {
	case s.Count < 1:
		return Segment{}, fmt.Errorf("--segment %s: N must be at least 1", v)
	case s.Count > MaxSegments:
		return Segment{}, fmt.Errorf("--segment %s: N must be at most %d", v, MaxSegments)
	case s.Index < 0 || s.Index >= s.Count:
		return Segment{}, fmt.Errorf("--segment %s: I must be between 0 and N-1 (%d)", v, s.Count-1)
	}
	return s, nil
}

// fraction parses "P/Q" or a whole number "P" (Q = 1).
func fraction(v string) (p, q int64, err error) {
	ps, qs, ok := strings.Cut(v, "/")
	if !ok {
		qs = "1"
	}
	p, err = strconv.ParseInt(ps, 10, 64)
	if err == nil {
		q, err = strconv.ParseInt(qs, 10, 64)
	}
	if err == nil && (p < 0 || q <= 0 || p > q || q > MaxSegments) {
		err = fmt.Errorf("fraction %s out of range", v)
	}
	return p, q, err
}
