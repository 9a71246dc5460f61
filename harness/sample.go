package harness

import (
	"context"
	"io/fs"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/relaybench/relaybench/results"
)

// SampleInterval is how often Begin samples the relay's processes.
const SampleInterval = 200 * time.Millisecond

// Begin starts sampling the relay's process tree from /proc every
// SampleInterval; end stops it and returns what was measured between the
// two calls, the sampling window. Callers begin it when a phase's clock
// starts (connections already dialled) and end it when the clock stops, so
// that every figure covers the phase's timed window:
//
//   - RelayCPUSecs: user+sys CPU seconds of the relay's processes between
//     Begin and end: every process descending from the relay (and, for
//     relays on PostgreSQL, from the postmaster) or in their process groups.
//     Each process counts utime+stime+cutime+cstime, so a child that exits
//     and is reaped inside the tree keeps counting through its parent.
//   - RelayPeakRSS: the largest sum of the tree's resident set sizes seen
//     in a sample, the one at Begin included (shared pages of several
//     processes, e.g. PostgreSQL's shared buffers, count once per process).
//   - Series: one sample per interval, T in seconds since Begin returned:
//     relay cores busy and RSS, and this process's cores busy (ClientCPU),
//     each since the previous sample. The last is taken by end (unless it
//     comes less than a quarter interval after the one before), so the
//     series spans the window and integrates to RelayCPUSecs.
//   - RelayDataBytes: at end, the disk blocks used under the data dir, or
//     for PostgreSQL relays pg_database_size.
//
// ClientCPUSecs and ClientCPUUtil are left for the caller. end may be called
// once; Begin may be called again for the next phase.
func (i *Instance) Begin() (end func() *results.Resources) {
	s := &sampler{inst: i, stop: make(chan struct{}), done: make(chan struct{})}
	// One full scan gives the base CPU and the RSS at the start; the window
	// starts when it is done.
	s.baseRelay, s.peakRSS = s.read(true)
	s.lastRelay, s.seriesRelay = s.baseRelay, s.baseRelay
	s.baseClient = selfTicks()
	s.start = time.Now()
	s.lastClient, s.lastT = s.baseClient, s.start
	go s.loop()
	var once sync.Once
	var res *results.Resources
	return func() *results.Resources {
		once.Do(func() {
			close(s.stop)
			<-s.done
			s.sample(true)
			res = &results.Resources{
				RelayCPUSecs: float64(max(0, s.lastRelay-s.baseRelay)) / float64(clkTck),
				RelayPeakRSS: s.peakRSS,
				Series:       s.series,
			}
			res.RelayDataBytes = i.dataBytes()
		})
		return res
	}
}

type sampler struct {
	inst                   *Instance
	start, lastT           time.Time
	baseRelay, lastRelay   int64
	seriesRelay            int64 // relay ticks at the last sample of the series
	baseClient, lastClient float64
	peakRSS                int64
	series                 []results.ResourceSample
	n                      int   // samples taken
	known, lastRoots       []int // pids found by the last full scan
	stop, done             chan struct{}
}

func (s *sampler) loop() {
	defer close(s.done)
	t := time.NewTicker(SampleInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.sample(false)
		}
	}
}

// roots are the relay's leader and the postmaster.
func (s *sampler) roots() (roots, groups []int) {
	if g := int(s.inst.pgid.Load()); g > 0 {
		roots = append(roots, g)
		groups = append(groups, g)
	}
	if pg := s.inst.Postgres; pg != nil && pg.PID > 0 {
		roots = append(roots, pg.PID)
		groups = append(groups, pg.PID)
	}
	return roots, groups
}

// fullScanEvery is how many samples apart the sampler reads all of /proc
// to find new processes in the relay's tree; in between it reads only the
// processes it knows (reading /proc costs ~20 µs per process here).
const fullScanEvery = 5

// tree returns the relay's processes. A process that exits between full
// scans drops out, and its CPU time reappears in its parent's cutime and
// cstime once reaped; one started between full scans counts from the next
// one, with all its CPU time since it started.
func (s *sampler) tree(full bool) []procStat {
	roots, groups := s.roots()
	if len(roots) == 0 {
		return nil
	}
	s.n++
	if full || s.n%fullScanEvery == 0 || !equalInts(roots, s.lastRoots) {
		t := treeOf(allStats(), roots, groups)
		s.known = s.known[:0]
		for _, p := range t {
			s.known = append(s.known, p.pid)
		}
		s.lastRoots = roots
		return t
	}
	out := make([]procStat, 0, len(s.known))
	for _, pid := range s.known {
		if st, ok := readStat(pid); ok {
			out = append(out, st)
		}
	}
	return out
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// read returns the relay tree's CPU ticks and RSS now.
func (s *sampler) read(full bool) (ticks, rss int64) {
	for _, p := range s.tree(full) {
		ticks += p.cpuTicks
		rss += p.rssPages * pageSize
	}
	return ticks, rss
}

func (s *sampler) sample(full bool) {
	ticks, rss := s.read(full)
	now := time.Now()
	client := selfTicks()
	dt := now.Sub(s.lastT).Seconds()
	if ticks < s.lastRelay {
		ticks = s.lastRelay // a process left the tree unreaped: never count negative CPU
	}
	s.lastRelay = ticks
	if rss > s.peakRSS {
		s.peakRSS = rss
	}
	if dt >= SampleInterval.Seconds()/4 {
		s.series = append(s.series, results.ResourceSample{
			T:         now.Sub(s.start).Seconds(),
			RelayCPU:  float64(ticks-s.seriesRelay) / float64(clkTck) / dt,
			RelayRSS:  rss,
			ClientCPU: (client - s.lastClient) / dt,
		})
		s.lastT, s.lastClient, s.seriesRelay = now, client, ticks
	}
}

// selfTicks is this process's user+sys CPU in seconds.
func selfTicks() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// dataBytes is the size of what the relay stored.
func (i *Instance) dataBytes() int64 {
	if i.Postgres != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		n, err := i.Postgres.DatabaseSize(ctx)
		if err == nil {
			return n
		}
		return 0
	}
	return DirBytes(i.DataDir)
}

// DirBytes is the disk space used by the files under dir (allocated blocks,
// so sparse and preallocated files count what they occupy).
func DirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			} else {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
