package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/wire"
	"github.com/relaybench/relaybench/workload"
)

type countCmd struct {
	targetFlags
	corpusFlags
	publishFlags
	outputFlags
	Queries    int  `name:"queries" default:"100" help:"COUNT requests (NIP-45), rotating through the query shapes, each filter without a limit."`
	QueryLimit int  `name:"query-limit" default:"100" help:"Limit of the REQ sent after each COUNT with the same filter, to compare COUNT and REQ→EOSE latency."`
	NoReq      bool `name:"no-req" help:"Send no comparison REQs: COUNTs only."`
	Force      bool `name:"force" help:"Run even when the relay does not announce NIP-45 in its NIP-11 supported_nips (default: skip with one line)."`
}

func init() {
	register("count", "NIP-45 COUNT: publish the corpus, then COUNT each query shape; latency vs REQ, and every count checked against what the relay accepted.", &countCmd{})
}

func (c *countCmd) checkFlags() error {
	var r ranges
	r.add(c.targetFlags.validate())
	r.add(c.corpusFlags.validate())
	r.add(c.publishFlags.validate())
	c.publishFlags.checkWindow(&r, c.corpusFlags)
	r.min("queries", c.Queries, 1)
	r.queryLimit("query-limit", c.QueryLimit)
	r.queryMemory("query-limit", c.QueryLimit, 1, c.QueryLimit, c.Events, c.Size)
	r.queryMemory("queries", c.Queries, c.Queries, c.QueryLimit, c.Events, c.Size)
	r.add(c.outputFlags.validate())
	return r.err
}

func (c *countCmd) Run(g *Globals) error {
	return runNIPCommand(g, "count", c.targetFlags, c.corpusFlags, c.publishFlags, c.outputFlags, c.workload(), map[string]any{
		"queries": c.Queries, "query_limit": c.QueryLimit, "no_req": c.NoReq, "force": c.Force,
	})
}

// workload is the COUNT workload with this command's options. A relay that
// does not announce NIP-45 is skipped with one line (unless --force).
func (c *countCmd) workload() runner.Workload {
	return runner.Workload{Name: "count", Unsupported: func(info *nip11.Info) string {
		return notAnnounced(info, 45, "COUNT", c.Force)
	}, Run: func(ctx context.Context, env runner.Env) ([]results.Phase, error) {
		if why := notAnnounced(env.Info, 45, "COUNT", c.Force); why != "" {
			return skipNIP(ctx, "count", env.URL, why)
		}
		o := workload.CountOptions{
			Queries: c.Queries, Limit: c.QueryLimit, NoReq: c.NoReq, Timeout: c.Timeout, Seed: c.Seed,
			RelayCap: relayCap(env.Info), Begin: env.Sample,
			Progress: env.Progress(fmt.Sprintf("Counting (NIP-45) on %s", env.URL), int64(c.Queries)),
		}
		return onePhase(workload.Count(ctx, env.URL, env.Model, nipSource(env), o))
	}}
}

// notAnnounced says why a workload for NIP n does not run on a relay whose
// NIP-11 document is info: "" when it announces n (or force).
func notAnnounced(info *nip11.Info, n int, what string, force bool) string {
	switch {
	case force:
		return ""
	case info == nil:
		return fmt.Sprintf("the relay serves no NIP-11 document, so it does not announce NIP-%d (%s); --force runs it anyway", n, what)
	case !info.SupportsNIP(n):
		return fmt.Sprintf("the relay does not announce NIP-%d (%s) in its NIP-11 supported_nips; --force runs it anyway", n, what)
	}
	return ""
}

// skipNIP is the one phase of a skipped NIP workload, said in one line
// (judged incomplete: the requested work did not run). A relay that cannot
// be reached is an error, as when run's publish phase cannot dial it, not
// a relay that does not announce the NIP.
func skipNIP(ctx context.Context, name, url, why string) ([]results.Phase, error) {
	if err := reach(ctx, url); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "%s: skipped on %s: %s\n", name, url, why)
	return []results.Phase{workload.Skipped(name, why)}, nil
}

// reach opens and closes one WebSocket connection to url: the
// *wire.DialError of a relay that cannot be reached, nil otherwise.
func reach(ctx context.Context, url string) error {
	c, err := wire.Dial(ctx, url, wire.Options{})
	if err != nil {
		return err
	}
	c.Close()
	return nil
}

// nipSource is what the NIP workloads draw their filters from: what the
// relay holds after the publish phase, else the corpus.
func nipSource(env runner.Env) []*nostr.Event {
	if env.Live != nil {
		return env.Live
	}
	return env.Corpus.Events
}

func relayCap(info *nip11.Info) int {
	if info == nil {
		return 0
	}
	return info.Limitation.MaxLimit
}

// runNIPCommand is the Run of the count and search subcommands: sign or load
// the corpus, reach (or start) the relay, publish the corpus (unless
// --skip-publish), run w, then print the summary and write the results file.
func runNIPCommand(g *Globals, command string, tf targetFlags, cf corpusFlags, pf publishFlags, of outputFlags, w runner.Workload, params map[string]any) error {
	ctx := g.Ctx
	started := time.Now()
	path, err := of.resultsPath(command, started)
	if err != nil {
		return err
	}
	if err := pinClient(tf.ClientCPUs); err != nil {
		return err
	}
	prog := progress.New(os.Stderr, !of.NoProgress)
	crp, err := loadCorpus(ctx, cf, prog)
	if err != nil {
		return err
	}
	target, ref, stop, err := resolveTargetRef(ctx, tf, of.Out, g.Verbose)
	if err != nil {
		return err
	}
	defer stop()
	cfg := runner.Config{
		Workloads:   []runner.Workload{w},
		Publish:     pf.options(),
		SkipPublish: pf.SkipPublish,
		SkipQuery:   true,
		ClientCores: clientCores(tf.ClientCPUs),
		Progress:    progressFunc(prog),
	}
	file := newResultsFile(command, started)
	r, runErr := runner.Run(ctx, crp, cfg, target)
	r.Notes = append(r.Notes, ref.notes()...)
	p := map[string]any{"events": cf.Events, "size": cf.Size, "seed": cf.Seed, "authors": cf.Authors}
	if cf.Corpus != "" {
		p = map[string]any{"corpus": cf.Corpus, "seed": cf.Seed, "authors": cf.Authors}
	}
	if pf.SkipPublish {
		p["skip_publish"] = true
	} else {
		p["concurrency"], p["mode"] = pf.Concurrency, pf.Mode
	}
	if tf.Relay == "" {
		p["store"] = tf.Store
	}
	for k, v := range params {
		p[k] = v
	}
	r.Params = p
	file.Runs = append(file.Runs, r)
	return finishRun(ctx, file, path, of.Quiet, runErr)
}
