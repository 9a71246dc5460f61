package runner

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/workload"
)

// StartLateWarn is the lateness of a segment's first timed window after
// --start-at above which the run gets a note (and a report flags it).
const StartLateWarn = 100 * time.Millisecond

// startGate holds a timed window until a common wall-clock time: the
// first timed window until --start-at, the query phase until --query-at.
// Set-up (corpus, relay start, dialling) happens before it; the gate is the
// last thing before the phase's clock starts.
type startGate struct {
	ctx  context.Context
	at   time.Time
	flag string // "--start-at" or "--query-at"
	once sync.Once
	late *int64 // where the lateness is recorded
	got  time.Duration
	// waited is how long the gate held the clock; fired says it did,
	// settled that the wait was taken out of its phase's set-up time.
	waited         time.Duration
	fired, settled bool
	// waiting is Config.Waiting: told before the gate waits.
	waiting func(flag string, at time.Time) (done func())
}

func newStartGate(ctx context.Context, at time.Time, flag string, late *int64) *startGate {
	if at.IsZero() {
		return nil
	}
	return &startGate{ctx: ctx, at: at, flag: flag, late: late}
}

// wait sleeps until the gate's time (or ctx ends) and records how late it
// woke: the timed window begins right after.
func (g *startGate) wait() {
	t0 := time.Now()
	defer func() { g.waited, g.fired = time.Since(t0), true }()
	if d := time.Until(g.at); d > 0 {
		done := func() {}
		if g.waiting != nil {
			done = g.waiting(g.flag, g.at)
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-g.ctx.Done():
			t.Stop()
		}
		done()
	}
	g.got = max(time.Since(g.at), 0)
	*g.late = int64(g.got)
}

// sampler wraps a workload's sampler: its first call, right before the
// timed window's clock starts, waits for the gate's time. begin may be nil
// (the relay is not observed): the wrapper then only waits.
func (g *startGate) sampler(begin workload.Sampler) workload.Sampler {
	if g == nil {
		return begin
	}
	return func() func() *results.Resources {
		g.once.Do(g.wait)
		if begin == nil {
			return func() *results.Resources { return nil }
		}
		return begin()
	}
}

// probe wraps p the same way for workloads run after publish and query.
func (g *startGate) probe(p Probe) Probe {
	if g == nil {
		return p
	}
	return gatedProbe{g: g, p: p}
}

type gatedProbe struct {
	g *startGate
	p Probe
}

func (gp gatedProbe) Begin() func() *results.Resources {
	var inner workload.Sampler
	if gp.p != nil {
		inner = gp.p.Begin
	}
	return gp.g.sampler(inner)()
}

// note is the run's note about a late start, when the gate opened more
// than StartLateWarn after its time ("" otherwise).
func (g *startGate) note() string {
	if g == nil || g.got <= StartLateWarn {
		return ""
	}
	why := "set-up (corpus, relay, dialling) finished late or the machine was busy"
	if g.flag == "--query-at" {
		why = "this segment's publishing (or set-up) ended after it"
	}
	return fmt.Sprintf("timed window began %.3f s after %s %s: %s; this segment did not begin with the others",
		g.got.Seconds(), g.flag, g.at.UTC().Format(time.RFC3339Nano), why)
}

// ClockProbeStep is the interval between the NIP-11 fetches that look for
// the relay's second tick.
const ClockProbeStep = 20 * time.Millisecond

