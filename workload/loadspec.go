package workload

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/schedule"
)

func init() {
	Declare[LoadSpec](Decl{Name: "load", Brief: "constant 50 ops/s for 60 s", Input: NeedsCorpus, Adds: true,
		Summary: "Open-loop load: ops at the intended times of a pattern whatever the relay answers; corrected latency, drops counted, per-second series."})
}

// LoadTuning are the open-loop settings of load (find-max has the same
// flags with its own defaults; the CLI checks both the same way).
type LoadTuning struct {
	Pool        int           `name:"load-pool" default:"10" help:"Most operations in flight at once (reference: -load-pool). An op due while all are busy waits up to --load-max-lateness, then is dropped and counted."`
	Connections int           `name:"load-connections" default:"0" help:"Connections the ops are spread over (default min(--load-pool, 8))."`
	MaxLateness time.Duration `name:"load-max-lateness" default:"1s" help:"An op that cannot start within this of its intended time is dropped (counted, never silently lost)."`
	Warmup      time.Duration `name:"load-warmup" default:"0s" help:"Ops intended in this first part are counted but left out of latency and lateness."`
	MaxEvents   int           `name:"load-max-events" default:"0" help:"Refuse a pattern needing more distinct pre-signed events than this (events are never reused); 0: no cap. They are signed into a temporary file (about 1.7 KB per 1 KB event in $TMPDIR), not held in memory: the limits are disk space and the signing time, said before it starts."`
}

// LoadSpec configure the load workload: one arrival pattern, or a named
// suite of them, each its own phase with fresh events. Base's Timeout
// bounds the wait for an OK and for an EOSE.
type LoadSpec struct {
	Base `kong:"-" set:"timeout=10s"`
	LoadTuning
	Pattern     string        `name:"load-pattern" default:"constant" help:"Arrival pattern: constant, ramp, step, spike, burst, sine, poisson (reference: -load-pattern)."`
	Duration    time.Duration `name:"load-duration" default:"60s" help:"Length of the pattern, or of the whole suite (--load-suite standard: a fifth of it per phase) (reference: -load-duration)."`
	BaseRate    float64       `name:"load-base" default:"50" help:"Base rate in ops/s (reference: -load-base)."`
	Peak        float64       `name:"load-peak" default:"200" help:"Peak rate in ops/s (reference: -load-peak)."`
	Kind        string        `name:"load-kind" default:"publish" enum:"publish,query,mixed" help:"publish (distinct pre-signed events, done at OK), query (REQs drawn from the published corpus, done at EOSE) or mixed (--load-mix)."`
	Mix         string        `name:"load-mix" default:"4:1" placeholder:"P:Q" help:"Mixed load: publishes to queries."`
	PatternSeed int64         `name:"load-seed" default:"1" help:"Poisson arrivals' seed."`
	Period      time.Duration `name:"load-period" default:"0s" help:"Sine period (default: the duration)."`
	Every       time.Duration `name:"load-every" default:"0s" help:"Burst: a burst every this long (default duration/6)."`
	Width       time.Duration `name:"load-width" default:"0s" help:"Spike or burst width (default duration/10, every/10)."`
	At          time.Duration `name:"load-at" default:"0s" help:"Spike start (default: centred)."`
	Steps       int           `name:"load-steps" default:"0" help:"Step pattern: levels from base to peak (default 5)."`
	Suite       string        `name:"load-suite" placeholder:"NAME" help:"Run a named sequence of patterns, one phase each, fresh events each, sharing --load-duration: standard (constant, ramp, spike, sine, burst: a fifth of it each) or staircase (10 steps from --load-base to --load-peak over all of it). --load-pattern and its shape flags (--load-width, --load-at, --load-every, --load-period, --load-steps) do not apply (reference: -load-suite)."`
	Limit       int           `name:"query-limit" default:"100" help:"Limit of each query filter (query and mixed loads)."`
	// Size is the content bytes of each published event (the CLI's --size,
	// the corpus's).
	Size int `kong:"-" default:"1024"`
}

// Patterns returns the phases to run, by name: the pattern ("load"), or
// each pattern of the suite ("load/<pattern>").
func (s LoadSpec) Patterns() ([]string, []schedule.Pattern, error) {
	if s.Suite != "" {
		ps, err := schedule.Suite(s.Suite, s.BaseRate, s.Peak, s.Duration)
		if err != nil {
			return nil, nil, err
		}
		var names []string
		seen := map[string]int{}
		for _, p := range ps {
			n := strings.Fields(p.String())[0]
			seen[n]++
			if seen[n] > 1 {
				n += "-" + strconv.Itoa(seen[n])
			}
			names = append(names, "load/"+n)
		}
		return names, ps, nil
	}
	sp := schedule.Spec{Pattern: s.Pattern, Duration: s.Duration, Base: s.BaseRate, Peak: s.Peak, Period: s.Period,
		Every: s.Every, Width: s.Width, At: s.At, Steps: s.Steps, Seed: s.PatternSeed}
	p, err := sp.Build()
	if err != nil {
		return nil, nil, err
	}
	return []string{"load"}, []schedule.Pattern{p}, nil
}

