package main

import (
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/relaybench/relaybench/internal/rlimit"
	"github.com/relaybench/relaybench/internal/sysinfo"
)

// What a run's counts cost, checked with the flags (checkFlags) before any
// work: a count the machine cannot pay for, in memory or in open files, is a
// usage error naming the flag and the limit, never an out-of-memory crash
// or a run that opens connections until the open-file limit. The figures
// are approximate lower bounds of what the workloads hold: a count refused
// here could not have run.
const (
	// connBytes: client memory of one open WebSocket connection (read and
	// write buffers, its goroutines).
	connBytes = 64 << 10
	// recordBytes: one query's or one timed event's record (filter,
	// timings, outcome).
	recordBytes = 512
	// modelEventBytes: heap of one accepted event in the query model of a
	// streamed corpus (README, How fast the client is: 0.64 KB measured).
	modelEventBytes = 512
)

// storedEventBytes is an event of about size content bytes held in memory
// as wire JSON (a query's answer, a corpus event).
func storedEventBytes(size int) float64 { return float64(size) + 700 }

// freshEventBytes is a pre-signed fresh event of a live workload: the
// parsed event, its wire JSON and its index entry.
func freshEventBytes(size int) float64 { return 2*float64(size) + 1024 }

// memoryLimit is the memory relaybench may use (0: unknown, nothing checked).
var memoryLimit = sync.OnceValue(sysinfo.MemoryLimit)

// memory refuses v (the value of flag) when n units of per bytes each need
// more memory than the machine has.
func (r *ranges) memory(flag string, v any, n, per float64, unit string) {
	lim := float64(memoryLimit())
	if r.err != nil || lim <= 0 {
		return
	}
	if need := n * per; need > lim || math.IsNaN(need) {
		r.bad(flag, v, "needs about %s of memory (%s per %s), more than this machine's %s", fmtBytes(need), fmtBytes(per), unit, fmtBytes(lim))
	}
}

// disk refuses v (the value of flag) when need bytes do not fit in the
// space free in dir (or the nearest folder above it that exists).
func (r *ranges) disk(flag string, v any, need float64, dir, what string) {
	if r.err != nil {
		return
	}
	for {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err == nil {
			if free := float64(st.Bavail) * float64(st.Bsize); need > free {
				r.bad(flag, v, "%s needs about %s on disk, %s is free in %s", what, fmtBytes(need), fmtBytes(free), dir)
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

// conns refuses n connections open at once (the value of flag) that the
// open-file limit, once raised as far as this process may, or the memory
// cannot hold.
func (r *ranges) conns(flag string, v any, n int) {
	if r.err != nil {
		return
	}
	if err := rlimit.Need(n); err != nil {
		r.bad(flag, v, "%v", err)
	}
	r.memory(flag, v, float64(n), connBytes, "connection")
}

// connPair checks a + b connections open at once, naming the larger flag.
func (r *ranges) connPair(flagA string, a int, flagB string, b int) {
	if a >= b {
		r.conns(flagA, a, a+b)
	} else {
		r.conns(flagB, b, a+b)
	}
}

// span refuses a length of time n×d (the value of flag) beyond what a
// time.Duration holds (292 years).
func (r *ranges) span(flag string, v any, n float64, d time.Duration) {
	if s := n * d.Seconds(); s > float64(math.MaxInt64)/1e9 || math.IsNaN(s) {
		r.bad(flag, v, "makes the run longer than 292 years (the longest time relaybench can count)")
	}
}

// queries checks --queries (at least 1) and --query-limit of a command
// that sends that many filters, and what their answers cost.
func (r *ranges) queries(queries, limit, events, size int) {
	r.min("queries", queries, 1)
	r.queryLimit("query-limit", limit)
	r.queryMemory("query-limit", limit, 1, limit, events, size)
	r.queryMemory("queries", queries, queries, limit, events, size)
}

// queryMemory refuses queries whose answers (up to limit events each, at
// most the events published, kept until the phase is verified) do not fit.
func (r *ranges) queryMemory(flag string, v any, queries, limit, events, size int) {
	per := recordBytes + float64(min(limit, events))*storedEventBytes(size)
	r.memory(flag, v, float64(queries), per, "query, answers of up to "+fmt.Sprint(min(limit, events))+" events")
}

// fmtBytes is a byte count for a message: 1.5 GB, 64 KB.
func fmtBytes(b float64) string {
	units := []string{"B", "KB", "MB", "GB", "TB", "PB", "EB"}
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

// Sane maxima of the counts no machine's memory check bounds (each is far
// beyond what one client machine can do, so a value above is a typo or an
// overflow, never a plan): refused as usage errors naming the flag.
const (
	// maxRate: operations per second one client could ever sign and send
	// (relaybench signs a few tens of thousands of events a second a core).
	maxRate = 1_000_000
	// maxRunEvents: events one run could ever sign and send.
	maxRunEvents = 1_000_000_000
	// maxWindow: unacknowledged EVENTs one connection may have in flight.
	maxWindow = 1_000_000
	// maxQueryLimit: the limit of a REQ filter (NIP-01 limits are small;
	// relays cap them at hundreds to thousands).
	maxQueryLimit = 1_000_000
	// maxRecoveryWithin: burst recovery as latency within this fraction
	// above the pre-burst median (100: 101 times the median).
	maxRecoveryWithin = 100
)

// rateMax refuses a rate (the value of flag) that is not finite, not above
// 0 (at least 0 with zeroOK), above maxRate, or that over d (the run's
// length, named durFlag; 0: unknown) would send more than maxRunEvents.
func (r *ranges) rateMax(flag string, v float64, zeroOK bool, durFlag string, d time.Duration) {
	r.rate(flag, v, zeroOK)
	if r.err != nil {
		return
	}
	switch n := v * d.Seconds(); {
	case v > maxRate:
		r.bad(flag, v, "must be at most %d/s (more than one client could ever sign and send)", maxRate)
	case d > 0 && n > maxRunEvents:
		r.bad(flag, v, "× --%s %v is %.0f events, more than the %d one run may send", durFlag, d, n, maxRunEvents)
	}
}

// window refuses a window of unacknowledged EVENTs (the value of flag)
// above maxWindow, or, when above its default dflt, above the events of
// the run (events > 0): a window no connection could fill.
func (r *ranges) window(flag string, w, dflt int, events float64) {
	switch {
	case w > maxWindow:
		r.bad(flag, w, "must be at most %d", maxWindow)
	case w > dflt && events > 0 && float64(w) > events:
		r.bad(flag, w, "is more than the %.0f events of the run: no connection could fill it", events)
	}
}

// queryLimit refuses a filter limit (the value of flag) below 1 or above
// maxQueryLimit.
func (r *ranges) queryLimit(flag string, v int) {
	if v > maxQueryLimit {
		r.bad(flag, v, "must be at most %d (NIP-01 limits are small: relays cap them at hundreds to thousands)", maxQueryLimit)
		return
	}
	r.min(flag, v, 1)
}