// RelayClockOffset estimates this machine's wall clock minus the relay's,
// from the HTTP Date header (whole seconds) of its NIP-11 document: it
// fetches the document every ClockProbeStep until the Date changes between
// two answers (at most about 1.2 s). The relay's clock read S+1 at a local
// time between the send of the last answer dated S and the arrival of the
// first dated S+1; the estimate is the middle of that interval and errNs
// its half width (ClockProbeStep/2 plus a round trip on loopback). ok is
// false when the relay sends no Date header or did not answer.
func RelayClockOffset(ctx context.Context, wsURL string) (offset, errNs time.Duration, ok bool) {
	u, err := nip11.HTTPURL(wsURL)
	if err != nil {
		return 0, 0, false
	}
	client := &http.Client{Timeout: 2 * time.Second}
	defer client.CloseIdleConnections()
	fetch := func() (sent, got time.Time, date time.Time, ok bool) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "application/nostr+json")
		sent = time.Now()
		resp, err := client.Do(req)
		got = time.Now()
		if err != nil {
			return
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		date, err = http.ParseTime(resp.Header.Get("Date"))
		return sent, got, date, err == nil
	}
	prevSent, _, prevDate, ok := fetch()
	if !ok {
		return 0, 0, false
	}
	deadline := time.Now().Add(1300 * time.Millisecond)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(ClockProbeStep)
		sent, got, date, ok := fetch()
		if !ok {
			return 0, 0, false
		}
		if date.After(prevDate) {
			if date.Sub(prevDate) != time.Second {
				// more than one second between two answers: too slow to tell
				return 0, 0, false
			}
			lo, hi := prevSent, got
			mid := lo.Add(hi.Sub(lo) / 2)
			return mid.Sub(date), hi.Sub(lo) / 2, true
		}
		prevSent, prevDate = sent, date
	}
	return 0, 0, false
}

// segmentSetup records the segment and the common start in run, measures
// the clock offset to the relay when either is asked for, and returns the
// gate that holds the first timed window until StartAt (nil without one).
func (cfg Config) segmentSetup(ctx context.Context, run *results.Run, url string) *startGate {
	if cfg.Segment.Whole() && cfg.StartAt.IsZero() && cfg.QueryAt.IsZero() {
		return nil
	}
	seg := &results.Segment{Index: cfg.Segment.Index, Count: max(cfg.Segment.Count, 1)}
	run.Segment = seg
	if off, e, ok := RelayClockOffset(ctx, url); ok {
		seg.ClockOffsetNs, seg.ClockOffsetErrNs, seg.ClockOffsetSource = int64(off), int64(e), "relay-date"
	} else {
		run.Notes = append(run.Notes, "clock offset to the relay not measured: its NIP-11 answers carry no usable HTTP Date header")
	}
	if !cfg.QueryAt.IsZero() {
		qa := cfg.QueryAt.UTC()
		seg.QueryAt = &qa
	}
	if cfg.StartAt.IsZero() {
		return nil
	}
	at := cfg.StartAt.UTC()
	seg.StartAt = &at
	g := newStartGate(ctx, at, "--start-at", &seg.StartLateNs)
	g.waiting = cfg.Waiting
	return g
}

// queryGate holds the query phase until QueryAt (nil without one).
func (cfg Config) queryGate(ctx context.Context, run *results.Run) *startGate {
	if cfg.QueryAt.IsZero() || run.Segment == nil {
		return nil
	}
	g := newStartGate(ctx, cfg.QueryAt, "--query-at", &run.Segment.QueryLateNs)
	g.waiting = cfg.Waiting
	return g
}

// finish notes a late start.
func (g *startGate) finish(run *results.Run) {
	if n := g.note(); n != "" {
		run.Notes = append(run.Notes, n)
	}
}

// segmentPublish gives a segment its share of the publishing connections
// (at least one).
func (cfg Config) segmentPublish(po *workload.PublishOptions) {
	if !cfg.Segment.Whole() {
		po.Connections = cfg.Segment.AtLeastOne(max(po.Connections, 1))
	}
}

// segmentStored records, in a segment, which corpus indexes the relay
// stored and which were sent without a decisive answer (unknown):
// relaybench merge verifies every segment's answers against the unions.
func (cfg Config) segmentStored(pr *workload.PublishResult, n int) {
	if !cfg.Segment.Whole() {
		pr.Phase.Stored = results.EncodeIndexSet(pr.StoredIndexes(), n)
		var unknown []int
		for i, o := range pr.Outcomes {
			if workload.Undecided(o) {
				unknown = append(unknown, i)
			}
		}
		if len(unknown) > 0 {
			pr.Phase.Unknown = results.EncodeIndexSet(unknown, n)
		}
	}
}

