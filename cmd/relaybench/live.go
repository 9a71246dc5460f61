package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/workload"
)

// liveSession is one live-workload command being run (subscribe, burst,
// lifecycle, sweep, mixed, load, find-max): its target relay and the run
// the phases go into.
type liveSession struct {
	*session
	run    *results.Run
	target runner.Target
	info   *nip11.Info
	stop   func()
}

// startLive does what every live command does before measuring: the
// session (results path, CPU pinning), the target (the embedded relay
// unless --relay), and the relay's NIP-11 document. A --relay URL nothing
// answers ends the run here (workload.Reach), before any key or corpus is
// made: the same error of the run (exit 1, in the results file) as when
// the workload's first dial finds it so.
func startLive(g *Globals, command string, tf targetFlags, of outputFlags) (*liveSession, error) {
	ss, err := openSession(g, command, of, tf.ClientCPUs)
	if err != nil {
		return nil, err
	}
	target, stop, err := resolveTarget(g.Ctx, tf, of.Out, g.Verbose)
	if err != nil {
		return nil, err
	}
	s := &liveSession{session: ss, target: target, stop: stop}
	s.web.setTarget(target)
	s.file.Runs = append(s.file.Runs, results.Run{Relay: results.Relay{Name: target.Name, URL: target.URL, Managed: target.Managed, Build: target.Build, LogFile: target.LogFile}})
	s.run = &s.file.Runs[0]
	if !target.Managed {
		if err := workload.Reach(g.Ctx, target.URL); err != nil {
			return nil, s.finish(nil, err)
		}
	}
	s.fetchInfo()
	return s, nil
}

// fetchInfo reads the relay's NIP-11 document into the run; a relay without
// one gets a note.
func (s *liveSession) fetchInfo() {
	s.info = runner.FetchInfo(s.ctx, s.target.URL, s.run)
}

// setCorpus records the corpus in the run.
func (s *liveSession) setCorpus(c *corpus.Corpus) {
	s.run.Corpus = results.Corpus{
		Seed: c.Params.Seed, Events: c.Len(), Authors: len(c.Authors), AvgSize: c.Params.AvgSize,
		Bytes: c.Bytes, Key: c.Key, Cached: c.Cached, SignSecs: c.SignDuration.Seconds(),
	}
}

// runLiveCommand is the Run of a live workload subcommand: reach (or start)
// the relay, load the signing keys, run w with the relay sampled, then print
// the summary and write the results file.
func runLiveCommand(g *Globals, command string, tf targetFlags, kf liveKeyFlags, of outputFlags, w runner.Workload, params map[string]any) error {
	s, keys, err := startLiveKeys(g, command, tf, kf, of)
	if err != nil {
		return err
	}
	err = s.measure(w, keys, nil)
	s.setFresh(keys)
	return s.finish(params, err)
}

// startLiveKeys is startLive, then the signing keys loaded (kf) and
// recorded as the run's corpus.
func startLiveKeys(g *Globals, command string, tf targetFlags, kf liveKeyFlags, of outputFlags) (*liveSession, *corpus.Corpus, error) {
	s, err := startLive(g, command, tf, of)
	if err != nil {
		return nil, nil, err
	}
	keys, err := kf.keys(g.Ctx)
	if err != nil {
		s.stop()
		return nil, nil, err
	}
	s.setCorpus(keys)
	return s, keys, nil
}

// signingKeys is how many of keys' authors sign the fresh events of a live
// workload that names none: workload.NewFresh's and workload.Load's 50.
func signingKeys(keys *corpus.Corpus) int { return min(50, len(keys.Authors)) }

// setFresh makes the run's corpus describe what the live workload actually
// published: the fresh events sent (count, content size, wire bytes, signing
// keys), not the key corpus, which only provided the signing keys (a run
// note says so).
func (s *liveSession) setFresh(keys *corpus.Corpus) {
	var sent, bytes, sizeSum int64
	var sizes []int
	authors := 0
	for _, ph := range s.run.Phases {
		n := ph.Counts[results.CountSent]
		sent += n
		bytes += ph.Counts[results.CountBytesSent]
		if ph.Size > 0 {
			sizeSum += int64(ph.Size) * n
			sizes = append(sizes, ph.Size)
		}
		if a, ok := ph.Params["authors"].(int); ok {
			authors = max(authors, a)
		}
	}
	if authors == 0 {
		authors = signingKeys(keys)
	}
	avg := 0
	if sent > 0 {
		avg = int(sizeSum / sent)
	}
	s.run.Corpus = results.Corpus{Seed: keys.Params.Seed, Events: int(sent), Authors: authors, AvgSize: avg, Bytes: bytes}
	what := "no fresh events were published"
	if len(sizes) > 0 {
		what = fmt.Sprintf("the %s fresh events published (content %s, signed for this run by %s keys before the clock)",
			numfmt.Group(sent), contentSizes(sizes), numfmt.Group(int64(authors)))
	}
	s.run.Notes = append(s.run.Notes, fmt.Sprintf("corpus: %s; the key corpus (%s keys, seed %d) only provided the signing keys",
		what, numfmt.Group(int64(len(keys.Authors))), keys.Params.Seed))
}

// contentSizes names the content sizes of the phases, each once, in the
// form the summary's Corpus line gives a size in ("1,024 B"): "64 B",
// "256 B and 1,024 B".
func contentSizes(sizes []int) string {
	var names []string
	for _, n := range sizes {
		if s := numfmt.Group(int64(n)) + " B"; !slices.Contains(names, s) {
			names = append(names, s)
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// measure runs w against the session's relay, with the relay's resources
// sampled around it, and keeps the phases it measured. The live view
// (--web) follows it as run's does (webRun.workload).
func (s *liveSession) measure(w runner.Workload, c *corpus.Corpus, live []*nostr.Event) error {
	env := runner.Env{URL: s.target.URL, Corpus: c, Info: s.info, Live: live, Progress: progressFunc(s.prog), Log: s.prog}
	phases, err := runner.RunWorkload(s.ctx, s.web.workload(w), env, s.target.Probe, s.cores())
	return s.keep(phases, err)
}

// keep adds the phases that measured something to the run and returns the
// phase's error, or that the relay relaybench started died: that, not its
// lost connections, is then the cause.
func (s *liveSession) keep(phases []results.Phase, err error) error {
	for _, ph := range phases {
		if ph.Counts != nil {
			s.run.Phases = append(s.run.Phases, ph)
			s.web.phaseDone(s.target, ph)
		}
	}
	if s.ctx.Err() != nil {
		// Stopped by the user: no waiting to see whether the relay died.
		return err
	}
	if derr := runner.RelayDied(s.target)(s.run); derr != nil {
		return derr
	}
	return err
}

// onePhase adapts a single-phase workload's result.
func onePhase(ph results.Phase, err error) ([]results.Phase, error) {
	if ph.Counts == nil {
		return nil, err
	}
	return []results.Phase{ph}, err
}

// finish records params in the run, stops the relay and finishes the
// session (judge, results file, summary).
func (s *liveSession) finish(params map[string]any, err error) error {
	s.run.Params = params
	defer s.stop()
	return s.session.finish(err)
}
