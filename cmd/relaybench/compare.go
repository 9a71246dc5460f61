package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/harness"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/report"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/threshold"
)

type compareCmd struct {
	Relays     []string `name:"relays" required:"" sep:"none" placeholder:"NAME,…" help:"Relays to compare, comma-separated (repeatable): catalog names (see 'relaybench relays list'), ws:// URLs on this machine, or NAME='COMMAND ARGS …', a relay started from a command template: {port} {host} {addr} {dir} (a fresh data dir, removed at stop) {rundir} {config} are substituted; the command is split like a shell would (quote a comma: 'a,b') and run without one."`
	Repeat     int      `default:"1" help:"Run each relay this many times (fresh data each time); the report shows the median and spread."`
	RelayCPUs  string   `name:"relay-cpus" placeholder:"LIST" help:"Pin each relay to these CPUs (e.g. 1)."`
	ClientCPUs string   `name:"client-cpus" placeholder:"LIST" help:"Pin relaybench itself to these CPUs (e.g. 0)."`
	IOperate   bool     `name:"i-operate-this-relay" help:"Allow ws:// URLs outside 127.0.0.0/8: you state that you operate them."`
	Install    bool     `help:"Build relays that install from package registries (relayer, nostr-rs-relay) first when they are not installed yet."`
	// Conformance runs the conformance checks on each relay after its
	// benchmark (see conformance.go).
	Conformance bool `help:"Also run the conformance checks (relaybench conformance) against each relay after its benchmark: the report shows a table of check × relay."`
	conformanceFlags
	relaySourceFlags
	templateFlags
	authFlags
	benchFlags
	outputFlags

	saidSkip map[string]bool // relays saySkips named: their turn does not repeat why
}

func init() {
	register("compare", "Run the same corpus and workload on several relays in turn, each from fresh data, and compare them.", &compareCmd{})
}

// checkFlags checks every flag before anything starts (see check.go).
func (c *compareCmd) checkFlags() error {
	var r ranges
	r.Min("repeat", c.Repeat, 1)
	r.Memory("repeat", c.Repeat, float64(c.Repeat), 64<<10, "run of each relay (its results, kept for the comparison)")
	if r.Err() == nil {
		r.Add(checkTarget(c.authFlags, c.RelayCPUs, c.ClientCPUs, c.relaySourceFlags, func() error {
			_, err := c.relayRefs()
			return err
		}))
	}
	r.Add(c.benchFlags.validate())
	r.Add(c.conformanceFlags.validate())
	r.Add(c.outputFlags.validate())
	return r.Err()
}

// checkFigures: a threshold on a conformance check compare will not run
// is refused before any work (conformanceFlags.checkFigures).
func (c *compareCmd) checkFigures(ts []threshold.Threshold) error {
	return c.conformanceFlags.checkFigures("compare", c.Conformance, ts)
}

func (c *compareCmd) Run(g *Globals) error {
	extra, err := c.workloadFlags.build(c.Events)
	if err != nil {
		return err
	}
	refs, err := c.checkRelays(g.Ctx)
	if err != nil {
		return err
	}
	measuring(refs...)
	s, err := openSession(g, "compare", c.outputFlags, c.ClientCPUs)
	if err != nil {
		return err
	}
	crp, err := loadCorpus(g.Ctx, c.corpusFlags, s.prog)
	if err != nil {
		return err
	}
	cfg := s.config(c.benchFlags.config(extra))
	firstErr := c.runRelays(g.Ctx, s.file, refs, crp, cfg, c.runParams(refs))
	err = tellSkipsOnce(s.finish(nil), s.file)
	if c.JSON == "" {
		writeComparison(s.path, s.file) // judged by finish: its verdict leads it
	}
	if err == nil && firstErr != nil {
		return firstErr
	}
	return err
}

// checkRelays checks every relay before anything starts, so that a typo
// does not cost a run (checkFlags resolved them once already), and builds
// those --install asks for.
func (c *compareCmd) checkRelays(ctx context.Context) ([]relayRef, error) {
	refs, err := c.relayRefs()
	if err != nil {
		return nil, withCode(judge.Usage, err)
	}
	for _, r := range refs {
		if r.URL != "" {
			if err := runner.CheckTarget(r.URL, c.IOperate); err != nil {
				return nil, err
			}
		}
	}
	if c.Install {
		if err := c.install(ctx, refs); err != nil {
			return refs, err
		}
	}
	c.saySkips(refs)
	return refs, nil
}

// saidSkips are the relays whose skip compare told, why and all, in its
// first lines on standard error (saySkips): the summary, when it goes
// there too, names them skipped without telling why again.
var saidSkips map[string]bool

// skipsSaidWith is saidSkips when the summary goes to the output they were
// told on (verdictShown: standard error, or the same file or terminal),
// nil when it goes elsewhere and must tell why itself.
func skipsSaidWith(path string) map[string]bool {
	if !verdictShown(path) {
		return nil
	}
	return saidSkips
}

// tellSkipsOnce words err, the verdict main prints on standard error when
// the summary that ends with it went elsewhere, as that summary words
// file's verdict for standard error: a skip told in the first lines is
// named, not told again.
func tellSkipsOnce(err error, file *results.File) error {
	var ee *exitError
	if !errors.As(err, &ee) || ee.shown || len(saidSkips) == 0 || file.Verdict == nil {
		return err
	}
	v := *file.Verdict
	v.Reasons = report.ReasonsTold(file, saidSkips)
	ee.err = errors.New(judge.Summary(v))
	return err
}