// segmentQuery sets a segment's query options and returns the events its
// filters are drawn from. Every segment draws the same filters as one
// instance would from the whole corpus stored (the relay holds every
// segment's events, which no segment alone knows) and issues query k when
// it owns k (from the whole corpus when nothing was published, as a single
// run does). Its answers are checked here only for validity and filter
// match; they are recorded for relaybench merge, which checks them against
// all segments' stored events.
func (cfg Config) segmentQuery(qo *workload.QueryOptions, c *corpus.Corpus, published bool) []*nostr.Event {
	qo.Segment = cfg.Segment
	qo.RecordAnswers = true
	qo.Connections = cfg.Segment.AtLeastOne(max(qo.Connections, 1))
	if !published {
		return c.Events // as a single run with --skip-publish draws them
	}
	return verify.NewModel(c.Events).Live
}

// segmentQueryNote says how a segment's answers were checked. When this
// run published, its verification's reason for checking validity and
// filter match alone is the segment's (README: "a segment before the
// merge"), not "nothing was published in this run", which the query
// workload gives for a run without a model.
func (cfg Config) segmentQueryNote(ph *results.Phase, published bool) {
	if cfg.Segment.Whole() || ph.Name == "" {
		return
	}
	ph.Notes = append(ph.Notes, fmt.Sprintf("segment %s: this segment's share of the queries; answers checked here for validity and filter match only (the relay holds every segment's events): relaybench merge checks them against all segments' stored events", cfg.Segment))
	if v := ph.Verification; v != nil && published {
		for i, n := range v.Notes {
			if strings.HasPrefix(n, "nothing was published in this run") {
				v.Notes[i] = segmentPartialNote
			}
		}
	}
}

// segmentPartialNote is a published segment's reason for checking its
// answers for validity and filter match alone; the same words in every
// segment, so a merge that could not check across segments lists it once.
const segmentPartialNote = "a segment before the merge: the relay holds every segment's events, which one segment does not know, so missing and extra events cannot be known here: only validity and filter match were checked (relaybench merge checks them against all segments' stored events)"

// segmentEnv gives the workloads after publish, in a segment, what the
// relay holds when every segment's events are stored (the same for every
// segment, as in a single run) and no model: one segment cannot verify
// against what the others published.
func (cfg Config) segmentEnv(env *Env, c *corpus.Corpus) {
	if !cfg.Segment.Whole() {
		env.Live, env.Model = verify.NewModel(c.Events).Live, nil
	}
}

// settle takes the gate's wait out of the set-up time of the phase whose
// clock it held (the phase measured it as time before its clock), once,
// and says in the phase how long it waited. Call it from the goroutine that
// ran the phase, after the phase returned.
func (g *startGate) settle(ph *results.Phase) {
	if g == nil || !g.fired || g.settled {
		return
	}
	g.settled = true
	ph.SetupSecs = max(ph.SetupSecs-g.waited.Seconds(), 0)
	ph.Notes = append(ph.Notes, fmt.Sprintf("waited %s for %s %s before the clock started: not timed, not in the set-up time",
		numfmt.Dur(g.waited), g.flag, g.at.UTC().Format(time.RFC3339Nano)))
}

// SegmentRun is a workload command's segment set-up outside Run (the load
// subcommand): Sampler wraps the workload's sampler so that the first timed
// window waits for the common start; Settle takes that wait out of a
// phase's set-up time; End adds the run's note on a late start. All are
// no-ops for a run that is no segment and has no start time.
type SegmentRun struct{ g *startGate }

// StartSegment records seg and startAt in run, measures the clock offset
// to the relay at url when either is given, and returns the run's gate.
func StartSegment(ctx context.Context, run *results.Run, url string, seg corpus.Segment, startAt time.Time) SegmentRun {
	return SegmentRun{g: Config{Segment: seg, StartAt: startAt}.segmentSetup(ctx, run, url)}
}

// Announce has waiting (as Config.Waiting) told of the wait for the common
// start before it begins.
func (s SegmentRun) Announce(waiting func(flag string, at time.Time) (done func())) {
	if s.g != nil {
		s.g.waiting = waiting
	}
}

// Sampler wraps begin (nil: the relay is not observed).
func (s SegmentRun) Sampler(begin workload.Sampler) workload.Sampler { return s.g.sampler(begin) }

// Settle takes the wait out of ph's set-up time (once, in the phase that
// waited).
func (s SegmentRun) Settle(ph *results.Phase) { s.g.settle(ph) }

// End notes a late start in run.
func (s SegmentRun) End(run *results.Run) { s.g.finish(run) }
