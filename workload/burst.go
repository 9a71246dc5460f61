package workload

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/flagcheck"
	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/schedule"
	"github.com/relaybench/relaybench/wire"
)

func init() {
	Declare[BurstOptions](Decl{Name: "burst", Input: NeedsKeys, Adds: true,
		Summary: "Bursts of events over a low background rate: success and OK latency in and between bursts, and recovery time."})
}

// BurstOptions configure the burst workload: Bursts bursts of BurstSize
// events every Every, spread over Connections connections, over a low
// background rate sent on a connection of its own.
type BurstOptions struct {
	Base        `set:"timeout=10s" set:"timeout_help=How long an EVENT may wait for its OK." param:"-"`
	Bursts      int           `default:"5" help:"Number of bursts."`
	BurstSize   int           `name:"burst-size" default:"1000" help:"Events per burst."`
	Every       time.Duration `default:"2s" help:"Burst period; burst k starts at (k+½)×every."`
	Connections int           `default:"4" help:"Connections sharing each burst."`
	Window      int           `default:"1024" help:"Unacknowledged EVENTs allowed per burst connection."`
	BetweenRate float64       `name:"between-rate" default:"100" zero:"keep" help:"Background events/s, on a connection of their own, throughout (0: none)."`
	// Recovery: the background traffic has recovered from a burst when
	// RecoveryRun consecutive background events have OK latency within
	// (1+RecoveryWithin) × the median of the background before the burst.
	RecoveryWithin float64 `name:"recovery-within" default:"0.5" param:"-" help:"Recovered when background OK latency is within this fraction above its pre-burst median."`
	RecoveryRun    int     `name:"recovery-run" default:"3" param:"-" help:"…for this many consecutive background events."`
	Size           int     `default:"1024" help:"Content bytes of each fresh event."`
}

// Run runs the burst workload on env's relay, with fresh events signed by
// env's corpus keys.
func (o BurstOptions) Run(ctx context.Context, env Env) ([]results.Phase, error) {
	applyDefaults(&o)
	inBursts := int64(o.Bursts * o.BurstSize)
	total := inBursts
	// The plan is said once, in the first line; the count lines say only
	// how many of the events were sent.
	label := fmt.Sprintf("Sending %s of %s", numfmt.Count(o.Bursts, "burst"), numfmt.Count(o.BurstSize, "event"))
	if o.BetweenRate > 0 {
		total += int64(o.BetweenRate * (time.Duration(o.Bursts) * o.Every).Seconds())
		label += fmt.Sprintf(" and %s between", numfmt.Group(total-inBursts))
	}
	o.fromEnv(env, progress.Counting(label, "Sent", "event", "events", total), total)
	return onePhase(Burst(ctx, env.URL, env.Corpus, o))
}

// burstSchedule is when each event is due, as an offset from the start:
// burst events 0…nBurst-1, then the background events.
type burstSchedule struct {
	nBurst, nBg int
	offs        []int64
	burstOf     []int   // burst number, -1 for background
	burstAt     []int64 // each burst's start offset
}

func newBurstSchedule(o BurstOptions) burstSchedule {
	total := time.Duration(o.Bursts) * o.Every
	s := burstSchedule{nBurst: o.Bursts * o.BurstSize, nBg: int(o.BetweenRate * total.Seconds())}
	s.offs = make([]int64, s.nBurst+s.nBg)
	s.burstOf = make([]int, s.nBurst+s.nBg)
	s.burstAt = make([]int64, o.Bursts)
	for k := 0; k < o.Bursts; k++ {
		s.burstAt[k] = int64(k)*int64(o.Every) + int64(o.Every)/2
		for j := 0; j < o.BurstSize; j++ {
			n := k*o.BurstSize + j
			s.offs[n] = s.burstAt[k]
			s.burstOf[n] = k
		}
	}
	if s.nBg > 0 {
		copy(s.offs[s.nBurst:], schedule.ConstantTimes(0, o.BetweenRate, s.nBg))
	}
	for j := 0; j < s.nBg; j++ {
		s.burstOf[s.nBurst+j] = -1
	}
	return s
}

