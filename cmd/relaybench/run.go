package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"syscall"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/harness"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/internal/secp"
	"github.com/relaybench/relaybench/internal/sysinfo"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/report"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/threshold"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/wire"
)

type runCmd struct {
	targetFlags
	benchFlags
	outputFlags
	segmentFlags
}

func init() {
	register("run", "Publish the corpus to a relay, then query it back and verify every answer (the default benchmark).", &runCmd{})
}

// checkFlags checks every flag before anything starts (see check.go).
func (c *runCmd) checkFlags() error {
	var r ranges
	r.Add(c.targetFlags.validate())
	r.Add(c.benchFlags.validate())
	r.Add(c.segmentFlags.validate())
	if r.Err() == nil {
		r.Add(c.segmentFlags.segmented(c.targetFlags, c.corpusFlags, c.Workloads))
	}
	r.Add(c.outputFlags.validate())
	return r.Err()
}

func (c *runCmd) Run(g *Globals) error {
	extra, err := c.workloadFlags.build(c.Events)
	if err != nil {
		return err
	}
	cfg := c.benchFlags.config(extra)
	c.segmentFlags.apply(&cfg)
	return runCorpusCommand(g, corpusCommand{name: "run", target: c.targetFlags, corpus: c.corpusFlags,
		output: c.outputFlags, cfg: cfg, params: c.params()})
}

// loadCorpus loads or signs the corpus before any clock starts.
func loadCorpus(ctx context.Context, f corpusFlags, prog *progress.Reporter) (*corpus.Corpus, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	if f.Corpus != "" {
		doingBeforeFirstPhase("loading the corpus from " + f.Corpus)
		c, err := loadDump(ctx, f, prog)
		addAuthKeys(c) // NIP-42: its synthetic keys sign AUTH (auth.go)
		return c, err
	}
	p := f.params()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	// The display starts with the first batch signed: a corpus loaded from
	// the cache (reported done at once) is not said to be signed.
	var update func(int64)
	stop := func() {}
	onBatch := func(done, total int) {
		if update == nil {
			if done >= total {
				return
			}
			update, stop = prog.Phase("Signing "+numfmt.Count(f.Events, "event"), progress.CountFmt("Signed", "event", "events", int64(f.Events)), int64(f.Events))
		}
		update(int64(done))
	}
	doingBeforeFirstPhase("signing the corpus")
	c, err := corpus.Load(ctx, p, corpus.Options{CacheDir: f.CacheDir, Progress: onBatch})
	stop()
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	addAuthKeys(c) // NIP-42: the corpus keys sign AUTH (auth.go)
	return c, nil
}

// resolveTarget checks a --relay URL, or starts the relay --relay names (a
// catalog name or NAME=COMMAND), or the embedded relay when none is given.
// stop stops what was started (safe to call more than once).
func resolveTarget(ctx context.Context, f targetFlags, outDir string, verbose bool) (runner.Target, func(), error) {
	t, _, stop, err := resolveTargetRef(ctx, f, outDir, verbose)
	return t, stop, err
}

// resolveTargetRef is resolveTarget that also returns what --relay named.
func resolveTargetRef(ctx context.Context, f targetFlags, outDir string, verbose bool) (runner.Target, relayRef, func(), error) {
	ref, err := f.relayRef()
	if err != nil {
		return runner.Target{}, ref, nil, withCode(judge.Usage, err)
	}
	measuring(ref)
	if ref.URL != "" {
		if err := runner.CheckTarget(ref.URL, f.IOperate); err != nil {
			return runner.Target{}, ref, nil, err
		}
		return runner.Target{URL: ref.URL}, ref, func() {}, nil
	}
	target, stop, err := startTarget(ctx, ref.Spec, harness.StartOptions{BaseDir: outDir, CPUs: f.RelayCPUs, Verbose: verbose, Bins: f.Bin, BinDir: f.BinDir})
	return target, ref, stop, err
}

// startTarget starts the relay spec describes (startRelay): the runner's
// target.
func startTarget(ctx context.Context, spec harness.Spec, o harness.StartOptions) (runner.Target, func(), error) {
	inst, stop, err := startRelay(ctx, spec, o)
	if err != nil {
		return runner.Target{}, nil, err
	}
	return runner.Target{URL: inst.URL, Name: spec.Name, Managed: true, Build: spec.Version, LogFile: inst.LogFile, Probe: inst}, stop, nil
}

