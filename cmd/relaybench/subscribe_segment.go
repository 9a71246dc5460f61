package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
)

// subSegmentFlags are subscribe's segment flags (segmentFlags without
// --query-at: subscribe has no query phase).
type subSegmentFlags struct {
	Segment string `name:"segment" placeholder:"I/N" help:"Run only execution segment I of N (0-based): every instance signs the same fresh events (derived from --start-at) and holds subscriber i when i mod N = I (with the filter a single run gives subscriber i) and its share of the publishers, publishing fresh event j when j mod N = I at its time on the common schedule. Needs --relay URL, --rate and --start-at. The N results files merge into the single-instance test (relaybench merge), deliveries counted exactly."`
	StartAt string `name:"start-at" placeholder:"TIME" help:"Start the publishing schedule at this wall-clock time, RFC 3339 (2026-01-01T12:00:00Z) or +DURATION from now (+30s): dialling and subscribing happen before. The fresh events' nonce and created_at derive from it (the same on every instance given it); with --rate, deliveries are timed from each event's intended send time (start + j/rate). A time more than 2 s in the past is refused."`

	seg     corpus.Segment    `kong:"-"`
	startAt time.Time         `kong:"-"`
	segRun  runner.SegmentRun `kong:"-"`
}

// subscribeSegment checks subscribe's segment flags (--segment, --start-at):
// a segment of N > 1 needs the one relay every segment loads (--relay URL)
// and --rate: other segments' events are timed from their intended send
// time on the common open-loop schedule, as closed-loop send times are not
// known across instances; --start-at is the common start of that schedule
// and seeds the fresh events every segment signs alike.
func (c *subscribeCmd) subscribeSegment() error {
	f := &c.subSegmentFlags
	sf := segmentFlags{Segment: f.Segment, StartAt: f.StartAt}
	if err := sf.validate(); err != nil {
		return err
	}
	f.seg, f.startAt = sf.seg, sf.startAt
	if f.seg.Whole() {
		return nil
	}
	if ref, err := c.targetFlags.relayRef(); err == nil && ref.URL == "" {
		return fmt.Errorf("--segment %s: give --relay ws://HOST:PORT, the one relay every segment loads (a relay this instance starts would see only its share)", f.Segment)
	}
	if c.Rate <= 0 {
		return fmt.Errorf("--segment %s needs --rate (open loop): deliveries of another segment's events are timed from their intended send time on the common schedule (--start-at + j/rate); closed-loop send times are not known across instances", f.Segment)
	}
	if f.startAt.IsZero() {
		return fmt.Errorf("--segment %s needs --start-at TIME (the same on every instance): the common start of the schedule, from which every segment derives the same fresh events", f.Segment)
	}
	return nil
}

// runSubscribe is runLiveCommand with the segment set-up: the results record
// the segment, the common start and the clock offset to the relay, and the
// first timed window waits for --start-at.
func (c *subscribeCmd) runSubscribe(g *Globals, params map[string]any) error {
	if c.seg.Whole() && c.startAt.IsZero() {
		return runLiveCommand(g, "subscribe", c.targetFlags, c.liveKeyFlags, c.outputFlags, c.workload(), params)
	}
	s, keys, err := startLiveKeys(g, "subscribe", c.targetFlags, c.liveKeyFlags, c.outputFlags)
	if err != nil {
		return err
	}
	c.segRun = runner.StartSegment(g.Ctx, s.run, s.target.URL, c.seg, c.startAt)
	c.segRun.Announce(s.waitNotice())
	err = s.measure(c.workload(), keys, nil)
	c.segRun.End(s.run)
	s.setFresh(keys)
	if !c.seg.Whole() {
		c.segmentCorpus(s.run, keys)
	}
	return s.finish(params, err)
}

// segmentCorpus makes run's corpus the test's list of fresh events: every
// segment signs the same list and publishes its share, so the corpus is the
// same in every segment's file.
func (c *subscribeCmd) segmentCorpus(run *results.Run, keys *corpus.Corpus) {
	run.Corpus.Events = c.EventCount()
	for _, ph := range run.Phases {
		if ph.Deliveries != nil {
			run.Corpus.Events, run.Corpus.Bytes = ph.Deliveries.Events, ph.Deliveries.Bytes
		}
	}
	if n := len(run.Notes); n > 0 && strings.HasPrefix(run.Notes[n-1], "corpus: ") {
		run.Notes = run.Notes[:n-1] // setFresh's, about this segment's share
	}
	run.Notes = append(run.Notes, fmt.Sprintf("corpus: the test's %s fresh events (signed alike by every segment, the nonce and created_at derived from --start-at); this segment published event j when j mod %d = %d; the key corpus (%s keys, seed %d) only provided the signing keys",
		num(run.Corpus.Events), c.seg.Count, c.seg.Index, num(len(keys.Authors)), keys.Params.Seed))
}

// segmentUsage marks a segment flag error as a usage error.
func segmentUsage(err error) error { return withCode(judge.Usage, err) }
