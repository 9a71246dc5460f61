package workload

import (
	"bytes"
	"testing"

	"github.com/relaybench/relaybench/verify"
)

// knownEvent names the same event, and the same prefix, as looking each
// message's id up would, whatever event it tried first: the one of the
// delivery before, another one, or one it cannot be; for published bytes,
// a relay's other bytes once checked in full, bytes cut short and bytes of
// no fresh event.
func TestKnownEventTriesTheLastFirst(t *testing.T) {
	fresh, err := NewFresh(testCtx(t), testKeys(t), FreshSpec{Count: 3, Size: 10}, RunNonce())
	if err != nil {
		t.Fatal(err)
	}
	r := &subRun{fresh: fresh, checks: verify.NewChecker()}
	// a relay's other bytes of event 1 (a space after the brace), checked
	// in full once, as a first delivery of them is
	alt := append([]byte("{ "), fresh.Raw[1][1:]...)
	s := r.checks.NewIndexedStream(nil, len(fresh.Events))
	if _, f := s.EventAt(alt, 1, fresh.Events[1], fresh.Raw[1]); f != verify.Valid {
		t.Fatalf("the relay's bytes of event 1: %v", f)
	}
	other, err := NewFresh(testCtx(t), testKeys(t), FreshSpec{Count: 1, Size: 10}, RunNonce())
	if err != nil {
		t.Fatal(err)
	}
	end := func(b []byte) []byte { return append(bytes.Clone(b), ']') }
	objs := []struct {
		what string
		obj  []byte
		n    int32
		m    int
	}{
		{"event 2", end(fresh.Raw[2]), 2, len(fresh.Raw[2])},
		{"event 2 again", end(fresh.Raw[2]), 2, len(fresh.Raw[2])},
		{"event 0 after 2", end(fresh.Raw[0]), 0, len(fresh.Raw[0])},
		{"event 0 cut short", fresh.Raw[0][:len(fresh.Raw[0])-1], 0, 0},
		{"event 1 as the relay wrote it", end(alt), 1, len(alt)},
		{"event 1 published", end(fresh.Raw[1]), 1, len(fresh.Raw[1])},
		{"event 1 as the relay wrote it, again", end(alt), 1, len(alt)},
		{"no fresh event's bytes", end(other.Raw[0]), 0, 0},
		{"event 2 after those", end(fresh.Raw[2]), 2, len(fresh.Raw[2])},
	}
	for _, o := range objs {
		m, n := r.knownEvent(o.obj)
		if m != o.m || (m > 0 && n != o.n) {
			t.Errorf("%s: knownEvent %d, event %d; want %d, event %d", o.what, m, n, o.m, o.n)
		}
		// what the lookup by id alone answers
		if k, ok := r.fresh.Index(o.obj); ok {
			if w := r.checks.KnownPrefix(o.obj, r.fresh.Events[k], r.fresh.Raw[k]); w != m || (m > 0 && int32(k) != n) {
				t.Errorf("%s: knownEvent %d, event %d; the lookup by id %d, event %d", o.what, m, n, w, k)
			}
		} else if m != 0 {
			t.Errorf("%s: knownEvent %d for bytes of no fresh event", o.what, m)
		}
	}
}
