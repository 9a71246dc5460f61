package main

import (
	"fmt"
	"strings"

	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/workload"
)

// workloadFlags selects more workloads for run and compare, run after the
// publish and query phases on each relay, in workload.RunOrder.
type workloadFlags struct {
	Workloads []string `name:"workloads" sep:"," placeholder:"LIST" help:"${workloads}"`
}

// workloadsHelp is --workloads' help, from the declared workloads: each
// one's name and Brief, which are skipped on a relay that does not
// announce their NIP, and which run first (workload.RunOrder).
func workloadsHelp() string {
	var names, nips, judges []string
	for _, d := range workload.Registered() {
		n := d.Name
		if d.Brief != "" {
			n += " (" + d.Brief + ")"
		}
		names = append(names, n)
		if d.NIP != 0 || d.Unsupported != nil {
			nips = append(nips, d.Name)
		}
	}
	for _, d := range workload.RunOrder(workload.Registered()) {
		if d.JudgesSet {
			judges = append(judges, d.Name)
		}
	}
	h := "More workloads to run on each relay after publish and query, with their subcommand's default options: " +
		strings.Join(names, ", ") + "."
	if len(nips) > 0 {
		h += " Each skipped on a relay that does not announce its NIP: " + strings.Join(nips, ", ") + "."
	}
	if len(judges) > 0 {
		h += " Those that check answers against the corpus (" + strings.Join(judges, ", ") +
			") run before those that publish events of their own; otherwise in the order given."
	}
	return h
}

// build returns the selected workloads, each with its declaration's
// defaults (those of its subcommand's flags: declared once, in workload/),
// but subscribe publishes events fresh events, the command's --events
// (withEvents).
func (f workloadFlags) build(events int) ([]runner.Workload, error) {
	cfgs, err := f.configs(events)
	var out []runner.Workload
	for _, c := range cfgs {
		out = append(out, c.decl.Workload(c.cfg))
	}
	return out, err
}

// workloadConfig is one selected workload and its options.
type workloadConfig struct {
	decl workload.Decl
	cfg  workload.Config
}

// configs are the selected workloads' options, in workload.RunOrder.
func (f workloadFlags) configs(events int) ([]workloadConfig, error) {
	var ds []workload.Decl
	for _, name := range f.Workloads {
		name = strings.TrimSpace(name)
		if name == "" || name == "publish" || name == "query" {
			continue // always run unless skipped with -skip-publish / -skip-query
		}
		d, ok := workload.Lookup(name)
		if !ok {
			var known []string
			for _, d := range workload.Registered() {
				known = append(known, d.Name)
			}
			return nil, fmt.Errorf("--workloads: unknown workload %q (known: %s)", name, strings.Join(known, ", "))
		}
		ds = append(ds, d)
	}
	var out []workloadConfig
	for _, d := range workload.RunOrder(ds) {
		out = append(out, workloadConfig{d, withEvents(d.New(), events)})
	}
	return out, nil
}

// withEvents is cfg with subscribe's fresh events set to the run's
// --events: "run --events 2000 --workloads subscribe" publishes 2,000, as
// the corpus has (10,000 by default, as subscribe's own default), where it
// published subscribe's 10,000 whatever --events said. Sweep keeps its
// events per size and load its rate × duration (--workloads help).
func withEvents(cfg workload.Config, events int) workload.Config {
	if o, ok := cfg.(*workload.SubscribeOptions); ok && events > 0 {
		o.Events = events
	}
	return cfg
}

// check runs the selected workloads' own checks (workload.Checked) on
// the options build gives them: subscribe's memory for --events fresh
// events.
func (f workloadFlags) check(r *ranges, in workload.CheckInput) {
	cfgs, err := f.configs(in.Events)
	r.Add(err)
	for _, c := range cfgs {
		workload.Check(c.cfg, r, in)
	}
}

// declared is the registered workload called name with options cfg.
func declared(name string, cfg workload.Config) runner.Workload {
	return mustDecl(name).Workload(cfg)
}

// registerWorkload adds the subcommand of the registered workload called
// name, with the workload's summary as its help.
func registerWorkload(name string, cmd any) {
	registerWorkloadAs(name, name, cmd)
}

// registerWorkloadAs adds the subcommand command, a hand-written command
// of the registered workload called name.
func registerWorkloadAs(command, name string, cmd any) {
	commanded[name] = true
	register(command, mustDecl(name).Summary, cmd)
}

// mustDecl is the declaration of the registered workload called name.
func mustDecl(name string) workload.Decl {
	d, ok := workload.Lookup(name)
	if !ok {
		panic("relaybench: workload " + name + " is not registered")
	}
	return d
}
