//go:build unix

package schedule

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// cpuTime is this process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDispatch runs the real dispatcher (precise sleep, real clock)
// with a no-op op at fixed rates for 3 s each and reports how late ops
// started. Run with -benchtime=1x; each iteration is one whole run. The
// highest rate whose lateness p99 stays ≤ 1 ms with nothing dropped is what
// the scheduler sustains on this machine (shared with whatever else runs);
// cpu-µs/op is the process's CPU time (dispatcher, workers, runtime) per op.
//
//	go test -run '^$' -bench Dispatch -benchtime 1x ./schedule/
func BenchmarkDispatch(b *testing.B) {
	type point struct {
		rate     float64
		minSleep time.Duration
	}
	var points []point
	for _, rate := range []float64{10_000, 50_000, 80_000, 120_000, 200_000} {
		points = append(points, point{rate, DefaultMinSleep})
	}
	points = append(points, point{80_000, 20 * time.Microsecond}, point{80_000, 100 * time.Microsecond})
	for _, pt := range points {
		rate := pt.rate
		b.Run(fmt.Sprintf("rate=%.0f/minsleep=%v", rate, pt.minSleep), func(b *testing.B) {
			p := must(Constant(rate, 3*time.Second))
			var r *Result
			var cpu time.Duration
			for b.Loop() {
				c0 := cpuTime()
				var err error
				r, err = Run(context.Background(), Config{Pattern: p, Pool: 64, MinSleep: pt.minSleep}, func(context.Context, int64, int) Outcome {
					return Outcome{Accepted: true}
				})
				if err != nil {
					b.Fatal(err)
				}
				cpu = cpuTime() - c0
			}
			secs := float64(r.End-r.Start) / 1e9
			b.ReportMetric(float64(r.Sent)/secs, "sent/s")
			b.ReportMetric(float64(r.Dropped), "dropped")
			b.ReportMetric(float64(r.Lateness.Quantile(50))/1e3, "late-p50-µs")
			b.ReportMetric(float64(r.Lateness.Quantile(99))/1e3, "late-p99-µs")
			b.ReportMetric(float64(r.Lateness.Quantile(99.9))/1e3, "late-p99.9-µs")
			b.ReportMetric(float64(r.Lateness.Max())/1e3, "late-max-µs")
			b.ReportMetric(float64(r.DispatchLateness.Quantile(99))/1e3, "dispatch-p99-µs")
			b.ReportMetric(float64(r.MaxInFlight), "max-in-flight")
			b.ReportMetric(float64(cpu)/1e3/float64(r.Sent), "cpu-µs/op")
		})
	}
}
