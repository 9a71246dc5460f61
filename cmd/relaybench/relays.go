package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/relaybench/relaybench/harness"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/judge"
)

type relaysCmd struct {
	List    relaysListCmd    `cmd:"" help:"List the relays relaybench can run, and whether each is installed."`
	Install relaysInstallCmd `cmd:"" help:"Build relays from package registries into the cache (pinned versions)."`
	Start   relaysStartCmd   `cmd:"" help:"Start one relay by hand and keep it running until Ctrl-C."`
}

func init() {
	register("relays", "List, install and start the real relays that compare runs.", &relaysCmd{})
}

type relaysListCmd struct {
	relaySourceFlags
}

func (c *relaysListCmd) checkFlags() error { return c.relaySourceFlags.validate() }

func (c *relaysListCmd) Run(g *Globals) error {
	specs, err := c.catalog()
	if err != nil {
		return err
	}
	// A table that fits a terminal (what is installed, from where), then
	// each relay's notes and how to install it, wrapped: in one table
	// their lines were hundreds of columns wide.
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tKIND\tVERSION\tINSTALLED")
	var notes []string
	for _, s := range specs {
		ok, _, version, why := harness.Status(s, c.options())
		if rest, named := strings.CutPrefix(why, s.Name+" "); named {
			why = "it " + rest // "strfry: not installed: it needs a binary you supply, …"
		}
		inst, how := "no", why
		if !strings.HasPrefix(why, "not installed") {
			how = "not installed: " + why
		}
		if ok {
			// Where the binary comes from: relaybench itself, --bin,
			// the bin dir, an env var or the build cache.
			bin, from, _ := harness.Binary(s, c.options())
			inst, how = "yes "+bin+" ("+from+")", ""
		}
		n := strings.Join(nonEmpty(how, s.Notes), "; ")
		if o := s.Origin(); o != "" {
			n = "[from " + o + "] " + n
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", s.Name, s.Kind, version, inst)
		if n != "" {
			notes = append(notes, wrapText(s.Name+": "+n, 100, "    "))
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(notes) > 0 {
		fmt.Printf("\n%s\n", strings.Join(notes, "\n"))
	}
	fmt.Printf("\n%s\n", wrapText(versionNote, 100, ""))
	return nil
}

// versionNote says where relays list's versions come from, and where a
// run's come from: they can differ.
const versionNote = "VERSION is the catalog's: what relaybench builds or runs (user-supplied: whatever binary you give). " +
	"A run's Software and Version are what the relay says of itself in NIP-11, which can differ or be empty."

// nonEmpty is the strings of ss that are not empty.
func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// wrapText breaks s at spaces into lines of at most width columns (a
// longer word keeps its own line), the lines after the first indented.
func wrapText(s string, width int, indent string) string {
	var b strings.Builder
	line := 0
	for i, word := range strings.Fields(s) {
		n := len([]rune(word))
		switch {
		case i == 0:
		case line+1+n > width:
			b.WriteString("\n" + indent)
			line = len(indent)
		default:
			b.WriteByte(' ')
			line++
		}
		b.WriteString(word)
		line += n
	}
	return b.String()
}

type relaysInstallCmd struct {
	Names []string `arg:"" name:"name" help:"Relays to build (see 'relaybench relays list')."`
	relaySourceFlags
}

func (c *relaysInstallCmd) checkFlags() error { return c.relaySourceFlags.validate() }

func (c *relaysInstallCmd) Run(g *Globals) error {
	cat, err := c.catalog()
	if err != nil {
		return err
	}
	var specs []harness.Spec
	for _, n := range c.Names {
		spec, err := cat.Lookup(n)
		if err != nil {
			return err
		}
		specs = append(specs, spec)
	}
	var failed []string
	for _, spec := range specs {
		n := spec.Name
		if bin, from, err := harness.Binary(spec, c.options()); err == nil && from != harness.FromCache {
			fmt.Println(nothingToBuild(spec, bin, from))
			continue
		}
		start := time.Now()
		o := c.options()
		o.Log = os.Stderr
		bin, err := harness.InstallSpec(g.Ctx, spec, o)
		if g.Ctx.Err() != nil {
			return context.Canceled
		}
		if err != nil {
			err = notInstalled(spec, err)
			if len(specs) == 1 {
				return err // its one line says it all
			}
			fmt.Fprintf(os.Stderr, "relaybench: %s\n", oneLine(err))
			failed = append(failed, n)
			continue
		}
		fmt.Printf("%s: installed: %s (%s)\n", n, bin, numfmt.Dur(time.Since(start)))
	}
	if len(failed) > 0 {
		return fmt.Errorf("install failed: %s", strings.Join(failed, ", "))
	}
	return nil
}

// nothingToBuild is relays install's line for spec, whose binary bin
// (from where from says) is here already and was not built by it: the
// relaybench binary itself, a binary the user supplies (--bin, --bin-dir,
// RELAYBENCH_<NAME>_BIN) or a prebuilt one. "installed" would claim a
// build that did not happen.
func nothingToBuild(spec harness.Spec, bin, from string) string {
	if spec.Kind == harness.KindSelf {
		return fmt.Sprintf("%s: runs in relaybench itself (%s); nothing to build", spec.Name, bin)
	}
	return fmt.Sprintf("%s: prebuilt: %s (from %s); nothing to build", spec.Name, bin, from)
}

// notInstalled is the error of an install of spec that failed with err:
// a relay relaybench does not build (a binary the user supplies) is told
// so, in one sentence with what its catalog entry says of getting it, as
// relays start, run and compare word it, and which commands take the
// binary: relays install has nothing to do with it ("strfry cannot be
// installed: it needs a binary you supply, and no package registry has it:
// build it from its source, …, then pass --bin strfry=PATH, … when you
// start it (relays start, run --relay, compare --relays, …)").
func notInstalled(spec harness.Spec, err error) error {
	var skip *harness.SkipError
	if spec.Kind != harness.KindBinary || !errors.As(err, &skip) {
		return err
	}
	return fmt.Errorf("%s cannot be installed: %s when you start it (relays start, run --relay, compare --relays, …)", skip.Name, skip.Said())
}

// dataLine is relays start's line on the relay's data: its folder, or
// that its store writes none (a folder shown for the memory store or the
// sink said there was something to look at).
func dataLine(spec harness.Spec, dir string) string {
	switch spec.Store {
	case "memory":
		return "data: none (an in-memory store: nothing reaches disk)"
	case "none":
		return "data: none (it stores nothing)"
	}
	return "data: " + dir
}

type relaysStartCmd struct {
	Name string `arg:"" help:"Relay to start: a catalog name (see 'relaybench relays list') or NAME='COMMAND {port} {dir} …' (see compare --relays)."`
	Port int    `default:"0" help:"Port on 127.0.0.1 (0: a free one)."`
	CPUs string `name:"cpus" placeholder:"LIST" help:"Pin the relay to these CPUs (e.g. 1)."`
	Out  string `default:"relaybench-results" placeholder:"DIR" help:"Folder for the relay's log."`
	relaySourceFlags
	templateFlags
}

// checkFlags checks every flag before anything starts (see check.go).
func (c *relaysStartCmd) checkFlags() error {
	var r ranges
	r.Between("port", c.Port, 0, 65535)
	checkCPUs(&r, "cpus", c.CPUs)
	r.Add(checkNotFile("out", c.Out))
	r.Add(c.relaySourceFlags.validate())
	if r.Err() == nil {
		_, err := c.relayRef()
		r.Add(err)
	}
	return r.Err()
}

func (c *relaysStartCmd) Run(g *Globals) error {
	ref, err := c.relayRef()
	if err != nil {
		return withCode(judge.Usage, err)
	}
	name := ref.Spec.Name
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return fmt.Errorf("log folder: %w", err)
	}
	remove := addExitHook(harness.KillAll)
	defer remove()
	inst, err := harness.StartSpec(g.Ctx, ref.Spec, harness.StartOptions{BaseDir: c.Out, Port: c.Port, CPUs: c.CPUs, Bins: c.Bin, BinDir: c.BinDir, Verbose: g.Verbose})
	if err != nil {
		if g.Ctx.Err() != nil {
			return context.Canceled
		}
		return err
	}
	stopping := name + ": stopping"
	signalStops.Store(&stopping) // Ctrl-C is how it stops: exit 0, not "interrupted"
	fmt.Printf("%s: %s (pid %d)\nlog: %s\n%s\nCtrl-C stops it.\n", inst.Name, inst.URL, inst.PID, inst.LogFile, dataLine(ref.Spec, inst.DataDir))
	var runErr error
	select {
	case <-g.Ctx.Done():
	case <-inst.Exited():
		runErr = inst.ExitErr()
		if runErr == nil {
			runErr = errors.New(name + " exited")
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := inst.Stop(sctx); err != nil && runErr == nil {
		runErr = err
	}
	if runErr == nil {
		fmt.Printf("%s: stopped\n", name)
	}
	return runErr
}
