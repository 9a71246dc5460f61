package workload

import (
	"context"
	"testing"

	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/verify"
)

// Laid out by reader thread, each subscriber keeps a column of its own,
// those of one reader side by side in reader order (then subscriber
// order): a first copy is valid for every subscriber, a second a
// duplicate for its own only, and its receipt time is its own.
func TestSubscribeLayOutByReader(t *testing.T) {
	o := SubscribeOptions{Base: Base{Seed: 5}, Subscribers: 6, Filter: FilterKind, Events: 3, Size: 10}
	if err := o.defaults(); err != nil {
		t.Fatal(err)
	}
	r, err := newSubRun(context.Background(), testKeys(t), o)
	if err != nil {
		t.Fatal(err)
	}
	r.layOut([]int{1, 0, 1, 0, 2, 0})
	for j, want := range []int32{3, 0, 4, 1, 5, 2} {
		if got := r.subs[j].col; got != want {
			t.Fatalf("subscriber %d in column %d, want %d", j, got, want)
		}
	}
	ev, raw := r.fresh.Events[1], r.fresh.Raw[1]
	for j, s := range r.subs {
		s.state = outcome.Accepted
		if _, f := s.stream.EventAt(raw, 1, ev, raw); f != verify.Valid {
			t.Fatalf("subscriber %d, first copy: %v", j, f)
		}
		r.book(s, verify.Valid, 1, true, int64(100+j))
	}
	for j, s := range r.subs {
		if _, f := s.stream.EventAt(raw, 1, ev, raw); f != verify.Duplicate {
			t.Fatalf("subscriber %d, second copy: %v", j, f)
		}
		if got := r.recvOf(s, 1); got != int64(100+j) {
			t.Fatalf("subscriber %d: receipt time %d, want %d", j, got, 100+j)
		}
		if got := r.recvOf(s, 0) + r.recvOf(s, 2); got != 0 {
			t.Fatalf("subscriber %d: receipt times of events it did not get", j)
		}
	}
}
