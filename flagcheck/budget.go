package flagcheck

import (
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/relaybench/relaybench/internal/rlimit"
	"github.com/relaybench/relaybench/internal/sysinfo"
)

// What a run's counts cost, checked with the flags before any work: a count
// the machine cannot pay for, in memory or in open files, is a usage error
// naming the flag and the limit, never an out-of-memory crash or a run that
// opens connections until the open-file limit. The figures are approximate
// lower bounds of what the workloads hold: a count refused here could not
// have run.
const (
	// ConnBytes: client memory of one open WebSocket connection (read and
	// write buffers, its goroutines).
	ConnBytes = 64 << 10
	// RecordBytes: one query's or one timed event's record (filter,
	// timings, outcome).
	RecordBytes = 512
	// ModelEventBytes: heap of one accepted event in the query model of a
	// streamed corpus (README, How fast the client is: 0.64 KB measured).
	ModelEventBytes = 512
)

// StoredEventBytes is an event of about size content bytes held in memory
// as wire JSON (a query's answer, a corpus event).
func StoredEventBytes(size int) float64 { return float64(size) + 700 }

// FreshEventBytes is a pre-signed fresh event of a live workload: the
// parsed event, its wire JSON and its index entry.
func FreshEventBytes(size int) float64 { return 2*float64(size) + 1024 }

// memoryLimit is the memory relaybench may use (0: unknown, nothing checked).
var memoryLimit = sync.OnceValue(sysinfo.MemoryLimit)

// Memory refuses v (the value of flag) when n units of per bytes each need
// more memory than the machine has.
func (r *Ranges) Memory(flag string, v any, n, per float64, unit string) {
	lim := float64(memoryLimit())
	if r.err != nil || lim <= 0 {
		return
	}
	if need := n * per; need > lim || math.IsNaN(need) {
		r.Bad(flag, v, "needs about %s of memory (%s per %s), more than this machine's %s", fmtBytes(need), fmtBytes(per), unit, fmtBytes(lim))
	}
}

// Disk refuses v (the value of flag) when need bytes do not fit in the
// space free in dir (or the nearest folder above it that exists).
func (r *Ranges) Disk(flag string, v any, need float64, dir, what string) {
	if r.err != nil {
		return
	}
	for {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err == nil {
			if free := float64(st.Bavail) * float64(st.Bsize); need > free {
				r.Bad(flag, v, "%s needs about %s on disk, %s is free in %s", what, fmtBytes(need), fmtBytes(free), dir)
			}
			return
		}
		up := filepath.Dir(dir)
		if up == dir {
			return
		}
		dir = up
	}
}

// Conns refuses n connections open at once (the value of flag) that the
// open-file limit, once raised as far as this process may, or the memory
// cannot hold.
func (r *Ranges) Conns(flag string, v any, n int) {
	if r.err != nil {
		return
	}
	if err := rlimit.Need(n); err != nil {
		r.Bad(flag, v, "%v", err)
	}
	r.Memory(flag, v, float64(n), ConnBytes, "connection")
}

// ConnPair checks a + b connections open at once, naming the larger flag.
func (r *Ranges) ConnPair(flagA string, a int, flagB string, b int) {
	if a >= b {
		r.Conns(flagA, a, a+b)
	} else {
		r.Conns(flagB, b, a+b)
	}
}

// Queries checks --queries (at least 1) and --query-limit of a command
// that sends that many filters, and what their answers cost.
func (r *Ranges) Queries(queries, limit, events, size int) {
	r.Min("queries", queries, 1)
	r.QueryLimit("query-limit", limit)
	r.QueryMemory("query-limit", limit, 1, limit, events, size)
	r.QueryMemory("queries", queries, queries, limit, events, size)
}

// QueryMemory refuses queries whose answers (up to limit events each, at
// most the events published, kept until the phase is verified) do not fit.
func (r *Ranges) QueryMemory(flag string, v any, queries, limit, events, size int) {
	per := RecordBytes + float64(min(limit, events))*StoredEventBytes(size)
	r.Memory(flag, v, float64(queries), per, "query, answers of up to "+fmt.Sprint(min(limit, events))+" events")
}

// fmtBytes is a byte count for a message in binary units: 1.5 GiB, 64 KiB.
func fmtBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 || b >= 100 {
		return fmt.Sprintf("%.0f %s", b, units[i])
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}
