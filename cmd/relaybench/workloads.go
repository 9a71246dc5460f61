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
	Workloads []string `name:"workloads" sep:"," placeholder:"LIST" help:"More workloads to run on each relay after publish and query, with their subcommand's default options: subscribe, mixed, burst, lifecycle, sweep, load (constant 50 ops/s for 60 s), clients (the queries clients send, 20 of each shape), count (NIP-45 COUNT, 100), search (NIP-50, 100), negentropy (NIP-77 sync, 5 rounds of 3 scenarios; each skipped on a relay that does not announce its NIP). Those that check answers against the corpus (clients, count, search, then negentropy) run before those that publish events of their own; otherwise in the order given."`
}

// build returns the selected workloads, each with its declaration's
// defaults (those of its subcommand's flags: declared once, in workload/).
func (f workloadFlags) build() ([]runner.Workload, error) {
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
	var out []runner.Workload
	for _, d := range workload.RunOrder(ds) {
		out = append(out, d.Workload(d.New()))
	}
	return out, nil
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