// ParseLoadMix reads a publishes:queries mix ("4:1").
func ParseLoadMix(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, ":")
	p, err1 := strconv.Atoi(strings.TrimSpace(a))
	q, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || p < 0 || q < 0 || p+q == 0 {
		return 0, 0, fmt.Errorf("--load-mix %q: want PUBLISHES:QUERIES, e.g. 4:1", s)
	}
	return p, q, nil
}

// Options are the load options every phase of s shares.
func (s LoadSpec) Options() (LoadOptions, error) {
	pp, qp, err := ParseLoadMix(s.Mix)
	if err != nil {
		return LoadOptions{}, err
	}
	t := s.LoadTuning
	return LoadOptions{Base: Base{Timeout: s.Timeout, Seed: s.Seed, Dial: s.Dial},
		Kind: s.Kind, Pool: t.Pool, Connections: t.Connections, MaxLateness: t.MaxLateness, Warmup: t.Warmup,
		PublishParts: pp, QueryParts: qp, Size: s.Size, MaxEvents: t.MaxEvents, Limit: s.Limit,
	}, nil
}

// Run runs each pattern of s on env's relay, in turn: publishing fresh
// events signed by env's corpus keys, or querying what the publish phase
// left on it (env.Live).
func (s LoadSpec) Run(ctx context.Context, env Env) ([]results.Phase, error) {
	applyDefaults(&s)
	s.fromEnv(env, "", 0)
	names, pats, err := s.Patterns()
	if err != nil {
		return nil, err
	}
	base, err := s.Options()
	if err != nil {
		return nil, err
	}
	if s.Kind != LoadPublish && len(env.Live) == 0 {
		return nil, fmt.Errorf("load %s: nothing was published to query (run without --skip-publish)", s.Kind)
	}
	var phases []results.Phase
	for i, p := range pats {
		o := base
		o.Name, o.Pattern, o.Source, o.Begin = names[i], p, env.Live, s.Begin
		o.Segment = env.Segment // --segment: this instance's share of the pattern
		o.Show = env.Progress   // its plan and operations ended, then a mixed load's read-back
		if n, err := o.EventsNeeded(); err != nil {
			return phases, err
		} else if s.MaxEvents > 0 && n > int64(s.MaxEvents) {
			return phases, fmt.Errorf("load %s (%s) needs %d distinct events, above --load-max-events %d", names[i], p, n, s.MaxEvents)
		}
		ph, err := Load(ctx, env.URL, env.Corpus, o)
		if ph.Counts != nil {
			loadCommandsFlags(&ph)
			phases = append(phases, ph)
		}
		if err != nil {
			return phases, err
		}
	}
	return phases, nil
}

// loadCommandsFlags names load's flags in what ph says as the load
// command's ("all 10 in-flight slots (the load command's --load-pool)",
// "not started within the load command's --load-max-lateness"): run and
// compare --workloads load run the workload with those flags' defaults and
// have none of them. Notes, errors, the reason it stopped and why
// operations did not run (the verdict quotes these) are named so.
func loadCommandsFlags(ph *results.Phase) { renameFlags(ph, loadCommandsFlag) }

// LoadCommandsFlags names load's flags in what ph, a phase of Load run by
// another command (conformance --under-load), says: own maps each flag of
// load to what the command says instead, its own flag of the same meaning
// (conformance's "--load-duration", "--under-load" for --load-base) or
// words for one it fixes ("conformance's fixed pool"); any other is named
// as the load command's, as run and compare's load does.
func LoadCommandsFlags(ph *results.Phase, own map[string]string) {
	renameFlags(ph, flagNamer(own))
}

// flagNamer names every bare --load-… flag in a text: as own says, else as
// the load command's; a flag already named the load command's is left so.
func flagNamer(own map[string]string) func(string) string {
	const theirs = "the load command's --load-"
	args := []string{theirs, theirs}
	for _, f := range slices.SortedFunc(maps.Keys(own), func(a, b string) int { return len(b) - len(a) }) {
		args = append(args, f, own[f]) // the longest first: a flag never matches as part of another
	}
	return strings.NewReplacer(append(args, "--load-", theirs)...).Replace
}

// renameFlags puts every text of ph that may name a flag through f:
// notes, errors, the reason it stopped and why operations did not run.
func renameFlags(ph *results.Phase, f func(string) string) {
	ph.Notes = replaceEach(ph.Notes, f)
	ph.Errors = replaceEach(ph.Errors, f)
	ph.Aborted = f(ph.Aborted)
	if v := ph.Verification; v != nil {
		v.Notes = replaceEach(v.Notes, f)
	}
	for i := range ph.Accounts {
		a := &ph.Accounts[i]
		if len(a.NotRunBy) == 0 {
			continue
		}
		by := make(map[string]int64, len(a.NotRunBy))
		for why, n := range a.NotRunBy {
			by[f(why)] += n
		}
		a.NotRunBy = by
	}
}

// loadCommandsFlag names every bare --load-… flag in s as the load
// command's.
func loadCommandsFlag(s string) string { return flagNamer(nil)(s) }

// replaceEach is list with each string through f (nil stays nil).
func replaceEach(list []string, f func(string) string) []string {
	for i := range list {
		list[i] = f(list[i])
	}
	return list
}
