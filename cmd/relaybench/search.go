package main

import (
	"context"
	"fmt"

	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/workload"
)

type searchCmd struct {
	targetFlags
	corpusFlags
	publishFlags
	outputFlags
	Queries    int      `name:"queries" default:"100" help:"Searches (NIP-50), rotating through: a term alone, a term by one author, a term within two hours (kind 1)."`
	QueryLimit int      `name:"query-limit" default:"20" help:"Limit of each search filter."`
	Terms      []string `name:"terms" sep:"," placeholder:"LIST" help:"Words to search for (default: words drawn from the corpus's kind-1 content, so that every search has results)."`
	Force      bool     `name:"force" help:"Run even when the relay does not announce NIP-50 in its NIP-11 supported_nips (default: skip with one line)."`
}

func init() {
	register("search", "NIP-50 search: publish the corpus, then search for words of its content; latency, results per search, recall, every result checked.", &searchCmd{})
}

func (c *searchCmd) checkFlags() error {
	var r ranges
	r.add(c.targetFlags.validate())
	r.add(c.corpusFlags.validate())
	r.add(c.publishFlags.validate())
	c.publishFlags.checkWindow(&r, c.corpusFlags)
	r.min("queries", c.Queries, 1)
	r.queryLimit("query-limit", c.QueryLimit)
	for _, t := range c.Terms {
		if t == "" {
			r.bad("terms", `""`, "a term must not be empty")
		}
	}
	r.queryMemory("query-limit", c.QueryLimit, 1, c.QueryLimit, c.Events, c.Size)
	r.queryMemory("queries", c.Queries, c.Queries, c.QueryLimit, c.Events, c.Size)
	r.add(c.outputFlags.validate())
	return r.err
}

func (c *searchCmd) Run(g *Globals) error {
	return runNIPCommand(g, "search", c.targetFlags, c.corpusFlags, c.publishFlags, c.outputFlags, c.workload(), map[string]any{
		"queries": c.Queries, "query_limit": c.QueryLimit, "terms": c.Terms, "force": c.Force,
	})
}

// workload is the search workload with this command's options. A relay that
// does not announce NIP-50 is skipped with one line (unless --force).
func (c *searchCmd) workload() runner.Workload {
	return runner.Workload{Name: "search", Unsupported: func(info *nip11.Info) string {
		return notAnnounced(info, 50, "search", c.Force)
	}, Run: func(ctx context.Context, env runner.Env) ([]results.Phase, error) {
		if why := notAnnounced(env.Info, 50, "search", c.Force); why != "" {
			return skipNIP(ctx, "search", env.URL, why)
		}
		o := workload.SearchOptions{
			Queries: c.Queries, Limit: c.QueryLimit, Timeout: c.Timeout, Seed: c.Seed, Terms: c.Terms,
			RelayCap: relayCap(env.Info), Begin: env.Sample,
			Progress: env.Progress(fmt.Sprintf("Searching (NIP-50) on %s", env.URL), int64(c.Queries)),
		}
		return onePhase(workload.Search(ctx, env.URL, env.Model, nipSource(env), o))
	}}
}
