package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/merge"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
)

// mergeCmd merges the results files of the execution segments of one test
// (--segment I/N) into one results file.
type mergeCmd struct {
	Files          []string      `arg:"" name:"results" help:"The segments' results files, one per segment 0…N-1, in any order."`
	Output         string        `name:"o" short:"o" aliases:"output" placeholder:"FILE" help:"Write the merged results file to FILE ('-' for standard output; default: OUT/merge-<time>.json)."`
	Out            string        `default:"relaybench-results" placeholder:"DIR" help:"Folder for the merged results file when -o is not given."`
	Force          bool          `help:"Merge segments whose command, parameters, corpus or --start-at differ, or that each started their own relay."`
	Corpus         string        `name:"corpus" placeholder:"FILE" help:"The event dump the segments published (--corpus FILE of the run): needed to check their answers across segments. A generated corpus is rebuilt from the recorded parameters (from the cache when there)."`
	CacheDir       string        `name:"cache-dir" placeholder:"DIR" help:"Corpus cache directory (default ~/.cache/relaybench/corpus; 'off' disables)."`
	ClockTolerance time.Duration `name:"clock-tolerance" default:"0s" help:"Widen every comparison of wall-clock times between segments by this much, on top of their measured clock-offset error (segments on machines with unsynchronised clocks)."`
	Quiet          bool          `help:"Do not print the merged summary."`
	gateFlags
}

func init() {
	register("merge", "Merge the results files of a test's execution segments (--segment I/N) into one results file: counts add, histograms merge exactly, answers checked across segments.", &mergeCmd{})
}

// commandLine is this merge's command line as typed, recorded in the
// merged file as the merge's ("merge -o merged.json seg0.json seg1.json",
// on its Merged line; its Command line is the segments' test); rebuilt
// from the flags when it was not given (a caller other than main).
func (c *mergeCmd) commandLine(g *Globals) []string {
	if len(g.Args) > 0 {
		return slices.Clone(g.Args)
	}
	args := append([]string{"merge"}, c.Files...)
	if c.Output != "" {
		args = append(args, "-o", c.Output)
	}
	if c.Force {
		args = append(args, "--force")
	}
	if c.Corpus != "" {
		args = append(args, "--corpus", c.Corpus)
	}
	if c.ClockTolerance != 0 {
		args = append(args, "--clock-tolerance", c.ClockTolerance.String())
	}
	return args
}

func (c *mergeCmd) checkFlags() error {
	if len(c.Files) == 0 {
		return fmt.Errorf("no results files given (relaybench merge -o merged.json seg0.json seg1.json …)")
	}
	if c.ClockTolerance < 0 {
		return fmt.Errorf("--clock-tolerance %v: must not be negative", c.ClockTolerance)
	}
	// A results file is never overwritten: say so before the merge, not
	// after a summary that calls the merge passed.
	if c.Output != "" && c.Output != "-" {
		switch st, err := os.Stat(c.Output); {
		case err == nil && st.IsDir():
			return fmt.Errorf("-o %s: a folder, not a file", c.Output)
		case err == nil && notAResultsFile(st):
			return nil // /dev/null, a FIFO: written as it is, nothing overwritten
		case err == nil:
			return fmt.Errorf("-o %s: exists (a results file is never overwritten: give a new name)", c.Output)
		}
		if err := checkWritableDir("o", c.Output, filepath.Dir(c.Output)); err != nil {
			return err
		}
	}
	return nil
}

func (c *mergeCmd) Run(g *Globals) error {
	var in []merge.Input
	var bad []error
	for _, p := range c.Files {
		f, err := results.Read(p)
		if err != nil {
			bad = append(bad, err)
			continue
		}
		in = append(in, merge.Input{Name: filepath.Base(p), File: f})
	}
	if len(bad) == 1 {
		return withCode(judge.Usage, bad[0])
	}
	if len(bad) > 1 {
		// Each unreadable segment is named; none is merged without the others.
		for _, e := range bad {
			fmt.Fprintf(os.Stderr, "relaybench: %s\n", oneLine(e))
		}
		return withCode(judge.Usage, fmt.Errorf("%d of the %d segments' results files could not be read (named above): nothing merged", len(bad), len(c.Files)))
	}
	merged, err := merge.Merge(g.Ctx, in, merge.Options{Force: c.Force, Corpus: c.loadCorpus, ClockTolerance: c.ClockTolerance, Args: c.commandLine(g)})
	var ue *merge.UsageError
	if errors.As(err, &ue) {
		return withCode(judge.Usage, err)
	}
	if err != nil {
		return err
	}
	path := c.Output
	if path == "" {
		if err := os.MkdirAll(c.Out, 0o755); err != nil {
			return fmt.Errorf("results folder: %w", err)
		}
		p, err := results.Reserve(filepath.Join(c.Out, "merge-"+time.Now().UTC().Format("20060102-150405")+".json"), true)
		if err != nil {
			return err
		}
		path = p
		defer results.Release(p)
	}
	return judgeAndSave(merged, path, c.Quiet, &c.gateFlags)
}

