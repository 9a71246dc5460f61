package main

import (
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/threshold"
	"github.com/relaybench/relaybench/workload"
)

// clientsCmd publishes the corpus, then sends the queries clients send
// (workload.ClientShapes, or another --query-mix), verified like the query
// phase. As a --workloads entry it queries what the publish phase left.
type clientsCmd struct {
	targetFlags
	corpusFlags
	publishFlags
	workload.ClientsOptions
	outputFlags
}

func init() {
	registerWorkload("clients", &clientsCmd{})
}

func (c *clientsCmd) checkFlags() error {
	return checkWorkload(&c.ClientsOptions, workload.CheckInput{Events: c.Events, Size: c.Size}, c.outputFlags,
		checkPublishRun(c.targetFlags, c.corpusFlags, c.publishFlags))
}

// figurePlan is what clients writes (publish, then clients), for checking
// --threshold figures before any work.
func (c *clientsCmd) figurePlan() threshold.Plan { return publishThenPlan("clients") }

func (c *clientsCmd) Run(g *Globals) error {
	// The clients phase is the query phase.
	return runCorpusCommand(g, corpusCommand{name: "clients", target: c.targetFlags, corpus: c.corpusFlags,
		output: c.outputFlags, cfg: publishThen(c.workload(), c.publishFlags), params: c.params()})
}

// params records the flags that shaped the run.
func (c *clientsCmd) params() map[string]any {
	p := publishParams(c.corpusFlags, c.publishFlags)
	c.publishFlags.windowParam(p)
	p["queries"], p["query_limit"], p["query_concurrency"], p["query_mix"] = c.Queries, c.QueryLimit, c.QueryConcurrency, c.QueryMix
	return p
}

// workload is the clients workload with this command's options.
func (c *clientsCmd) workload() runner.Workload {
	o := c.ClientsOptions
	o.Timeout, o.Seed = c.publishFlags.Timeout, c.corpusFlags.Seed
	return declared("clients", &o)
}
