package watch

import "testing"

// A function sees what is announced between its Add and its stop, and
// nothing after; other functions go on seeing.
func TestSetAddAnnounceStop(t *testing.T) {
	var s Set[int]
	s.Announce(0) // nobody watching: nothing happens
	var a, b []int
	stopA := s.Add(func(v int) { a = append(a, v) })
	stopB := s.Add(func(v int) { b = append(b, v) })
	s.Announce(1)
	stopA()
	stopA() // twice: harmless
	s.Announce(2)
	stopB()
	s.Announce(3)
	if len(a) != 1 || a[0] != 1 {
		t.Errorf("first watcher saw %v, want [1]", a)
	}
	if len(b) != 2 || b[0] != 1 || b[1] != 2 {
		t.Errorf("second watcher saw %v, want [1 2]", b)
	}
}
