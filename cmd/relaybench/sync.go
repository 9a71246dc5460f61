package main

import (
	"github.com/relaybench/relaybench/flagcheck"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/workload"
)

// syncCmd is NIP-77 negentropy sync: publish the corpus, then reconcile
// local sets with the relay's in three scenarios.
type syncCmd struct {
	targetFlags
	corpusFlags
	publishFlags
	outputFlags
	workload.NegentropyOptions `embed:"" prefix:"neg-"`
}

// checkNeg checks the negentropy options (--neg-…).
func checkNeg(f workload.NegentropyOptions) error {
	var r ranges
	r.Min("neg-rounds", f.Rounds, 1)
	if !(f.Overlap > 0 && f.Overlap <= 1) {
		r.Bad("neg-overlap", f.Overlap, "must be above 0 and at most 1")
	}
	if !(f.LocalOnly >= 0 && f.LocalOnly <= 1) {
		r.Bad("neg-local-only", f.LocalOnly, "must be between 0 and 1")
	}
	r.Min("neg-delta", f.Delta, 1)
	r.Positive("neg-timeout", f.Timeout)
	if f.FrameSize != -1 && f.FrameSize != 0 && f.FrameSize < 4096 {
		r.Bad("neg-frame-size", f.FrameSize, "must be 0 (from NIP-11), -1 (unlimited) or at least 4096")
	}
	r.Memory("neg-rounds", f.Rounds, 3*float64(f.Rounds), flagcheck.RecordBytes, "reconciliation (3 scenarios a round)")
	r.Memory("neg-delta", f.Delta, float64(f.Delta), flagcheck.FreshEventBytes(256), "fresh event")
	return r.Err()
}

// negParams are the negentropy options as the results file names them.
func negParams(f workload.NegentropyOptions) map[string]any {
	return map[string]any{"neg_rounds": f.Rounds, "neg_overlap": f.Overlap, "neg_local_only": f.LocalOnly,
		"neg_delta": f.Delta, "neg_timeout": f.Timeout.String(), "neg_frame_size": f.FrameSize}
}

func init() {
	registerWorkloadAs("sync", "negentropy", &syncCmd{})
}

func (c *syncCmd) checkFlags() error {
	var r ranges
	r.Add(checkPublishRun(c.targetFlags, c.corpusFlags, c.publishFlags))
	r.Add(checkNeg(c.NegentropyOptions))
	r.Add(c.outputFlags.validate())
	return r.Err()
}

func (c *syncCmd) Run(g *Globals) error {
	p := negParams(c.NegentropyOptions)
	p["events"], p["size"], p["seed"], p["authors"] = c.Events, c.Size, c.Seed, c.Authors
	return runCorpusCommand(g, corpusCommand{name: "sync", target: c.targetFlags, corpus: c.corpusFlags,
		output: c.outputFlags, cfg: publishThen(c.workload(), c.publishFlags), params: p})
}

// workload is the negentropy workload with this command's options. It
// reconciles against what the publish phase left on the relay (env.Live).
func (c *syncCmd) workload() runner.Workload {
	o := c.NegentropyOptions
	o.Seed = c.corpusFlags.Seed
	return declared("negentropy", &o)
}
