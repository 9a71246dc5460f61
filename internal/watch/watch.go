// Package watch keeps the functions that want to see every value of a kind
// made while they are registered: a live view of a run watches the run's
// ledgers and series this way, adding nothing to the paths that make them
// but a call to Announce.
package watch

import "sync"

// Set is the functions watching one kind of value. Its zero value is
// ready to use.
type Set[T any] struct {
	mu   sync.Mutex
	fns  map[int]func(T)
	next int
}

// Add calls fn with every value announced from now on, until stop is
// called. fn runs on the goroutine calling Announce: it must only keep
// the value and return.
func (s *Set[T]) Add(fn func(T)) (stop func()) {
	s.mu.Lock()
	if s.fns == nil {
		s.fns = map[int]func(T){}
	}
	s.next++
	id := s.next
	s.fns[id] = fn
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.fns, id)
		s.mu.Unlock()
	}
}

// Announce calls every function watching with v.
func (s *Set[T]) Announce(v T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, fn := range s.fns {
		fn(v)
	}
}