// saySkips names, in the first lines, the relays that will be skipped at
// their turn because their binary is not here (the turn says it skips
// them, without repeating why, and so does the summary: skipsSaidWith),
// and, once, how to build in the stores this relaybench left out.
func (c *compareCmd) saySkips(refs []relayRef) {
	said := map[string]bool{}
	c.saidSkip = map[string]bool{}
	saidSkips = c.saidSkip
	for _, r := range refs {
		if r.URL != "" {
			continue
		}
		var skip *harness.SkipError
		if _, _, err := harness.Binary(r.Spec, c.options()); errors.As(err, &skip) {
			fmt.Fprintf(os.Stderr, "%s will be skipped: %s\n", skip.Name, skip.Said())
			c.saidSkip[r.name()] = true
			if h := storeHint(r.Spec); h != "" && !said[h] {
				said[h] = true
				fmt.Fprintln(os.Stderr, "  "+h)
			}
		}
	}
}

// install builds the relays of refs that install from package registries
// and are not installed yet.
func (c *compareCmd) install(ctx context.Context, refs []relayRef) error {
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
	return nil
}

// runParams records the flags in every run of the comparison.
func (c *compareCmd) runParams(refs []relayRef) map[string]any {
	params := c.params()
	var given []string
	for _, r := range refs {
		given = append(given, r.Given)
	}
	params["repeat"], params["relays"] = c.Repeat, given
	if c.Conformance {
		params["conformance"] = true
		c.conformanceFlags.record(params)
	}
	return params
}

// runRelays runs every relay of refs in turn, --repeat times each, into
// file, and returns the first error of a run. Interrupted, the relays not
// reached are named, not dropped.
func (c *compareCmd) runRelays(ctx context.Context, file *results.File, refs []relayRef, crp *corpus.Corpus, cfg runner.Config, params map[string]any) error {
	var firstErr error
	for i, ref := range refs {
		if ctx.Err() != nil {
			for _, rest := range refs[i:] {
				file.Runs = append(file.Runs, results.Run{Relay: results.Relay{Name: rest.name()}, Params: params,
					Skipped: notReachedTurn})
			}
			break
		}
		if err := c.runRelay(ctx, file, ref, crp, cfg, params); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// runRelay runs one relay --repeat times into file (once when the relay
// is skipped), and returns the first error of a run.
func (c *compareCmd) runRelay(ctx context.Context, file *results.File, ref relayRef, crp *corpus.Corpus, cfg runner.Config, params map[string]any) error {
	var firstErr error
	name := ref.name()
	for rep := 1; rep <= c.Repeat && ctx.Err() == nil; rep++ {
		fmt.Fprintf(os.Stderr, "== %s%s\n", name, repeatLabel(rep, c.Repeat))
		r, err := c.runOne(ctx, ref, crp, cfg)
		if harness.IsSkip(err) {
			var skip *harness.SkipError
			switch {
			case c.saidSkip[name]:
				fmt.Fprintf(os.Stderr, "%s: skipped, as said at the start\n", name)
			case errors.As(err, &skip):
				fmt.Fprintf(os.Stderr, "%s skipped: %s\n", skip.Name, skip.Said())
			default:
				fmt.Fprintf(os.Stderr, "%v\n", err)
			}
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
	return firstErr
}

// writeComparison writes the Markdown comparison next to the results file
// at path, created exclusively like it: an existing file is never
// overwritten. Only beside a results file of compare's own naming (no
// --json): a --json FILE is the one file asked for. Nothing with the
// results on standard output.
func writeComparison(path string, file *results.File) {
	if path == "-" {
		return
	}
	md := strings.TrimSuffix(path, filepath.Ext(path)) + ".md"
	f, err := os.OpenFile(md, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "markdown: not written: %v\n", err)
		return
	}
	_ = report.Markdown(f, []*results.File{file}, report.Options{Title: "Relay comparison"})
	f.Close()
	fmt.Fprintf(os.Stderr, "markdown: %s\n", md)
}

// runOne starts the relay (or uses a URL), runs the workload, and stops it.
func (c *compareCmd) runOne(ctx context.Context, ref relayRef, crp *corpus.Corpus, cfg runner.Config) (results.Run, error) {
	if ref.URL != "" {
		r, err := runner.Run(ctx, crp, cfg, runner.Target{URL: ref.URL})
		return c.checks(ctx, r, ref.URL, err)
	}
	target, stop, err := startTarget(ctx, ref.Spec, harness.StartOptions{BaseDir: c.Out, CPUs: c.RelayCPUs, Bins: c.Bin, BinDir: c.BinDir})
	if err != nil {
		r := results.Run{Relay: results.Relay{Name: ref.Spec.Name}, Notes: ref.notes()}
		if ctx.Err() != nil {
			r.Notes = append(r.Notes, interruptedNote(err))
		}
		return r, err
	}
	defer stop()
	r, err := runner.Run(ctx, crp, cfg, target)
	r.Notes = append(r.Notes, ref.notes()...)
	return c.checks(ctx, r, target.URL, err)
}

// checks runs the conformance checks (--conformance) against the relay at
// url once its benchmark r ended without error, into r.
func (c *compareCmd) checks(ctx context.Context, r results.Run, url string, err error) (results.Run, error) {
	if !c.Conformance || ctx.Err() != nil {
		return r, err
	}
	if err != nil {
		r.Notes = append(r.Notes, "conformance checks not run: the benchmark of this relay ended in error")
		return r, err
	}
	info, note := fetchChecksInfo(ctx, url)
	if note != "" {
		r.Notes = append(r.Notes, note)
	}
	cr := checkRun{url: url, info: info, flags: c.conformanceFlags}
	if !c.NoProgress && !c.Quiet {
		cr.each = progressLine
	}
	r.Conformance, err = cr.run(ctx)
	return r, err
}

func repeatLabel(rep, n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf(" (run %d of %d)", rep, n)
}
