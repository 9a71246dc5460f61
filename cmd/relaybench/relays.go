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
	Bin map[string]string `name:"bin" placeholder:"NAME=PATH" help:"Binary for a relay you built (strfry, orly, wisp)."`
}

func (c *relaysListCmd) Run(g *Globals) error {
	specs, err := harness.Catalog()
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tKIND\tVERSION\tINSTALLED\tNOTES")
	for _, s := range specs {
		ok, bin, version, why := harness.Status(s, harness.Options{Bins: c.Bin})
		inst := "yes " + bin
		if !ok {
			inst = "no: " + why
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", s.Name, s.Kind, version, inst, s.Notes)
	}
	return w.Flush()
}

type relaysInstallCmd struct {
	Names []string `arg:"" name:"name" help:"Relays to build (see 'relaybench relays list')."`
}

func (c *relaysInstallCmd) Run(g *Globals) error {
	for _, n := range c.Names {
		if _, err := harness.Lookup(n); err != nil {
			return err
		}
	}
	var failed []string
	for _, n := range c.Names {
		start := time.Now()
		bin, err := harness.Install(g.Ctx, n, harness.Options{Log: os.Stderr})
		if g.Ctx.Err() != nil {
			return context.Canceled
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "relaybench: %s\n", oneLine(err))
			failed = append(failed, n)
			continue
		}
		fmt.Printf("%s: installed: %s (%.0fs)\n", n, bin, time.Since(start).Seconds())
	}
	if len(failed) > 0 {
		return fmt.Errorf("install failed: %s", strings.Join(failed, ", "))
	}
	return nil
}

type relaysStartCmd struct {
	Name string            `arg:"" help:"Relay to start (see 'relaybench relays list')."`
	Port int               `default:"0" help:"Port on 127.0.0.1 (0: a free one)."`
	CPUs string            `name:"cpus" placeholder:"LIST" help:"Pin the relay to these CPUs (e.g. 1)."`
	Bin  map[string]string `name:"bin" placeholder:"NAME=PATH" help:"Binary for a relay you built (strfry, orly, wisp)."`
	Out  string            `default:"relaybench-results" placeholder:"DIR" help:"Folder for the relay's log."`
}

func (c *relaysStartCmd) Run(g *Globals) error {
	if _, err := harness.Lookup(c.Name); err != nil {
		return err
	}
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return fmt.Errorf("log folder: %w", err)
	}
	remove := addExitHook(harness.KillAll)
	defer remove()
	inst, err := harness.Start(g.Ctx, c.Name, harness.StartOptions{BaseDir: c.Out, Port: c.Port, CPUs: c.CPUs, Bins: c.Bin, Verbose: g.Verbose})
	if err != nil {
		if g.Ctx.Err() != nil {
			return context.Canceled
		}
		return err
	}
	fmt.Printf("%s: %s (pid %d)\nlog: %s\ndata: %s\nCtrl-C stops it.\n", inst.Name, inst.URL, inst.PID, inst.LogFile, inst.DataDir)
	var runErr error
	select {
	case <-g.Ctx.Done():
	case <-inst.Exited():
		runErr = inst.ExitErr()
		if runErr == nil {
			runErr = errors.New(c.Name + " exited")
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := inst.Stop(sctx); err != nil && runErr == nil {
		runErr = err
	}
	if runErr == nil {
		fmt.Printf("%s: stopped\n", c.Name)
	}
	return runErr
}
