package harness

import "sync"

// Usage reads the relay's CPU and memory now, over the same process tree
// Begin samples: every process descending from the relay (and, for relays
// on PostgreSQL, from the postmaster) or in their process groups, followed
// across Reset. A live view calls it once a second.
type Usage struct {
	mu sync.Mutex
	s  sampler
}

// Usage starts reading i's process tree; each Read scans /proc in full
// every fullScanEvery reads and reads only the processes it knows in
// between, as the phase sampler does.
func (i *Instance) Usage() *Usage { return &Usage{s: sampler{inst: i}} }

// Read is the tree's user+system CPU seconds (each process's own and its
// reaped children's) and resident memory in bytes; ok is false when the
// relay has no process now.
func (u *Usage) Read() (cpuSecs float64, rss int64, ok bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	tree := u.s.tree(false)
	var ticks int64
	for _, p := range tree {
		ticks += p.cpuTicks
		rss += p.rssPages * pageSize
	}
	return float64(ticks) / float64(clkTck), rss, len(tree) > 0
}
