package workload

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/wire"
)

// BurstOptions configure the burst workload: Bursts bursts of BurstSize
// events every Every, spread over Connections connections, over a low
// background rate sent on a connection of its own.
type BurstOptions struct {
	Bursts      int           // number of bursts (default 5)
	BurstSize   int           // events per burst (default 1000)
	Every       time.Duration // burst period (default 2 s); burst k starts at (k+½)·Every
	Connections int           // connections sharing each burst (default 4)
	Window      int           // max unacknowledged EVENTs per burst connection (default 1024)
	BetweenRate float64       // background events/s on its own connection (default 100; 0 disables with -1)
	// Recovery: the background traffic has recovered from a burst when
	// RecoveryRun consecutive background events have OK latency within
	// (1+RecoveryWithin) × the median of the background before the burst.
	RecoveryWithin float64 // default 0.5 (50 %)
	RecoveryRun    int     // default 3
	Size           int     // content bytes (default 1024)
	Timeout        time.Duration
	Seed           int64
	Dial           wire.Options
	Progress       func(done int64)
}

// Burst runs the burst workload and reports success rate and OK latency
// inside bursts and between them, and for each burst the time until the
// background traffic's latency returned to its pre-burst level.
func Burst(ctx context.Context, url string, c *corpus.Corpus, o BurstOptions) (results.Phase, error) {
	ph := results.Phase{Name: "burst", Workload: "burst"}
	if o.Bursts <= 0 {
		o.Bursts = 5
	}
	if o.BurstSize <= 0 {
		o.BurstSize = 1000
	}
	if o.Every <= 0 {
		o.Every = 2 * time.Second
	}
	if o.Connections <= 0 {
		o.Connections = 4
	}
	if o.Window <= 0 {
		o.Window = 1024
	}
	if o.BetweenRate == 0 {
		o.BetweenRate = 100
	}
	if o.BetweenRate < 0 {
		o.BetweenRate = 0
	}
	if o.RecoveryWithin <= 0 {
		o.RecoveryWithin = 0.5
	}
	if o.RecoveryRun <= 0 {
		o.RecoveryRun = 3
	}
	if o.Size <= 0 {
		o.Size = 1024
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	total := time.Duration(o.Bursts) * o.Every
	nBg := int(o.BetweenRate * total.Seconds())
	nBurst := o.Bursts * o.BurstSize
	nonce := RunNonce()
	fresh, err := NewFresh(ctx, c, FreshSpec{Count: nBurst + nBg, Size: o.Size, Seed: o.Seed, Channels: ChannelNames(o.Seed, nonce, 1)}, nonce)
	if err != nil {
		return ph, err
	}
	dial := o.Dial
	dial.OKTimeout = o.Timeout
	nConns := o.Connections
	if nBg > 0 {
		nConns++
	}
	conns, err := wire.DialPool(ctx, url, nConns, dial)
	if err != nil {
		return ph, err
	}
	defer closeAll(conns)

	// Schedule, as offsets from the start: burst events 0…nBurst-1, then the
	// background events.
	offs := make([]int64, nBurst+nBg)
	burstOf := make([]int, nBurst+nBg) // burst number, -1 for background
	burstAt := make([]int64, o.Bursts)
	for k := 0; k < o.Bursts; k++ {
		burstAt[k] = int64(k)*int64(o.Every) + int64(o.Every)/2
		for j := 0; j < o.BurstSize; j++ {
			n := k*o.BurstSize + j
			offs[n] = burstAt[k]
			burstOf[n] = k
		}
	}
	for j := 0; j < nBg; j++ {
		offs[nBurst+j] = int64(float64(j) * 1e9 / o.BetweenRate)
		burstOf[nBurst+j] = -1
	}

	cpu0 := CPUTime()
	start := mono.Now()
	series := metrics.NewSeries(start)
	plan := &livePlan{conns: conns, fresh: fresh, window: o.Window, timeout: o.Timeout, series: series, okLatencySeries: true, progress: o.Progress}
	plan.order = make([][]int, nConns)
	plan.intended = make([][]int64, nConns)
	for n := 0; n < nBurst; n++ {
		w := n % o.Connections
		plan.order[w] = append(plan.order[w], n)
		plan.intended[w] = append(plan.intended[w], start+offs[n])
	}
	if nBg > 0 {
		plan.window = max(plan.window, 1)
		for n := nBurst; n < nBurst+nBg; n++ {
			plan.order[o.Connections] = append(plan.order[o.Connections], n)
			plan.intended[o.Connections] = append(plan.intended[o.Connections], start+offs[n])
		}
	}
	out := newLiveOut(len(fresh.Events))
	runLive(ctx, plan, out)
	end := max(out.lastOK.Load(), start+1)
	cpu := CPUTime() - cpu0

	ph.Params = map[string]any{
		"bursts": o.Bursts, "burst_size": o.BurstSize, "every": o.Every.String(), "connections": o.Connections,
		"window": o.Window, "between_rate": o.BetweenRate, "recovery_within": o.RecoveryWithin,
		"recovery_run": o.RecoveryRun, "size": o.Size, "timeout": o.Timeout.String(),
	}
	ph.Start = mono.Time(start)
	ph.Duration = end - start
	ph.Counts = map[string]int64{}
	ph.Refused = map[string]int64{}
	ph.Latency = map[string]*results.Histogram{}
	publishSummary(&ph, out, len(fresh.Events))
	addConnStats(ctx, &ph, conns)

	// Each burst lasts from its start to the last OK of its events.
	burstEnd := make([]int64, o.Bursts)
	for n := 0; n < nBurst; n++ {
		k := burstOf[n]
		burstEnd[k] = max(burstEnd[k], out.okRecv[n])
	}
	type grp struct {
		name                  string
		hist, fromInt         *metrics.Histogram
		sent, accepted, fails int64
	}
	newGrp := func(name string) *grp {
		return &grp{name: name, hist: metrics.NewHistogram(), fromInt: metrics.NewHistogram()}
	}
	inBurst, bgDuring, bgBetween := newGrp("burst"), newGrp("background-during-burst"), newGrp("background-between-bursts")
	add := func(g *grp, n int) {
		if out.sentAt[n].Load() == 0 {
			return
		}
		g.sent++
		if out.outcomes[n] == Accepted {
			g.accepted++
			g.hist.Record(out.okRecv[n] - out.okSent[n])
			g.fromInt.Record(out.okRecv[n] - (start + offs[n]))
		} else {
			g.fails++
		}
	}
	type bgPoint struct{ at, lat int64 }
	var bg []bgPoint
	for n := 0; n < nBurst+nBg; n++ {
		if k := burstOf[n]; k >= 0 {
			add(inBurst, n)
			continue
		}
		at := start + offs[n]
		during := false
		for k := range burstAt {
			if at >= start+burstAt[k] && at <= burstEnd[k] {
				during = true
				break
			}
		}
		if during {
			add(bgDuring, n)
		} else {
			add(bgBetween, n)
		}
		if out.outcomes[n] == Accepted {
			bg = append(bg, bgPoint{at, out.okRecv[n] - out.okSent[n]})
		}
	}
	for _, g := range []*grp{inBurst, bgDuring, bgBetween} {
		rg := results.Group{Name: g.name, Counts: map[string]int64{"sent": g.sent, "accepted": g.accepted, "not_accepted": g.fails},
			Rates: map[string]float64{}, Latency: map[string]*results.Histogram{"ok": g.hist.Result(), "ok_from_intended": g.fromInt.Result()}}
		if g.sent > 0 {
			rg.Rates["success_rate"] = float64(g.accepted) / float64(g.sent)
		}
		ph.Groups = append(ph.Groups, rg)
	}

	// Recovery after each burst, from the background traffic.
	sort.Slice(bg, func(i, j int) bool { return bg[i].at < bg[j].at })
	rec := metrics.NewHistogram()
	var notRecovered, unjudged int64
	for k := range burstAt {
		bStart := start + burstAt[k]
		prevEnd := start
		if k > 0 {
			prevEnd = burstEnd[k-1]
		}
		var pre []int64
		for _, p := range bg {
			if p.at >= prevEnd && p.at < bStart {
				pre = append(pre, p.lat)
			}
		}
		next := start + int64(o.Bursts)*int64(o.Every) + int64(o.Every)/2
		if k+1 < len(burstAt) {
			next = start + burstAt[k+1]
		}
		if len(pre) < 3 {
			unjudged++
			ph.Notes = append(ph.Notes, fmt.Sprintf("burst %d: too little background traffic before it to judge recovery (fewer than 3 background OKs since the previous burst was absorbed)", k+1))
			continue
		}
		sort.Slice(pre, func(i, j int) bool { return pre[i] < pre[j] })
		median := pre[len(pre)/2]
		limit := int64(float64(median) * (1 + o.RecoveryWithin))
		run, recoveredAt := 0, int64(0)
		for _, p := range bg {
			if p.at < bStart || p.at >= next {
				continue
			}
			if p.lat <= limit {
				if run == 0 {
					recoveredAt = p.at
				}
				run++
				if run >= o.RecoveryRun {
					break
				}
			} else {
				run = 0
			}
		}
		if run >= o.RecoveryRun {
			d := max(1, recoveredAt-bStart)
			rec.Record(d)
			ph.Counts["burst_"+strconv.Itoa(k+1)+"_recovery_ns"] = d
		} else {
			notRecovered++
			ph.Notes = append(ph.Notes, fmt.Sprintf("burst %d: background latency did not return within %.0f%% of its pre-burst median %v before the next burst", k+1, o.RecoveryWithin*100, time.Duration(median).Round(time.Microsecond)))
		}
	}
	if rec.Count() > 0 {
		ph.Latency["recovery"] = rec.Result()
	}
	ph.Counts["not_recovered"] = notRecovered
	ph.Counts["recovery_unjudged"] = unjudged
	ph.Counts["burst_events"] = int64(nBurst)
	ph.Counts["background_events"] = int64(nBg)
	secs := float64(ph.Duration) / 1e9
	ph.Rates = map[string]float64{}
	if secs > 0 {
		ph.Rates["events_per_sec"] = float64(ph.Counts["accepted"]) / secs
	}
	if inBurst.sent > 0 {
		ph.Rates["burst_success_rate"] = float64(inBurst.accepted) / float64(inBurst.sent)
	}
	if bgBetween.sent > 0 {
		ph.Rates["between_success_rate"] = float64(bgBetween.accepted) / float64(bgBetween.sent)
	}
	var durs []string
	for k := range burstAt {
		if k+1 < len(burstAt) && burstEnd[k] > start+burstAt[k+1] {
			ph.Notes = append(ph.Notes, fmt.Sprintf("burst %d was still being answered when burst %d started: the relay needs longer than --every to absorb a burst of %d", k+1, k+2, o.BurstSize))
		}
		durs = append(durs, time.Duration(burstEnd[k]-(start+burstAt[k])).Round(time.Microsecond).String())
	}
	ph.Series = series.Result(end)
	judgeClientCPU(&ph, cpu)
	ph.Notes = append(ph.Notes,
		fmt.Sprintf("%d bursts of %d events every %v over %d connections (at most %d unacknowledged each); background %.0f events/s on a connection of its own", o.Bursts, o.BurstSize, o.Every, o.Connections, o.Window, o.BetweenRate),
		"burst duration (start → its last OK): "+joinComma(durs),
		"ok latency is EVENT write → OK; ok_from_intended also counts the time a burst event waited in the client for a free slot",
		fmt.Sprintf("recovery: from a burst's start until %d consecutive background events have OK latency within %.0f%% of the pre-burst median", o.RecoveryRun, o.RecoveryWithin*100),
	)
	return ph, ctx.Err()
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}
