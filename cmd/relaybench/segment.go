package main

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/workload"
)

// StartAtTolerance is how far in the past --start-at may be (a script that
// computed it a moment ago) before it is a usage error.
const StartAtTolerance = 2 * time.Second

// segmentFlags split one test across instances (README: Beyond one
// machine): each runs its share (--segment) and their timed windows begin
// together (--start-at).
type segmentFlags struct {
	Segment string `name:"segment" placeholder:"I/N" help:"Run only execution segment I of N (0-based; k6's FROM:TO such as 0:1/4 is accepted too): the same corpus and parameters on every instance, each publishing corpus index i when i mod N = I, issuing query k when k mod N = I, with its share of the connections (remainder to the first segments). The N results files merge into the single-instance test (relaybench merge)."`
	StartAt string `name:"start-at" placeholder:"TIME" help:"Begin the first timed window at this wall-clock time, RFC 3339 (2026-01-01T12:00:00Z) or +DURATION from now (+30s): set-up (corpus, relay, dialling) happens before, then relaybench waits. A time more than 2 s in the past is refused. The results record how late the window began and the clock offset to the relay."`

	QueryAt string `name:"query-at" placeholder:"TIME" help:"Begin the query phase at this wall-clock time, RFC 3339 or +DURATION counted from --start-at (from now without it): with segments, late enough for every segment to have published, so that their queries see the whole corpus stored, as a single run's do. The results record how late it began."`

	seg     corpus.Segment `kong:"-"`
	startAt time.Time      `kong:"-"`
	queryAt time.Time      `kong:"-"`
	// segRun is the load subcommand's segment set-up (runner.StartSegment).
	segRun runner.SegmentRun `kong:"-"`
}

// validate parses both flags; a relative --start-at is resolved now, when
// the flags are checked, before anything is set up.
func (f *segmentFlags) validate() error {
	s, err := corpus.ParseSegment(f.Segment)
	if err != nil {
		return err
	}
	f.seg = s
	now := time.Now()
	if f.startAt, err = parseStartAt("start-at", f.StartAt, now, now); err != nil {
		return err
	}
	from := now
	if !f.startAt.IsZero() {
		from = f.startAt
	}
	if f.queryAt, err = parseStartAt("query-at", f.QueryAt, from, now); err != nil {
		return err
	}
	if !f.queryAt.IsZero() && !f.startAt.IsZero() && !f.queryAt.After(f.startAt) {
		return fmt.Errorf("--query-at %s: must be after --start-at %s", f.QueryAt, f.StartAt)
	}
	return nil
}

// apply puts the parsed flags into the runner's configuration.
func (f *segmentFlags) apply(cfg *runner.Config) {
	cfg.Segment, cfg.StartAt, cfg.QueryAt = f.seg, f.startAt, f.queryAt
}

// parseStartAt parses --start-at or --query-at (flag): RFC 3339, or
// +DURATION after from. A time more than StartAtTolerance before now is an
// error.
func parseStartAt(flag, v string, from, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	var t time.Time
	if rest, ok := strings.CutPrefix(v, "+"); ok {
		d, err := time.ParseDuration(rest)
		if err != nil || d < 0 {
			return time.Time{}, fmt.Errorf("--%s %s: want +DURATION (e.g. +30s) or an RFC 3339 time", flag, v)
		}
		t = from.Add(d)
	} else {
		var err error
		t, err = time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return time.Time{}, fmt.Errorf("--%s %s: want an RFC 3339 time (e.g. 2026-01-01T12:00:00Z) or +DURATION (e.g. +30s)", flag, v)
		}
	}
	if late := now.Sub(t); late > StartAtTolerance {
		return time.Time{}, fmt.Errorf("--%s %s: %s in the past (more than %s): the segments could not start together", flag, v, numfmt.Dur(late), numfmt.Dur(StartAtTolerance))
	}
	return t, nil
}

// segmentedWorkloads are the --workloads that run only their segment's
// share (runner.Env.Segment).
var segmentedWorkloads = map[string]bool{"load": true, "publish": true, "query": true}

