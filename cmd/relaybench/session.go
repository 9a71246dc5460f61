package main

import (
	"context"
	"os"
	"time"

	"github.com/relaybench/relaybench/harness"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/workload"
)

// session is one measuring command being run: the results file it
// reserved, the progress display, and the results file's content.
type session struct {
	ctx     context.Context
	started time.Time
	path    string
	quiet   bool
	noProg  bool   // --no-progress
	cpus    string // --client-cpus
	prog    *progress.Reporter
	file    *results.File
	web     *webRun // --web (web.go); nil without
}

// openSession does what every measuring command does first: reserve the
// results file (--json, --out), pin relaybench to --client-cpus and start
// the progress display.
func openSession(g *Globals, command string, of outputFlags, clientCPUs string) (*session, error) {
	s := &session{ctx: g.Ctx, started: time.Now(), quiet: of.Quiet, noProg: of.NoProgress, cpus: clientCPUs}
	var err error
	if s.path, err = of.resultsPath(command, s.started); err != nil {
		return nil, err
	}
	if err := pinClient(clientCPUs); err != nil {
		return nil, err
	}
	s.prog = progress.New(os.Stderr, !of.NoProgress)
	s.file = newResultsFile(command, s.started)
	if s.web, err = startWeb(s.ctx, of.webFlags, command, s.path, s.started, s.prog); err != nil {
		return nil, err
	}
	return s, nil
}

// cores is how many cores the client may use (clientCores), read when
// the run is configured.
func (s *session) cores() int { return clientCores(s.cpus) }

// config completes a runner configuration with what the session knows:
// the client's cores, the progress display, standard error for what a
// workload says outside its results (a skip on a relay without its NIP),
// and the line said before a wait for --start-at or --query-at.
func (s *session) config(cfg runner.Config) runner.Config {
	cfg.ClientCores = s.cores()
	cfg.Progress = heldProgress(cfg, progressFunc(s.prog)) // after a --start-at wait's line (segment.go)
	cfg.Log = s.prog                                       // standard error, above a progress bar drawn then
	cfg.Waiting = s.waitNotice()
	s.web.hook(&cfg) // the live view: each relay as it starts, each phase as it ends (web.go)
	return cfg
}

// waitNotice says a wait for --start-at or --query-at before it begins
// (segment.go).
func (s *session) waitNotice() func(flag string, at time.Time) func() {
	return waitNotice(s.quiet, s.noProg, s.prog)
}

// finish judges the runs, writes the results file and prints the summary
// (finishRun).
func (s *session) finish(runErr error) error {
	s.web.annotate(s.file) // --relay-metrics (web.go)
	err := finishRun(s.ctx, s.file, s.path, s.quiet, runErr)
	s.web.end(s.ctx, s.file)
	return err
}

// corpusCommand is a corpus-driven command (run, clients, count, search,
// sync): the corpus published to one relay, then what cfg asks for.
type corpusCommand struct {
	name   string
	target targetFlags
	corpus corpusFlags
	output outputFlags
	cfg    runner.Config  // without ClientCores and Progress (the session's)
	params map[string]any // the flags that shaped the run
}

// runCorpusCommand runs c: sign or load the corpus, reach (or start) the
// relay, run the phases of c.cfg, then judge, print the summary and write
// the results file.
func runCorpusCommand(g *Globals, c corpusCommand) error {
	s, err := openSession(g, c.name, c.output, c.target.ClientCPUs)
	if err != nil {
		return err
	}
	if url, err := precheckTarget(g.Ctx, c.target); err != nil {
		if url == "" || g.Ctx.Err() != nil {
			return err // interrupted while reaching it: saveInterrupted says so
		}
		// Unreachable: the same error of the run as when the publish phase
		// finds it so (exit 1), without signing a corpus first.
		s.file.Runs = append(s.file.Runs, c.unreachedRun(url))
		return s.finish(err)
	}
	crp, err := loadCorpus(g.Ctx, c.corpus, s.prog)
	if err != nil {
		return err
	}
	target, ref, stop, err := resolveTargetRef(g.Ctx, c.target, c.output.Out, g.Verbose)
	if err != nil {
		return err
	}
	defer stop()
	s.web.setTarget(target)
	r, runErr := runner.Run(g.Ctx, crp, s.config(c.cfg), target)
	r.Notes = append(r.Notes, ref.notes()...)
	r.Params = c.params
	if c.target.Relay == "" {
		r.Params["store"] = c.target.Store // the embedded relay's store; meaningless with --relay
	}
	s.file.Runs = append(s.file.Runs, r)
	return s.finish(runErr)
}

// unreachedRun is the run of a relay at url found unreachable before the
// corpus was made: the corpus asked for (not signed), no phase.
func (c corpusCommand) unreachedRun(url string) results.Run {
	r := results.Run{Relay: results.Relay{URL: url}, Params: c.params}
	if c.corpus.Corpus == "" {
		p := c.corpus.params()
		r.Corpus = results.Corpus{Seed: p.Seed, Events: p.Events, Authors: p.Authors, AvgSize: p.AvgSize, Anchor: p.Anchor}
	}
	return r
}

// precheckTarget finds out, before the corpus is signed or loaded, what
// would end the run at once: a --relay URL nothing answers (a dial, then
// close: workload.Reach; the error comes with the URL) or a relay to start
// whose binary is not here (its *harness.SkipError, as starting it would
// give). A relay that goes away after the check is the run's to find, as
// before.
func precheckTarget(ctx context.Context, f targetFlags) (url string, err error) {
	ref, err := f.relayRef()
	if err != nil {
		return "", withCode(judge.Usage, err)
	}
	measuring(ref)
	if ref.URL == "" {
		_, _, err := harness.Binary(ref.Spec, f.options())
		if harness.IsSkip(err) {
			return "", err
		}
		return "", nil // anything else: starting it says
	}
	if err := runner.CheckTarget(ref.URL, f.IOperate); err != nil {
		return "", err
	}
	doingBeforeFirstPhase("reaching " + ref.URL)
	return ref.URL, workload.Reach(ctx, ref.URL)
}

// publishThen is the configuration of a command that publishes the corpus
// (unless --skip-publish) and then runs w, with no query phase.
func publishThen(w runner.Workload, pf publishFlags) runner.Config {
	return runner.Config{
		Workloads:   []runner.Workload{w},
		Publish:     pf.options(),
		SkipPublish: pf.SkipPublish,
		SkipQuery:   true,
	}
}
