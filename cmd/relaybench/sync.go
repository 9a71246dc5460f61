package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/workload"
)

// syncCmd is NIP-77 negentropy sync: publish the corpus, then reconcile
// local sets with the relay's in three scenarios.
type syncCmd struct {
	targetFlags
	corpusFlags
	publishFlags
	outputFlags
	negFlags
}

// negFlags are the negentropy workload's options (also its defaults for
// run/compare --workloads negentropy).
type negFlags struct {
	Rounds     int           `name:"neg-rounds" default:"5" help:"Reconciliations per scenario (initial, delta, steady), each from a fresh session: the percentiles are over these."`
	Overlap    float64       `name:"neg-overlap" default:"0.8" help:"Initial scenario: share of the relay's events the local set holds (0 < x ≤ 1)."`
	LocalOnly  float64       `name:"neg-local-only" default:"0.1" help:"Initial scenario: ids only the client has, as a share of the relay's events (0 ≤ x ≤ 1)."`
	Delta      int           `name:"neg-delta" default:"100" help:"Fresh events published between the initial and the delta scenario."`
	NegTimeout time.Duration `name:"neg-timeout" default:"30s" help:"How long to wait for each of the relay's NEG-MSG answers."`
	FrameSize  int           `name:"neg-frame-size" default:"0" placeholder:"BYTES" help:"Client frame size limit of the negentropy protocol in bytes (hex doubles it on the wire); 0: half the relay's NIP-11 max_message_length less 1 KiB (65536 when not announced); -1: unlimited."`
}

func (f negFlags) validate() error {
	var r ranges
	r.min("neg-rounds", f.Rounds, 1)
	if !(f.Overlap > 0 && f.Overlap <= 1) {
		r.bad("neg-overlap", f.Overlap, "must be above 0 and at most 1")
	}
	if !(f.LocalOnly >= 0 && f.LocalOnly <= 1) {
		r.bad("neg-local-only", f.LocalOnly, "must be between 0 and 1")
	}
	r.min("neg-delta", f.Delta, 1)
	r.positive("neg-timeout", f.NegTimeout)
	if f.FrameSize != -1 && f.FrameSize != 0 && f.FrameSize < 4096 {
		r.bad("neg-frame-size", f.FrameSize, "must be 0 (from NIP-11), -1 (unlimited) or at least 4096")
	}
	r.memory("neg-rounds", f.Rounds, 3*float64(f.Rounds), recordBytes, "reconciliation (3 scenarios a round)")
	r.memory("neg-delta", f.Delta, float64(f.Delta), freshEventBytes(256), "fresh event")
	return r.err
}

func (f negFlags) params() map[string]any {
	return map[string]any{"neg_rounds": f.Rounds, "neg_overlap": f.Overlap, "neg_local_only": f.LocalOnly,
		"neg_delta": f.Delta, "neg_timeout": f.NegTimeout.String(), "neg_frame_size": f.FrameSize}
}

func init() {
	register("sync", "NIP-77 negentropy sync: publish the corpus, then reconcile local sets with the relay (initial overlap, delta, steady state): time, round trips, bytes, verified convergence.", &syncCmd{})
}

func (c *syncCmd) checkFlags() error {
	var r ranges
	r.add(c.targetFlags.validate())
	r.add(c.corpusFlags.validate())
	r.add(c.publishFlags.validate())
	c.publishFlags.checkWindow(&r, c.corpusFlags)
	r.add(c.negFlags.validate())
	r.add(c.outputFlags.validate())
	return r.err
}

func (c *syncCmd) Run(g *Globals) error {
	ctx := g.Ctx
	started := time.Now()
	path, err := c.resultsPath("sync", started)
	if err != nil {
		return err
	}
	if err := pinClient(c.ClientCPUs); err != nil {
		return err
	}
	prog := progress.New(os.Stderr, !c.NoProgress)
	crp, err := loadCorpus(ctx, c.corpusFlags, prog)
	if err != nil {
		return err
	}
	target, ref, stop, err := resolveTargetRef(ctx, c.targetFlags, c.Out, g.Verbose)
	if err != nil {
		return err
	}
	defer stop()
	cfg := runner.Config{
		Workloads:   []runner.Workload{c.workload()},
		Publish:     c.publishFlags.options(),
		SkipPublish: c.SkipPublish,
		SkipQuery:   true,
		ClientCores: clientCores(c.ClientCPUs),
		Progress:    progressFunc(prog),
	}
	file := newResultsFile("sync", started)
	r, runErr := runner.Run(ctx, crp, cfg, target)
	r.Notes = append(r.Notes, ref.notes()...)
	r.Params = c.negFlags.params()
	r.Params["events"], r.Params["size"], r.Params["seed"], r.Params["authors"] = c.Events, c.Size, c.Seed, c.Authors
	if c.Relay == "" {
		r.Params["store"] = c.Store
	}
	file.Runs = append(file.Runs, r)
	return finishRun(ctx, file, path, c.Quiet, runErr)
}

// workload is the negentropy workload with this command's options. It
// reconciles against what the publish phase left on the relay (env.Live).
func (c *syncCmd) workload() runner.Workload {
	return runner.Workload{Name: "negentropy", Unsupported: workload.NegentropySkip, Run: func(ctx context.Context, env runner.Env) ([]results.Phase, error) {
		o := workload.NegentropyOptions{
			Rounds: c.Rounds, Overlap: c.Overlap, LocalOnly: c.LocalOnly, Delta: c.Delta,
			Timeout: c.NegTimeout, FrameSize: c.FrameSize, Seed: c.Seed, Begin: env.Sample,
		}
		if env.Corpus != nil {
			o.Seed = env.Corpus.Params.Seed // the run's seed, also under run/compare --workloads
		}
		if env.Model != nil {
			o.Unknown = env.Model.Unknown // published without a decisive answer: may be there
		}
		if workload.NegentropySkip(env.Info) == "" {
			o.Progress = env.Progress(fmt.Sprintf("Reconciling (NIP-77) with %s", env.URL), int64(3*c.Rounds))
		} else if err := reach(ctx, env.URL); err != nil {
			return nil, err // unreachable: an error, not a relay without NIP-77
		}
		return workload.Negentropy(ctx, env.URL, env.Corpus, env.Live, env.Info, o)
	}}
}