// segmented checks what a segment of N > 1 needs: --relay a URL (every
// segment must load the same relay; a relay this instance starts would see
// only its share) and a fixed corpus (--anchor, or --corpus): the default
// anchor is the current hour, which instances started across an hour
// boundary would not share. Every extra workload must split too.
func (f *segmentFlags) segmented(t targetFlags, c corpusFlags, workloads []string) error {
	if f.seg.Whole() {
		return nil
	}
	if ref, err := t.relayRef(); err == nil && ref.URL == "" {
		return fmt.Errorf("--segment %s: give --relay ws://HOST:PORT, the one relay every segment loads (a relay this instance starts would see only its share)", f.Segment)
	}
	for _, w := range workloads {
		if w = strings.TrimSpace(w); w != "" && !segmentedWorkloads[w] {
			return fmt.Errorf("--segment %s: workload %s does not split into segments yet (publish, query and load do)", f.Segment, w)
		}
	}
	if c.Anchor == "" && c.Corpus == "" {
		return fmt.Errorf("--segment %s: give --anchor TIME (the same on every instance) so that every segment builds the same corpus", f.Segment)
	}
	return nil
}

// loadSegmented checks the segment flags of the load subcommand: only a
// publish load splits (a query or mixed load first publishes the whole
// corpus, which every segment would do again), against a --relay URL, and
// there is no query phase for --query-at.
func (f *segmentFlags) loadSegmented(t targetFlags, kind string) error {
	if f.QueryAt != "" {
		return fmt.Errorf("--query-at %s: load has no query phase (--query-at is for run)", f.QueryAt)
	}
	if f.seg.Whole() {
		return nil
	}
	if ref, err := t.relayRef(); err == nil && ref.URL == "" {
		return fmt.Errorf("--segment %s: give --relay ws://HOST:PORT, the one relay every segment loads (a relay this instance starts would see only its share)", f.Segment)
	}
	if kind != workload.LoadPublish {
		return fmt.Errorf("--segment %s: only --load-kind publish splits into segments (a %s load first publishes the whole corpus, which every segment would do again)", f.Segment, kind)
	}
	return nil
}

// waitNotice is runner.Config.Waiting: before a wait for --start-at or
// --query-at, one line says until when ("Waiting until 02:51:30 (in
// 178s) for --start-at..."), as a progress phase counting the seconds
// waited when the progress display is on, a plain line on standard error
// otherwise (none with --quiet).
func waitNotice(quiet, noProgress bool, prog *progress.Reporter) func(flag string, at time.Time) func() {
	return func(flag string, at time.Time) func() {
		in := time.Until(at)
		label := fmt.Sprintf("Waiting until %s (in %s) for %s", at.Local().Format("15:04:05"), numfmt.Dur(in), flag)
		if noProgress {
			if !quiet {
				fmt.Fprintln(os.Stderr, label+"...")
			}
			return func() {}
		}
		secs := max(int64((in+time.Second-1)/time.Second), 1)
		update, stop := prog.Phase(label, progress.CountFmt("Waited", "second", "seconds", secs), secs)
		end, start := make(chan struct{}), time.Now()
		var wg sync.WaitGroup
		wg.Go(func() {
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-end:
					return
				case <-tick.C:
					update(min(int64(time.Since(start)/time.Second), secs))
				}
			}
		})
		return func() {
			close(end)
			wg.Wait()
			if !time.Now().Before(at) {
				update(secs)
			}
			stop()
		}
	}
}

// heldProgress holds each phase's display (its first line, "Publishing
// 1,000 events...") until the phase counts for the first time, which it
// does once its clock has started: after the wait for --start-at or
// --query-at, whose line (waitNotice) then comes first, as the work does.
// Without either time it is progress itself.
func heldProgress(cfg runner.Config, progress func(label string, total int64) func(int64)) func(label string, total int64) func(int64) {
	if cfg.StartAt.IsZero() && cfg.QueryAt.IsZero() {
		return progress
	}
	return func(label string, total int64) func(int64) {
		var once sync.Once
		var update func(int64)
		return func(done int64) {
			once.Do(func() { update = progress(label, total) })
			update(done)
		}
	}
}