// startRelay starts a relay and makes sure it is stopped on every path
// out, including a forced exit.
func startRelay(ctx context.Context, spec harness.Spec, o harness.StartOptions) (*harness.Instance, func(), error) {
	name := spec.Name
	if err := os.MkdirAll(o.BaseDir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("results folder: %w", err)
	}
	// A forced exit while the relay is starting still stops it and removes
	// its run directory.
	doingBeforeFirstPhase("starting " + name)
	starting := addExitHook(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		harness.StopAll(sctx)
	})
	inst, err := harness.StartSpec(ctx, spec, o)
	starting()
	if err != nil {
		return nil, nil, err
	}
	remove := addExitHook(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = inst.Stop(sctx)
	})
	stop := func() {
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := inst.Stop(sctx); err != nil {
			fmt.Fprintf(os.Stderr, "relaybench: stopping %s: %v\n", name, err)
		}
		remove()
	}
	return inst, stop, nil
}

// progressFunc is the run's progress reporter for a workload's phases:
// each names what it counts when it starts (progress.Counting), so its
// lines say done of total and of what.
func progressFunc(prog *progress.Reporter) func(label string, total int64) func(int64) {
	return func(label string, total int64) func(int64) {
		update, stop := prog.Phase(label, "", total)
		return func(done int64) {
			update(done)
			if done >= total {
				stop()
			}
		}
	}
}

func newResultsFile(command string, started time.Time) *results.File {
	return &results.File{
		Tool:      sysinfo.Tool(signerName()),
		Machine:   sysinfo.Machine(),
		Command:   command,
		Args:      os.Args[1:],
		StartedAt: started.UTC(),
	}
}

// finishRun judges the run, writes the results file and prints the
// summary, whatever the run's outcome: an interrupted or failed run still
// saves what it measured. The error it returns carries the verdict's exit
// status (see package judge); nil only when every requested operation ran,
// every check passed and the results were saved. The results file is
// written before the summary is printed, so that a failure to save it (a
// full disk) is in the verdict the summary shows: the verdict line and the
// exit status always agree. The thresholds of --threshold/--thresholds are
// evaluated first and stored in the file; --junit writes the checks as
// JUnit XML after the results file. With --json - the summary goes to
// stderr so that stdout is pure JSON.
func finishRun(ctx context.Context, file *results.File, path string, quiet bool, runErr error) error {
	file.FinishedAt = time.Now().UTC()
	interrupted := ctx.Err() != nil
	file.Interrupted = interrupted
	var toolErrs []error
	switch {
	case runErr == nil || interrupted:
	case len(file.Runs) == 0 || unreachable(runErr, &file.Runs[len(file.Runs)-1]):
		// relaybench could not run the benchmark at all: an error, not a
		// relay that prevented work it had started.
		toolErrs = append(toolErrs, runErr)
	default:
		r := &file.Runs[len(file.Runs)-1]
		r.Errors = verify.AppendUnique(r.Errors, runErr.Error())
	}
	return judgeAndSave(file, path, quiet, activeGate, toolErrs...)
}

// judgeAndSave judges file (with gate's thresholds, when there is a gate),
// writes it to path before the summary (so that its verdict says if it
// could not be written), prints the summary, writes gate's JUnit report,
// and returns the exit status the verdict says.
func judgeAndSave(file *results.File, path string, quiet bool, gate *gateFlags, toolErrs ...error) error {
	if gate != nil && len(gate.parsed) > 0 {
		file.Thresholds = threshold.Evaluate(file, gate.parsed)
	}
	v := judge.Judge(file, file.Interrupted, toolErrs...)
	file.Verdict = &v
	werr := writeResults(path, file)
	resultsSaved.Store(true) // tried: an interruption after this is not saved again (saveInterrupted)
	if path == "-" && readerGone(werr) {
		werr = nil // written to standard output as far as its reader wanted (`--json - | head`)
	}
	if werr != nil {
		v = unsaved(file, file.Interrupted, toolErrs, werr)
		file.Verdict = &v
	}
	printed := printSummary(path, quiet, file)
	if werr == nil && path != "-" {
		fmt.Fprintf(os.Stderr, "results: %s\n", path)
	}
	if gate != nil && gate.JUnit != "" {
		if err := writeJUnit(gate.JUnit, report.JUnitCases(file)); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "junit: %s\n", gate.JUnit)
	}
	if v.Status == judge.Passed {
		return nil
	}
	return &exitError{code: v.Status, err: errors.New(judge.Summary(v)), shown: printed && verdictShown(path)}
}

