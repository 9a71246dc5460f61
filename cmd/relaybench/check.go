package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/relaybench/relaybench/flagcheck"
	"github.com/relaybench/relaybench/harness"
	"github.com/relaybench/relaybench/threshold"
	"github.com/relaybench/relaybench/workload"
)

// Flag validation, the checks kong runs after parsing (AfterApply).
//
// Every numeric, duration and list flag of every command has a range,
// checked right after parsing and before the command's Run: before a corpus
// is signed, a relay started or a file written. A value out of range is
// refused, never replaced by a default, with a one-line usage error naming
// the flag and the value (relaybench: --events -5: must be at least 1), and
// relaybench exits with status 2. Each command says what it checks in its
// checkFlags method, beside its Run in the command's file, made of the
// validate methods of its flag groups (flags.go) and its own ranges; a
// workload's options check their own flags (workload.Checked, in the
// workload's file), for its declared command (declared.go) and for a
// hand-written one alike.

// flagChecker is implemented by every command: checkFlags returns the first
// bad flag value.
type flagChecker interface{ checkFlags() error }

// AfterApply is kong's hook after parsing: it checks the selected command's
// flags. An error here is a parse error: main prints it and exits with 2.
func (g *Globals) AfterApply(kctx *kong.Context) error {
	node := kctx.Selected()
	if node == nil || !node.Target.IsValid() {
		return nil
	}
	target := node.Target
	if target.CanAddr() {
		target = target.Addr()
	}
	activeGate = nil
	deactivateAuth()
	c, ok := target.Interface().(flagChecker)
	if ok {
		if err := c.checkFlags(); err != nil {
			return errors.New(joinLines(err.Error()))
		}
	}
	if g, ok := target.Interface().(interface{ gate() *gateFlags }); ok {
		gf := g.gate()
		if err := gf.validate(); err != nil {
			return errors.New(joinLines(err.Error()))
		}
		if pl, ok := target.Interface().(interface{ figurePlan() threshold.Plan }); ok {
			plan := pl.figurePlan()
			plan.Command = node.Name
			if err := plan.Check(gf.parsed); err != nil {
				return err
			}
		}
		if fc, ok := target.Interface().(interface {
			checkFigures([]threshold.Threshold) error
		}); ok {
			if err := fc.checkFigures(gf.parsed); err != nil {
				return err
			}
		}
		activeGate = gf
	}
	if a, ok := target.Interface().(interface{ nip42() *authFlags }); ok {
		// NIP-42 for every connection the command dials (auth.go).
		if err := a.nip42().activate(); err != nil {
			return errors.New(joinLines(err.Error()))
		}
	}
	return nil
}

// AfterRun is kong's hook after the command's Run, whatever it returned:
// it removes reserved results files the command never wrote.
func (g *Globals) AfterRun() error {
	closeWebs() // web.go
	releaseReserved()
	return nil
}

// joinLines makes a multi-line error (errors.Join) one line.
func joinLines(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

// ranges keeps the first bad flag value found (package flagcheck: the
// workloads' options check their own flags with it too).
type ranges = flagcheck.Ranges

// checkWorkload is the checkFlags of a workload's command: the first error
// of its shared flag groups (groups, in order), else of its options' own
// checks (workload.Checked) with in, else of its output flags.
func checkWorkload(cfg workload.Config, in workload.CheckInput, of outputFlags, groups ...error) error {
	var r ranges
	for _, err := range groups {
		r.Add(err)
	}
	workload.Check(cfg, &r, in)
	r.Add(of.validate())
	return r.Err()
}

// checkCPUs: a CPU list (taskset -c syntax) of CPUs this process may use.
func checkCPUs(r *ranges, flag, list string) {
	if list == "" {
		return
	}
	if _, err := harness.ParseCPUs(list); err != nil {
		r.Add(fmt.Errorf("--%s %s: %v", flag, list, err))
	}
}

// figurePlan is what run and compare write (workload.RunPlan), for
// checking --threshold figures before any work.
func (f *benchFlags) figurePlan() threshold.Plan { return workload.RunPlan(f.Workloads) }

// publishThenPlan is what a command that publishes the corpus and then
// runs the workload called name writes (publishThen): the publish phase
// and name's phases, no query phase.
func publishThenPlan(name string) threshold.Plan {
	p := workload.RunPlan([]string{name})
	delete(p.Phases, "query")
	return p
}

// livePlan is what a live command writes: the phases named (their
// latencies not declared), after the corpus's publish phase when
// published is true.
func livePlan(published bool, phases ...string) threshold.Plan {
	p := threshold.Plan{Phases: map[string][]string{}}
	if published {
		p.Phases["publish"] = workload.RunPlan(nil).Phases["publish"]
	}
	for _, name := range phases {
		p.Phases[name] = nil
	}
	return p
}