// plan spreads the burst events over the burst connections and the
// background on a connection of its own, at their intended times.
func (s burstSchedule) plan(ctx context.Context, o BurstOptions, conns []*wire.Conn, fresh *Fresh, start int64, series *metrics.Series) *livePlan {
	p := &livePlan{user: ctx, conns: conns, fresh: fresh, window: o.Window, timeout: o.Timeout, series: series, okLatencySeries: true, progress: o.Progress}
	p.order = make([][]int, len(conns))
	p.intended = make([][]int64, len(conns))
	for n := 0; n < s.nBurst+s.nBg; n++ {
		w := o.Connections // background
		if n < s.nBurst {
			w = n % o.Connections
		}
		p.order[w] = append(p.order[w], n)
		p.intended[w] = append(p.intended[w], start+s.offs[n])
	}
	return p
}

// Burst runs the burst workload and reports success rate and OK latency
// inside bursts and between them, and for each burst the time until the
// background traffic's latency returned to its pre-burst level. Every event
// ends in one outcome of the shared live engine's ledger; the groups carry
// the same outcomes split by where the event was sent, and OK latency
// counts accepted events only (refusals apart, by class).
func Burst(ctx context.Context, url string, c *corpus.Corpus, o BurstOptions) (results.Phase, error) {
	applyDefaults(&o)
	s := newBurstSchedule(o)
	nonce := RunNonce()
	fresh, err := NewFresh(ctx, c, FreshSpec{Count: s.nBurst + s.nBg, Size: o.Size, Seed: o.Seed, Channels: ChannelNames(o.Seed, nonce, 1)}, nonce)
	if err != nil {
		return results.Phase{}, err
	}
	dial := o.Dial
	dial.OKTimeout = o.Timeout
	nConns := o.Connections
	if s.nBg > 0 {
		nConns++
	}
	setup := mono.Now()
	conns, err := wire.DialPool(ctx, url, nConns, dial)
	if err != nil {
		return results.Phase{}, err
	}
	defer closeAll(conns)

	w := o.open(setup)
	series := metrics.NewSeries(w.Start).Times(metrics.TimesOK)
	out := newLiveOut(len(fresh.Events))
	cpu := newBurstCPU(o)
	p := s.plan(ctx, o, conns, fresh, w.Start, series)
	p.booked = cpu.booked(s)
	go cpu.run(w.Start, s.burstAt)
	runLive(ctx, p, out)
	w.Close(out.lastOK.Load())
	cpu.halt()

	ph := w.Phase("burst", "burst")
	ph.Params = map[string]any{
		"bursts": o.Bursts, "burst_size": o.BurstSize, "every": o.Every.String(), "connections": o.Connections,
		"window": o.Window, "between_rate": o.BetweenRate, "recovery_within": o.RecoveryWithin,
		"recovery_run": o.RecoveryRun, "size": o.Size, "timeout": o.Timeout.String(),
	}
	ph.Size = o.Size
	publishSummary(&ph, out, len(fresh.Events))
	addConnStats(ctx, &ph, conns)

	b := &burstResult{o: o, s: s, out: out, start: w.Start}
	b.findEnds()
	ph.Groups = append(ph.Groups, b.groups()...)
	b.recovery(&ph)
	b.summary(&ph)
	cpu.into(&ph)
	ph.Series = series.Result(w.End)
	w.Finish(&ph)
	return ph, ctx.Err()
}

// burstResult is the analysis of one burst run.
type burstResult struct {
	o                  BurstOptions
	s                  burstSchedule
	out                *liveOut
	start              int64
	burstEnd           []int64 // mono time of each burst's last OK (0: none of it sent)
	sent               []bool  // whether any event of each burst was sent
	inBurst, bgBetween struct{ sent, accepted int64 }
}

// findEnds sets when each burst ended: its start to the last OK of its
// events.
func (b *burstResult) findEnds() {
	b.burstEnd = make([]int64, b.o.Bursts)
	b.sent = make([]bool, b.o.Bursts)
	for n := 0; n < b.s.nBurst; n++ {
		k := b.s.burstOf[n]
		b.burstEnd[k] = max(b.burstEnd[k], b.out.okRecv[n])
		b.sent[k] = b.sent[k] || b.out.sentAt[n].Load() != 0
	}
}

