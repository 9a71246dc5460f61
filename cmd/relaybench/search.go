package main

import (
	"slices"

	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/workload"
)

type searchCmd struct {
	targetFlags
	corpusFlags
	publishFlags
	outputFlags
	workload.SearchOptions
}

func init() {
	registerWorkload("search", &searchCmd{})
}

func (c *searchCmd) checkFlags() error {
	var r ranges
	r.publishRun(c.targetFlags, c.corpusFlags, c.publishFlags)
	r.queries(c.Queries, c.Limit, c.Events, c.Size)
	if slices.Contains(c.Terms, "") {
		r.bad("terms", `""`, "a term must not be empty")
	}
	r.add(c.outputFlags.validate())
	return r.err
}

func (c *searchCmd) Run(g *Globals) error {
	p := publishParams(c.corpusFlags, c.publishFlags)
	p["queries"], p["query_limit"], p["terms"], p["force"] = c.Queries, c.Limit, c.Terms, c.Force
	return runCorpusCommand(g, corpusCommand{name: "search", target: c.targetFlags, corpus: c.corpusFlags,
		output: c.outputFlags, cfg: publishThen(c.workload(), c.publishFlags), params: p})
}

// workload is the search workload with this command's options. A relay
// that does not announce NIP-50 is skipped with one line (unless --force).
func (c *searchCmd) workload() runner.Workload {
	o := c.SearchOptions
	o.Timeout, o.Seed = c.publishFlags.Timeout, c.corpusFlags.Seed
	return declared("search", &o)
}
