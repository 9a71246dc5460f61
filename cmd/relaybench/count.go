package main

import (
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/workload"
)

type countCmd struct {
	targetFlags
	corpusFlags
	publishFlags
	outputFlags
	workload.CountOptions
}

func init() {
	registerWorkload("count", &countCmd{})
}

func (c *countCmd) checkFlags() error {
	var r ranges
	r.publishRun(c.targetFlags, c.corpusFlags, c.publishFlags)
	r.queries(c.Queries, c.Limit, c.Events, c.Size)
	r.add(c.outputFlags.validate())
	return r.err
}

func (c *countCmd) Run(g *Globals) error {
	p := publishParams(c.corpusFlags, c.publishFlags)
	p["queries"], p["query_limit"], p["no_req"], p["force"] = c.Queries, c.Limit, c.NoReq, c.Force
	return runCorpusCommand(g, corpusCommand{name: "count", target: c.targetFlags, corpus: c.corpusFlags,
		output: c.outputFlags, cfg: publishThen(c.workload(), c.publishFlags), params: p})
}

// workload is the count workload with this command's options. A relay
// that does not announce NIP-45 is skipped with one line (unless --force).
func (c *countCmd) workload() runner.Workload {
	o := c.CountOptions
	o.Timeout, o.Seed = c.publishFlags.Timeout, c.corpusFlags.Seed
	return declared("count", &o)
}