// verdictShown reports whether the summary just printed (it ends with the
// verdict) is on standard error or on the same file or terminal as it:
// a user reading standard error has read the verdict then, and a second
// verdict line there would repeat it.
func verdictShown(path string) bool {
	if path == "-" {
		return true // the summary went to stderr
	}
	so, err1 := os.Stdout.Stat()
	se, err2 := os.Stderr.Stat()
	return err1 == nil && err2 == nil && os.SameFile(so, se)
}

// writeResults writes the results file (a test replaces it to fail).
var writeResults = results.Write

// unsaved is the verdict of a run whose results file could not be
// written: the failure is an error of relaybench (exit 1) unless the run's
// own verdict is more severe, and is named among the reasons either way.
func unsaved(file *results.File, interrupted bool, toolErrs []error, werr error) results.Verdict {
	werr = fmt.Errorf("results not saved: %w", werr)
	v := judge.Judge(file, interrupted, append(toolErrs, werr)...)
	if !slices.Contains(v.Reasons, werr.Error()) {
		v.Reasons = append(v.Reasons, werr.Error())
	}
	return v
}

// fullSummary makes the commands print the full summary (-v) instead of the
// brief one: the verdict first, each phase's headline figures and what
// happened.
var fullSummary bool

// printSummary prints the summary of file, unless quiet: to stdout, or to
// stderr when the results file itself goes to stdout. A summary that cannot
// be printed (a full disk) is said on stderr, not one whose reader closed
// the output early (`| head`); the results file is already written. It
// reports whether the summary was printed whole.
func printSummary(path string, quiet bool, file *results.File) bool {
	if quiet {
		return false
	}
	out := os.Stdout
	if path == "-" {
		out = os.Stderr
	}
	if err := report.WriteSummary(out, file, report.SummaryOptions{Brief: !fullSummary, SaidSkips: skipsSaidWith(path)}); err != nil {
		if !readerGone(err) {
			fmt.Fprintf(os.Stderr, "relaybench: summary not printed: %v\n", err)
		}
		return false
	}
	return true
}

// readerGone reports whether err is a write to an output its reader
// closed (`| head`): what the reader did not want is not an error, and
// the exit status stays the verdict's.
func readerGone(err error) bool { return errors.Is(err, syscall.EPIPE) }

// writeJUnit writes a JUnit XML report of cases to path.
func writeJUnit(path string, cases []report.JUnitCase) error {
	var buf bytes.Buffer
	if err := report.WriteJUnit(&buf, "relaybench", cases); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	return nil
}

// unreachable reports whether err is a failure to reach the relay before
// any operation of the run was attempted (nothing listening, a refused
// WebSocket upgrade, a dial timeout).
func unreachable(err error, r *results.Run) bool {
	var de *wire.DialError
	if !errors.As(err, &de) {
		return false
	}
	for _, ph := range r.Phases {
		for _, a := range ph.Accounts {
			if a.Total()-a.NotRun > 0 {
				return false
			}
		}
	}
	return true
}

func pinClient(cpus string) error {
	if cpus == "" {
		return nil
	}
	if err := harness.PinSelf(cpus); err != nil {
		return fmt.Errorf("--client-cpus %s: %w", cpus, err)
	}
	return nil
}

// clientCores is how many cores the client may use: GOMAXPROCS, which
// pinning with --client-cpus lowers to the size of the CPU set.
func clientCores(string) int { return runtime.GOMAXPROCS(0) }

// signerName names the signing backend this build uses.
func signerName() string { return secp.Default().Name() }