// during reports whether background event n was due while a burst was
// being sent or answered.
func (b *burstResult) during(n int) bool {
	at := b.start + b.s.offs[n]
	for k := range b.s.burstAt {
		if at >= b.start+b.s.burstAt[k] && at <= b.burstEnd[k] {
			return true
		}
	}
	return false
}

// burstGroup is one group's events: their outcomes and OK latency.
type burstGroup struct {
	name          string
	led           *outcome.Ledger
	hist, fromInt *metrics.Histogram
	sent          int64
}

// add books event n's outcome (from the engine) into g.
func (b *burstResult) add(g *burstGroup, n int) {
	g.led.Request(1)
	out := b.out
	if out.sentAt[n].Load() != 0 {
		g.sent++
	}
	switch out.outcomes[n] {
	case Accepted:
		g.led.Add(outcome.Accepted, "")
		g.hist.Record(out.okRecv[n] - out.okSent[n])
		g.fromInt.Record(out.okRecv[n] - (b.start + b.s.offs[n]))
	case Refused, Duplicate:
		g.led.Add(outcome.Refused, outcome.RefusalClass(wire.Classify(out.reasons[n])))
	case TimedOut:
		g.led.Add(outcome.TimedOut, "")
	case Failed:
		g.led.Add(outcome.ConnLost, "")
	case Cancelled:
		g.led.Add(outcome.Cancelled, "")
	}
}

// groups splits the events into the burst, the background sent during a
// burst and the background between bursts. Each group's outcomes add up to
// its events, and the groups' to the phase's account.
func (b *burstResult) groups() []results.Group {
	newGrp := func(name string) *burstGroup {
		return &burstGroup{name: name, led: outcome.New(results.OpEvent, 0), hist: metrics.NewHistogram(), fromInt: metrics.NewHistogram()}
	}
	in, bgDuring, bgBetween := newGrp("burst"), newGrp("background-during-burst"), newGrp("background-between-bursts")
	for n := 0; n < b.s.nBurst+b.s.nBg; n++ {
		switch {
		case n < b.s.nBurst:
			b.add(in, n)
		case b.during(n):
			b.add(bgDuring, n)
		default:
			b.add(bgBetween, n)
		}
	}
	var gs []results.Group
	for _, g := range []*burstGroup{in, bgDuring, bgBetween} {
		b.out.wd.Settle(g.led, outcome.WhyConnGone) // as the phase's ledger settled
		gs = append(gs, g.result())
	}
	b.inBurst.sent, b.inBurst.accepted = in.sent, in.led.Count(outcome.Accepted)
	b.bgBetween.sent, b.bgBetween.accepted = bgBetween.sent, bgBetween.led.Count(outcome.Accepted)
	return gs
}

// result is the group with its outcome split in the counters (the phase's
// names: accepted, refused, timed_out, failed = connection lost, not_sent =
// not run, cancelled; refused_<class> by reason class).
func (g *burstGroup) result() results.Group {
	a := g.led.Result()
	rg := results.Group{Name: g.name, Counts: map[string]int64{
		"requested": a.Requested, "sent": g.sent, "accepted": a.Accepted, "not_accepted": g.sent - a.Accepted,
		"refused": a.Refused, "timed_out": a.TimedOut, "failed": a.ConnLost, "not_sent": a.NotRun, "cancelled": a.Cancelled,
	}, Rates: map[string]float64{}, Latency: map[string]*results.Histogram{"ok": g.hist.Result(), "ok_from_intended": g.fromInt.Result()}}
	for class, n := range a.RefusedBy {
		rg.Counts["refused_"+class] = n
	}
	if g.sent > 0 {
		rg.Rates["success_rate"] = float64(a.Accepted) / float64(g.sent)
	}
	return rg
}

type bgPoint struct{ at, lat int64 }

// background returns the accepted background events' due times and OK
// latency, in due order.
func (b *burstResult) background() []bgPoint {
	var bg []bgPoint
	for n := b.s.nBurst; n < b.s.nBurst+b.s.nBg; n++ {
		if b.out.outcomes[n] == Accepted {
			bg = append(bg, bgPoint{b.start + b.s.offs[n], b.out.okRecv[n] - b.out.okSent[n]})
		}
	}
	sort.Slice(bg, func(i, j int) bool { return bg[i].at < bg[j].at })
	return bg
}

