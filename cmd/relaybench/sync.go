package main

import (
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
	p := optionParams(&c.NegentropyOptions, "neg_")
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
