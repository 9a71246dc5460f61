package main

import (
	"errors"

	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/threshold"
	"github.com/relaybench/relaybench/workload"
)

// syncCmd is NIP-77 negentropy sync: publish the corpus, then reconcile
// local sets with the relay's in three scenarios.
type syncCmd struct {
	targetFlags
	corpusFlags
	publishFlags
	outputFlags
	workload.NegentropyOptions `embed:"" prefix:"neg-"`
}

func init() {
	registerWorkloadAs("sync", "negentropy", &syncCmd{})
}

func (c *syncCmd) checkFlags() error {
	return checkWorkload(&c.NegentropyOptions, workload.CheckInput{Prefix: "neg-"}, c.outputFlags,
		checkPublishRun(c.targetFlags, c.corpusFlags, c.publishFlags))
}

// figurePlan is what sync writes (publish, then negentropy/SCENARIO), for
// checking --threshold figures before any work.
func (c *syncCmd) figurePlan() threshold.Plan { return publishThenPlan("negentropy") }

func (c *syncCmd) Run(g *Globals) error {
	if err := c.refuseHeldEvents(g); err != nil {
		return err
	}
	p := optionParams(&c.NegentropyOptions, "neg_")
	switch c.FrameSize { // the flag's special values in words, not "frame size 0"
	case 0:
		p["neg_frame_size"] = "auto"
	case -1:
		p["neg_frame_size"] = "unlimited"
	}
	p["events"], p["size"], p["seed"], p["authors"] = c.Events, c.Size, c.Seed, c.Authors
	return runCorpusCommand(g, corpusCommand{name: "sync", target: c.targetFlags, corpus: c.corpusFlags,
		output: c.outputFlags, cfg: publishThen(c.workload(), c.publishFlags), params: p})
}

// workload is the negentropy workload with this command's options. It
// reconciles against what the publish phase left on the relay (env.Live).
func (c *syncCmd) workload() runner.Workload {
	o := c.NegentropyOptions
	o.Seed = c.corpusFlags.Seed
	return declared("negentropy", &o)
}

// refuseHeldEvents refuses, before the corpus is signed and anything is
// published, a --relay URL that already holds events: the reconciliations
// would report them as ids this run never published, and convergence could
// not be verified (exit 3 for a correct relay). Refused rather than taken
// as the relay's prior set: knowing that set would mean fetching all of it
// (unbounded on a real relay), and a prior set of unknown size would change
// every figure (ids needed, bytes, round trips), so runs would not compare.
// A relay relaybench starts has a fresh data dir; with --skip-publish
// nothing is reconciled (the scenarios are not run).
func (c *syncCmd) refuseHeldEvents(g *Globals) error {
	ref, err := c.targetFlags.relayRef()
	if err != nil || ref.URL == "" || c.SkipPublish {
		return nil // a bad flag or a relay to start: the run says or needs nothing
	}
	why := workload.NegentropyPrior(g.Ctx, ref.URL, c.NegentropyOptions.Timeout)
	if why == "" {
		return nil
	}
	return withCode(judge.Error, errors.New(why+"; start a fresh one (relaybench relay serve serves one from a new data dir on a free port and prints its address: listening ws://HOST:PORT) or omit --relay for the embedded relay"))
}