// recovery judges, for each burst, when the background traffic's OK
// latency returned to its pre-burst level.
func (b *burstResult) recovery(ph *results.Phase) {
	bg := b.background()
	rec := metrics.NewHistogram()
	var notRecovered, unjudged, notRun int64
	for k := range b.s.burstAt {
		if !b.sent[k] {
			notRun++
			continue
		}
		median, ok := b.preBurstMedian(bg, k)
		if !ok {
			unjudged++
			ph.Notes = append(ph.Notes, fmt.Sprintf("burst %d: too little background traffic before it to judge recovery (fewer than 3 background OKs since the previous burst was absorbed)", k+1))
			continue
		}
		if d, ok := b.recoveredAfter(bg, k, median); ok {
			rec.Record(d)
			ph.Counts["burst_"+strconv.Itoa(k+1)+"_recovery_ns"] = d
			continue
		}
		notRecovered++
		until := "the next burst"
		if k == len(b.s.burstAt)-1 {
			until = "the run ended" // the last burst has no next one
		}
		ph.Notes = append(ph.Notes, fmt.Sprintf("burst %d: background latency did not return within %.0f%% of its pre-burst median %s before %s", k+1, b.o.RecoveryWithin*100, numfmt.Dur(time.Duration(median)), until))
	}
	if rec.Count() > 0 {
		ph.Latency["recovery"] = rec.Result()
	}
	ph.Counts["not_recovered"] = notRecovered
	ph.Counts["recovery_unjudged"] = unjudged
	if notRun > 0 {
		ph.Counts["bursts_not_run"] = notRun
		ph.Notes = append(ph.Notes, fmt.Sprintf("%s were not sent (the phase ended first): no recovery judged for them", numfmt.Count(notRun, "burst")))
	}
}

// preBurstMedian is the median background OK latency between the previous
// burst's end and burst k's start (false with fewer than 3 samples).
func (b *burstResult) preBurstMedian(bg []bgPoint, k int) (int64, bool) {
	bStart := b.start + b.s.burstAt[k]
	prevEnd := b.start
	if k > 0 {
		prevEnd = max(b.burstEnd[k-1], b.start)
	}
	var pre []int64
	for _, p := range bg {
		if p.at >= prevEnd && p.at < bStart {
			pre = append(pre, p.lat)
		}
	}
	if len(pre) < 3 {
		return 0, false
	}
	sort.Slice(pre, func(i, j int) bool { return pre[i] < pre[j] })
	return pre[len(pre)/2], true
}

// recoveredAfter is the time from burst k's start until RecoveryRun
// consecutive background events were within the limit, before the next
// burst.
func (b *burstResult) recoveredAfter(bg []bgPoint, k int, median int64) (int64, bool) {
	bStart := b.start + b.s.burstAt[k]
	next := b.start + int64(b.o.Bursts)*int64(b.o.Every) + int64(b.o.Every)/2
	if k+1 < len(b.s.burstAt) {
		next = b.start + b.s.burstAt[k+1]
	}
	limit := int64(float64(median) * (1 + b.o.RecoveryWithin))
	run, recoveredAt := 0, int64(0)
	for _, p := range bg {
		if p.at < bStart || p.at >= next {
			continue
		}
		if p.lat > limit {
			run = 0
			continue
		}
		if run == 0 {
			recoveredAt = p.at
		}
		if run++; run >= b.o.RecoveryRun {
			return max(1, recoveredAt-bStart), true
		}
	}
	return 0, false
}