// loadCorpus rebuilds the corpus of a segment's run: the dump given with
// --corpus, or the generated corpus of the recorded parameters. A
// generated corpus's anchor is recorded (corpus.anchor); results without it
// are tried with --anchor of their command line and the hours around their
// start, and the corpus key tells which one is right.
func (c *mergeCmd) loadCorpus(ctx context.Context, r *results.Run) ([]*nostr.Event, error) {
	cp, err := c.rebuild(ctx, r)
	if err == nil {
		err = ctx.Err() // stopped by the user: no corpus-sized parsing
	}
	if err == nil {
		err = cp.Materialize() // a big corpus is streamed from its file
	}
	if err != nil {
		return nil, err
	}
	if len(cp.Events) != r.Corpus.Events {
		return nil, fmt.Errorf("the rebuilt corpus holds %d events in memory, the segments published %d", len(cp.Events), r.Corpus.Events)
	}
	return cp.Events, nil
}

// rebuild loads the corpus of a segment's run.
func (c *mergeCmd) rebuild(ctx context.Context, r *results.Run) (*corpus.Corpus, error) {
	rc := r.Corpus
	if rc.Source != "" || rc.Fingerprint != "" {
		if c.Corpus == "" {
			return nil, fmt.Errorf("the segments published the dump %s: give it with --corpus FILE", rc.Source)
		}
		cp, err := corpus.LoadDump(ctx, c.Corpus, corpus.DumpOptions{Options: corpus.Options{CacheDir: c.CacheDir}, KeySeed: rc.Seed, KeyAuthors: rc.Authors})
		if err != nil {
			return nil, err
		}
		if cp.Manifest != nil && rc.Fingerprint != "" && cp.Manifest.Fingerprint != rc.Fingerprint {
			return nil, fmt.Errorf("--corpus %s: fingerprint %s, the segments published %s", c.Corpus, cp.Manifest.Fingerprint, rc.Fingerprint)
		}
		return cp, nil
	}
	var anchors []int64
	if rc.Anchor != 0 {
		anchors = append(anchors, rc.Anchor)
	}
	anchors = append(anchors, argAnchors(r)...)
	p := corpus.Params{Seed: rc.Seed, Events: rc.Events, Authors: rc.Authors, AvgSize: rc.AvgSize, Spread: corpus.DefaultSpread}
	for _, a := range anchors {
		p.Anchor = a
		if q := p.WithDefaults(); rc.Key == "" || q.Key() == rc.Key {
			cp, err := corpus.Load(ctx, q, corpus.Options{CacheDir: c.CacheDir})
			if err != nil {
				return nil, err
			}
			return cp, nil
		}
	}
	return nil, fmt.Errorf("no corpus with key %s from the recorded parameters (seed %d, %d events, %d authors, size %d): the run's anchor is unknown", rc.Key, rc.Seed, rc.Events, rc.Authors, rc.AvgSize)
}

// argAnchors are the anchors a run without a recorded one may have used:
// --anchor of its command line, else the hour its first phase started in
// and the hour before.
func argAnchors(r *results.Run) []int64 {
	var out []int64
	if s, ok := r.Params["anchor"].(string); ok {
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			out = append(out, t.Unix())
		}
	}
	for _, ph := range r.Phases {
		if !ph.Start.IsZero() {
			h := ph.Start.Truncate(time.Hour)
			out = append(out, h.Unix(), h.Add(-time.Hour).Unix())
			break
		}
	}
	return out
}

// mergeForReport is `report --merge`: the files' merge, judged, in place of
// the files.
func mergeForReport(g *Globals, paths []string, fs []*results.File, force bool) ([]*results.File, error) {
	in := make([]merge.Input, len(fs))
	for i, f := range fs {
		in[i] = merge.Input{Name: filepath.Base(paths[i]), File: f}
	}
	m := &mergeCmd{Force: force}
	merged, err := merge.Merge(g.Ctx, in, merge.Options{Force: force, Corpus: m.loadCorpus, Args: slices.Clone(g.Args)}) // "report --merge …", as typed
	var ue *merge.UsageError
	if errors.As(err, &ue) {
		return nil, withCode(judge.Usage, err)
	}
	if err != nil {
		return nil, err
	}
	v := judge.Judge(merged, merged.Interrupted)
	merged.Verdict = &v
	return []*results.File{merged}, nil
}
