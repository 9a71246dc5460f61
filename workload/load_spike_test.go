package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/schedule"
)

// TestSpikeJudgedAtItsPeak: a spike load (500/s, 5,000/s for 1 s, 6 s:
// 1,250/s on average) whose 10 slots filled during the spike with reply
// p99 2.46 ms is judged at the spike's rate: there the pool fills in 2 ms,
// so those replies kept it full (not "the client stalled", which the
// average rate's 8 ms fill time would say).
func TestSpikeJudgedAtItsPeak(t *testing.T) {
	judge := func(fullRate float64) string {
		res := &schedule.Result{Pool: 10, MaxInFlight: 10, Intended: 7500, Sent: 7500, Accepted: 7500,
			ClientLimited: true, ClientLimitedWhy: "lateness p99 3ms above 1ms: the pool of 10 was full", FullRate: fullRate,
			Latency: metrics.NewHistogram(), Uncorrected: metrics.NewHistogram(), RefusedLatency: metrics.NewHistogram(),
			Lateness: metrics.NewHistogram(), DispatchLateness: metrics.NewHistogram(), Series: metrics.NewSeries(0), End: int64(6 * time.Second)}
		for range 7500 {
			res.Latency.Record(int64(3 * time.Millisecond))
			res.Uncorrected.Record(int64(2460 * time.Microsecond))
			res.Lateness.Record(int64(3 * time.Millisecond))
			res.DispatchLateness.Record(int64(20 * time.Microsecond))
		}
		ph := res.Phase("load")
		ph.Resources = &results.Resources{ClientCPUSecs: 0.3}
		judgeLoad(&ph, res, 0, "")
		return strings.Join(ph.Notes, "\n")
	}
	if avg := judge(0); !strings.Contains(avg, "the client stalled") || !strings.Contains(avg, "8.00ms the pool takes to fill") {
		t.Fatalf("at the average rate the judgement should be the client's stall (the case this test guards):\n%s", avg)
	}
	peak := judge(5000)
	if strings.Contains(peak, "the client stalled") || strings.Contains(peak, "8.00ms") {
		t.Errorf("judged at the average rate, not the spike's 5,000/s:\n%s", peak)
	}
	if !strings.Contains(peak, "5,000 ops/s offered when the pool filled") {
		t.Errorf("the Little's-law note should quote the rate offered when the pool filled:\n%s", peak)
	}
}
