package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/relaybench/relaybench/runner"
)

// workloadFlags selects more workloads for run and compare, run after the
// publish and query phases on each relay.
type workloadFlags struct {
	Workloads []string `name:"workloads" sep:"," placeholder:"LIST" help:"More workloads to run on each relay after publish and query, with their subcommand's default options: subscribe, mixed, burst, lifecycle, sweep, load (constant 50 ops/s for 60 s), clients (the queries clients send, 20 of each shape), count (NIP-45 COUNT, 100), search (NIP-50, 100), negentropy (NIP-77 sync, 5 rounds of 3 scenarios; each skipped on a relay that does not announce its NIP)."`
}

// extraWorkloads maps a workload name to its subcommand, whose defaults and
// workload() method make the runner.Workload.
var extraWorkloads = map[string]func() interface{ workload() runner.Workload }{
	"subscribe": func() interface{ workload() runner.Workload } { return &subscribeCmd{} },
	"mixed":     func() interface{ workload() runner.Workload } { return &mixedCmd{} },
	"burst":     func() interface{ workload() runner.Workload } { return &burstCmd{} },
	"lifecycle": func() interface{ workload() runner.Workload } { return &lifecycleCmd{} },
	"sweep":     func() interface{ workload() runner.Workload } { return &sweepCmd{} },
	"load":      func() interface{ workload() runner.Workload } { return &loadCmd{} },
	"count":     func() interface{ workload() runner.Workload } { return &countCmd{} },
	"search":    func() interface{ workload() runner.Workload } { return &searchCmd{} },
	"clients":   func() interface{ workload() runner.Workload } { return &clientsCmd{} },

	"negentropy": func() interface{ workload() runner.Workload } { return &syncCmd{} },
}

// build returns the selected workloads, each configured with its
// subcommand's defaults.
func (f workloadFlags) build() ([]runner.Workload, error) {
	var out []runner.Workload
	for _, name := range f.Workloads {
		name = strings.TrimSpace(name)
		if name == "" || name == "publish" || name == "query" {
			continue // always run unless skipped with -skip-publish / -skip-query
		}
		mk, ok := extraWorkloads[name]
		if !ok {
			known := make([]string, 0, len(extraWorkloads))
			for k := range extraWorkloads {
				known = append(known, k)
			}
			sort.Strings(known)
			return nil, fmt.Errorf("--workloads: unknown workload %q (known: %s)", name, strings.Join(known, ", "))
		}
		cmd := mk()
		if err := kong.ApplyDefaults(cmd); err != nil {
			return nil, fmt.Errorf("--workloads %s: %w", name, err)
		}
		out = append(out, cmd.workload())
	}
	return out, nil
}
