package main

import (
	"cmp"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/relaybench/relaybench/threshold"
	"github.com/relaybench/relaybench/workload"
)

// A registered workload with no command of its own gets one here: the
// shared flags its input needs and the flags of its options (kong reads
// them through the Opts field), checked by the shared flag groups and then
// by the options themselves (workload.Checked), run through the same
// sessions as the hand-written commands, with the options' flags recorded
// as the run's params. Adding a workload is then one file in workload/
// (docs/adding-a-workload.md).

// commanded holds the workloads a hand-written command runs.
var commanded = map[string]bool{}

// declaredOpts are a declared workload's name and options: its flags.
type declaredOpts struct {
	Opts workload.Config `embed:""`
	name string
}

// figurePlan is what a declared workload's command writes, for checking
// --threshold figures before any work: its phases, named after it, after
// the corpus's publish phase for a corpus workload (workload.RunPlan).
func (d *declaredOpts) figurePlan() threshold.Plan {
	if decl, ok := workload.Lookup(d.name); ok && decl.Input == workload.NeedsCorpus {
		return publishThenPlan(d.name)
	}
	return livePlan(false, d.name)
}

// keysWorkloadCmd is the command of a workload that signs fresh events with
// the corpus keys (workload.NeedsKeys).
type keysWorkloadCmd struct {
	targetFlags
	liveKeyFlags
	outputFlags
	declaredOpts
}

func (c *keysWorkloadCmd) checkFlags() error {
	return checkWorkload(c.Opts, workload.CheckInput{}, c.outputFlags, c.targetFlags.validate(), c.liveKeyFlags.validate())
}

func (c *keysWorkloadCmd) Run(g *Globals) error {
	workload.BaseOf(c.Opts).Seed = c.liveKeyFlags.Seed
	p := optionParams(c.Opts, "")
	p["store"] = c.Store // as every live command records it
	return runLiveCommand(g, c.name, c.targetFlags, c.liveKeyFlags, c.outputFlags, declared(c.name, c.Opts), p)
}

// corpusWorkloadCmd is the command of a workload that runs after the corpus
// is published (workload.NeedsCorpus). Its options' Base is not a flag
// group: the publish phase's --timeout is its timeout too.
type corpusWorkloadCmd struct {
	targetFlags
	corpusFlags
	publishFlags
	outputFlags
	declaredOpts
}

func (c *corpusWorkloadCmd) checkFlags() error {
	return checkWorkload(c.Opts, workload.CheckInput{Events: c.Events, Size: c.Size}, c.outputFlags,
		checkPublishRun(c.targetFlags, c.corpusFlags, c.publishFlags))
}

func (c *corpusWorkloadCmd) Run(g *Globals) error {
	b := workload.BaseOf(c.Opts)
	b.Timeout, b.Seed = c.publishFlags.Timeout, c.corpusFlags.Seed
	p := publishParams(c.corpusFlags, c.publishFlags)
	for k, v := range optionParams(c.Opts, "") {
		p[k] = v
	}
	return runCorpusCommand(g, corpusCommand{name: c.name, target: c.targetFlags, corpus: c.corpusFlags,
		output: c.outputFlags, cfg: publishThen(declared(c.name, c.Opts), c.publishFlags), params: p})
}

var declaredOnce sync.Once

// registerDeclared adds a command for each registered workload that has
// none of its own. run calls it before building the parser.
func registerDeclared() {
	declaredOnce.Do(func() {
		for _, d := range workload.Registered() {
			if commanded[d.Name] {
				continue
			}
			var cmd any = &keysWorkloadCmd{declaredOpts: declaredOpts{d.New(), d.Name}}
			if d.Input == workload.NeedsCorpus {
				cmd = &corpusWorkloadCmd{declaredOpts: declaredOpts{d.New(), d.Name}}
			}
			register(d.Name, d.Summary, cmd)
		}
	})
}

// optionParams are the flags of a workload's options as the results file
// records them: each flag's name in snake case (or its `param:"…"` tag),
// durations as text, each key after prefix. A field (or embedded struct) tagged `param:"-"` is
// not recorded: the params are what a baseline comparison matches on, so a
// workload keeps the keys its results files have always had.
func optionParams(cfg workload.Config, prefix string) map[string]any {
	p := map[string]any{}
	addOptionParams(p, reflect.ValueOf(cfg).Elem(), prefix)
	return p
}

func addOptionParams(p map[string]any, v reflect.Value, prefix string) {
	t := v.Type()
	for i := range t.NumField() {
		f, fv := t.Field(i), v.Field(i)
		if !f.IsExported() || f.Tag.Get("kong") == "-" || f.Tag.Get("param") == "-" {
			continue
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			addOptionParams(p, fv, prefix)
			continue
		}
		name := cmp.Or(f.Tag.Get("param"), f.Tag.Get("name"))
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		name = prefix + strings.ReplaceAll(name, "-", "_")
		if d, ok := fv.Interface().(time.Duration); ok {
			p[name] = d.String()
		} else {
			p[name] = fv.Interface()
		}
	}
}
