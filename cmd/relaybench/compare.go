package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/harness"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/report"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
)

type compareCmd struct {
	Relays     []string `name:"relays" required:"" sep:"none" placeholder:"NAME,…" help:"Relays to compare, comma-separated (repeatable): catalog names (see 'relaybench relays list'), ws:// URLs on this machine, or NAME='COMMAND ARGS …', a relay started from a command template: {port} {host} {addr} {dir} (a fresh data dir, removed at stop) {rundir} {config} are substituted; the command is split like a shell would (quote a comma: 'a,b') and run without one."`
	Repeat     int      `default:"1" help:"Run each relay this many times (fresh data each time); the report shows the median and spread."`
	RelayCPUs  string   `name:"relay-cpus" placeholder:"LIST" help:"Pin each relay to these CPUs (e.g. 1)."`
	ClientCPUs string   `name:"client-cpus" placeholder:"LIST" help:"Pin relaybench itself to these CPUs (e.g. 0)."`
	IOperate   bool     `name:"i-operate-this-relay" help:"Allow ws:// URLs outside 127.0.0.0/8: you state that you operate them."`
	Install    bool     `help:"Build relays that install from package registries (relayer, nostr-rs-relay) first when they are not installed yet."`
	relaySourceFlags
	templateFlags
	authFlags
	benchFlags
	outputFlags
}

func init() {
	register("compare", "Run the same corpus and workload on several relays in turn, each from fresh data, and compare them.", &compareCmd{})
}

func (c *compareCmd) Run(g *Globals) error {
	ctx := g.Ctx
	extra, err := c.workloadFlags.build()
	if err != nil {
		return err
	}
	if c.Repeat < 1 {
		return fmt.Errorf("--repeat %d: want 1 or more", c.Repeat)
	}
	// Check every relay before anything starts: a typo should not cost a
	// run. (checkFlags resolved them once already.)
	refs, err := c.relayRefs()
	if err != nil {
		return withCode(2, err)
	}
	for _, r := range refs {
		if r.URL != "" {
			if err := runner.CheckTarget(r.URL, c.IOperate); err != nil {
				return err
			}
		}
	}
	if c.Install {
		for _, r := range refs {
			spec := r.Spec
			if r.URL != "" || (spec.Kind != harness.KindGoBuild && spec.Kind != harness.KindCargo) {
				continue
			}
			if installed, _, _, _ := harness.Status(spec, c.options()); installed {
				continue
			}
			o := c.options()
			o.Log = os.Stderr
			if _, err := harness.InstallSpec(ctx, spec, o); err != nil {
				return err
			}
		}
	}
	started := time.Now()
	path, err := c.resultsPath("compare", started)
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
	cfg := c.benchFlags.config(extra, c.ClientCPUs, prog)
	params := c.params()
	var given []string
	for _, r := range refs {
		given = append(given, r.Given)
	}
	params["repeat"], params["relays"] = c.Repeat, given
	file := newResultsFile("compare", started)
	var firstErr error
	for i, ref := range refs {
		if ctx.Err() != nil {
			// Interrupted: the relays not reached are named, not dropped.
			for _, rest := range refs[i:] {
				file.Runs = append(file.Runs, results.Run{Relay: results.Relay{Name: rest.name()}, Params: params,
					Skipped: "cancelled: the run was interrupted before this relay's turn"})
			}
			break
		}
		name := ref.name()
		for rep := 1; rep <= c.Repeat && ctx.Err() == nil; rep++ {
			fmt.Fprintf(os.Stderr, "== %s%s\n", name, repeatLabel(rep, c.Repeat))
			r, err := c.runOne(ctx, ref, crp, cfg)
			if harness.IsSkip(err) {
				fmt.Fprintf(os.Stderr, "%v\n", err)
				file.Runs = append(file.Runs, results.Run{Relay: results.Relay{Name: name}, Skipped: err.Error(), Params: params})
				break
			}
			if c.Repeat > 1 {
				r.Repeat = rep
			}
			r.Params = params
			if err != nil && ctx.Err() == nil {
				r.Errors = append(r.Errors, err.Error())
				fmt.Fprintf(os.Stderr, "relaybench: %s: %s\n", name, oneLine(err))
				if firstErr == nil {
					firstErr = fmt.Errorf("%s: %w", name, err)
				}
			}
			file.Runs = append(file.Runs, r)
		}
	}
	if path != "-" {
		// Next to the results file, created exclusively like it: an
		// existing file is never overwritten.
		md := strings.TrimSuffix(path, filepath.Ext(path)) + ".md"
		if f, err := os.OpenFile(md, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
			_ = report.Markdown(f, []*results.File{file}, report.Options{Title: "Relay comparison"})
			f.Close()
			fmt.Fprintf(os.Stderr, "markdown: %s\n", md)
		} else {
			fmt.Fprintf(os.Stderr, "markdown: not written: %v\n", err)
		}
	}
	err = finishRun(ctx, file, path, c.Quiet, nil)
	if err == nil && firstErr != nil {
		return firstErr
	}
	return err
}

// runOne starts the relay (or uses a URL), runs the workload, and stops it.
func (c *compareCmd) runOne(ctx context.Context, ref relayRef, crp *corpus.Corpus, cfg runner.Config) (results.Run, error) {
	if ref.URL != "" {
		return runner.Run(ctx, crp, cfg, runner.Target{URL: ref.URL})
	}
	name := ref.Spec.Name
	inst, stop, err := startRelay(ctx, ref.Spec, harness.StartOptions{BaseDir: c.Out, CPUs: c.RelayCPUs, Bins: c.Bin, BinDir: c.BinDir})
	if err != nil {
		return results.Run{Relay: results.Relay{Name: name}, Notes: ref.notes()}, err
	}
	defer stop()
	r, err := runner.Run(ctx, crp, cfg, runner.Target{URL: inst.URL, Name: name, Managed: true, LogFile: inst.LogFile, Probe: inst})
	r.Notes = append(r.Notes, ref.notes()...)
	return r, err
}

func repeatLabel(rep, n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf(" (run %d of %d)", rep, n)
}