// summary adds the phase's rates, counters and notes.
func (b *burstResult) summary(ph *results.Phase) {
	o := b.o
	ph.Counts["burst_events"] = int64(b.s.nBurst)
	ph.Counts["background_events"] = int64(b.s.nBg)
	ph.Rates = map[string]float64{}
	if ph.Duration > 0 {
		ph.Rates[results.RateEvents] = results.PerSecond(ph.Counts[results.CountAccepted], ph.Duration)
	}
	if b.inBurst.sent > 0 {
		ph.Rates["burst_success_rate"] = float64(b.inBurst.accepted) / float64(b.inBurst.sent)
	}
	if b.bgBetween.sent > 0 {
		ph.Rates["between_success_rate"] = float64(b.bgBetween.accepted) / float64(b.bgBetween.sent)
	}
	var durs []string
	for k := range b.s.burstAt {
		if !b.sent[k] || b.burstEnd[k] == 0 {
			continue
		}
		if k+1 < len(b.s.burstAt) && b.burstEnd[k] > b.start+b.s.burstAt[k+1] {
			ph.Notes = append(ph.Notes, fmt.Sprintf("burst %d was still being answered when burst %d started: the relay needs longer than the burst command's --every (%v) to absorb a burst of %s", k+1, k+2, o.Every, numfmt.Group(int64(o.BurstSize))))
		}
		durs = append(durs, numfmt.Dur(time.Duration(b.burstEnd[k]-(b.start+b.s.burstAt[k]))))
	}
	ph.Notes = append(ph.Notes,
		fmt.Sprintf("%s of %s every %v over %s (at most %s unacknowledged each); background %s events/s on a connection of its own", numfmt.Count(o.Bursts, "burst"), numfmt.Count(o.BurstSize, "event"), o.Every, numfmt.Count(o.Connections, "connection"), numfmt.Group(int64(o.Window)), numfmt.Group(int64(o.BetweenRate+0.5))),
		"burst duration (start → its last OK): "+joinComma(durs),
		"OK latency (from actual send time) is EVENT write → OK of accepted events only (refusals are timed apart); OK latency (from intended send time) also counts the time a burst event waited in the client for a free slot",
		fmt.Sprintf("recovery: from a burst's start until %d consecutive background events have OK latency within %.0f%% of the pre-burst median", o.RecoveryRun, o.RecoveryWithin*100),
	)
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

// maxRecoveryWithin: burst recovery as latency within this fraction above
// the pre-burst median (100: 101 times the median).
const maxRecoveryWithin = 100

// Check checks the options as the CLI's flags set them (Checked).
func (o BurstOptions) Check(r *flagcheck.Ranges, _ CheckInput) {
	r.Min("bursts", o.Bursts, 1)
	r.Min("burst-size", o.BurstSize, 1)
	r.Positive("every", o.Every)
	r.Min("connections", o.Connections, 1)
	r.Min("window", o.Window, 1)
	r.Window("window", o.Window, 1024, float64(o.Bursts)*float64(o.BurstSize))
	r.Span("bursts", fmt.Sprintf("%d (× --every %v)", o.Bursts, o.Every), float64(o.Bursts), o.Every)
	r.RateMax("between-rate", o.BetweenRate, true, "every", time.Duration(o.Bursts)*o.Every)
	r.Rate("recovery-within", o.RecoveryWithin, false)
	if o.RecoveryWithin > maxRecoveryWithin {
		r.Bad("recovery-within", o.RecoveryWithin, "must be at most %d (latency within %d× its median is no recovery)", maxRecoveryWithin, maxRecoveryWithin+1)
	}
	r.Between("recovery-run", o.RecoveryRun, 1, flagcheck.MaxRunEvents)
	if bg := o.BetweenRate * (time.Duration(o.Bursts) * o.Every).Seconds(); o.BetweenRate > 0 && float64(o.RecoveryRun) > bg {
		r.Bad("recovery-run", o.RecoveryRun, "is more than the %.0f background events of the run (--between-rate %g × --bursts %d × --every %v)", bg, o.BetweenRate, o.Bursts, o.Every)
	}
	r.Size("size", o.Size)
	r.Positive("timeout", o.Timeout)
	// Costs: every event is signed and scheduled before the clock starts.
	perEvent := flagcheck.FreshEventBytes(o.Size) + 40 // + its schedule
	r.Memory("burst-size", o.BurstSize, float64(o.Bursts)*float64(o.BurstSize), perEvent, "event")
	if o.BetweenRate > 0 {
		r.Memory("between-rate", o.BetweenRate, o.BetweenRate*float64(o.Bursts)*o.Every.Seconds(), perEvent, "event")
	}
	r.Conns("connections", o.Connections, o.Connections+1)
}
