package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/internal/rlimit"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/workload"
)

// liveKeyFlags are the corpus flags of the live workloads, which publish
// fresh events signed with the corpus keys (--events and --size there are
// the fresh events', not the corpus's).
type liveKeyFlags struct {
	Seed     int64  `default:"1" help:"Seed of the corpus keys and of the fresh events' content."`
	Authors  int    `default:"200" help:"Number of corpus keys available to sign fresh events."`
	CacheDir string `name:"cache-dir" placeholder:"DIR" help:"Corpus cache directory (default ~/.cache/relaybench/corpus; 'off' disables)."`
}

// keys loads a corpus of one event per author: only its keys are used.
func (f liveKeyFlags) keys(ctx context.Context) (*corpus.Corpus, error) {
	p := corpus.Params{Seed: f.Seed, Events: f.Authors, Authors: f.Authors, AvgSize: 64, Spread: corpus.DefaultSpread}.WithDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	c, err := corpus.Load(ctx, p, corpus.Options{CacheDir: f.CacheDir})
	if err != nil {
		return nil, fmt.Errorf("corpus keys: %w", err)
	}
	addAuthKeys(c) // NIP-42: these keys sign AUTH (auth.go)
	return c, nil
}

// liveSession is one live-workload command being run: its target relay,
// results file and the run the phases go into.
type liveSession struct {
	ctx     context.Context
	path    string
	file    *results.File
	run     *results.Run
	target  runner.Target
	info    *nip11.Info
	prog    *progress.Reporter
	cores   int
	stop    func()
	started time.Time
}

// startLive does what every live command does before measuring: results
// path, CPU pinning, the target (the embedded relay unless --relay), and
// the relay's NIP-11 document.
func startLive(g *Globals, command string, tf targetFlags, of outputFlags) (*liveSession, error) {
	s := &liveSession{ctx: g.Ctx, started: time.Now()}
	var err error
	if s.path, err = of.resultsPath(command, s.started); err != nil {
		return nil, err
	}
	if err := pinClient(tf.ClientCPUs); err != nil {
		return nil, err
	}
	s.cores = clientCores(tf.ClientCPUs)
	s.prog = progress.New(os.Stderr, !of.NoProgress)
	target, stop, err := resolveTarget(g.Ctx, tf, of.Out, g.Verbose)
	if err != nil {
		return nil, err
	}
	s.target, s.stop = target, stop
	s.file = newResultsFile(command, s.started)
	s.file.Runs = append(s.file.Runs, results.Run{Relay: results.Relay{Name: target.Name, URL: target.URL, Managed: target.Managed, LogFile: target.LogFile}})
	s.run = &s.file.Runs[0]
	ictx, cancel := context.WithTimeout(g.Ctx, 5*time.Second)
	info, raw, err := nip11.Fetch(ictx, target.URL)
	cancel()
	if err != nil {
		s.run.Notes = append(s.run.Notes, "no NIP-11 document: "+err.Error())
	} else {
		s.info = info
		s.run.Relay.NIP11 = raw
		s.run.Relay.Software = info.Software
		s.run.Relay.Version = info.Version
		s.run.Relay.MaxLimit = info.Limitation.MaxLimit
	}
	return s, nil
}

// setCorpus records the corpus in the run.
func (s *liveSession) setCorpus(c *corpus.Corpus) {
	s.run.Corpus = results.Corpus{
		Seed: c.Params.Seed, Events: c.Len(), Authors: len(c.Authors), AvgSize: c.Params.AvgSize,
		Bytes: c.Bytes, Key: c.Key, Cached: c.Cached, SignSecs: c.SignDuration.Seconds(),
	}
}

// measure runs one workload with the relay's resource use sampled (when
// relaybench started the relay) and adds its phase to the run.
// runLiveCommand is the Run of a live workload subcommand: reach (or start)
// the relay, load the signing keys, run w with the relay sampled, then print
// the summary and write the results file.
func runLiveCommand(g *Globals, command string, tf targetFlags, kf liveKeyFlags, of outputFlags, w runner.Workload, params map[string]any) error {
	s, err := startLive(g, command, tf, of)
	if err != nil {
		return err
	}
	keys, err := kf.keys(g.Ctx)
	if err != nil {
		s.stop()
		return err
	}
	s.setCorpus(keys)
	err = s.measure(w, keys, nil)
	s.setFresh(keys)
	return s.finish(of.Quiet, params, err)
}

// setFresh makes the run's corpus describe what the live workload actually
// published: the fresh events sent (count, content size, wire bytes, signing
// keys), not the key corpus, which only provided the signing keys (a run
// note says so).
func (s *liveSession) setFresh(keys *corpus.Corpus) {
	var sent, bytes, sizeSum int64
	var sizes []string
	authors := 0
	for _, ph := range s.run.Phases {
		n := ph.Counts[results.CountSent]
		sent += n
		bytes += ph.Counts[results.CountBytesSent]
		if ph.Size > 0 {
			sizeSum += int64(ph.Size) * n
			sizes = append(sizes, strconv.Itoa(ph.Size))
		}
		if a, ok := ph.Params["authors"].(int); ok {
			authors = max(authors, a)
		}
	}
	if authors == 0 {
		authors = min(50, len(keys.Authors)) // workload.NewFresh's default
	}
	avg := 0
	if sent > 0 {
		avg = int(sizeSum / sent)
	}
	s.run.Corpus = results.Corpus{Seed: keys.Params.Seed, Events: int(sent), Authors: authors, AvgSize: avg, Bytes: bytes}
	what := "no fresh events were published"
	if len(sizes) > 0 {
		what = fmt.Sprintf("the %d fresh events published (content %s bytes, signed for this run by %d keys before the clock)", sent, strings.Join(sizes, ", "), authors)
	}
	s.run.Notes = append(s.run.Notes, fmt.Sprintf("corpus: %s; the key corpus (%d keys, seed %d) only provided the signing keys", what, len(keys.Authors), keys.Params.Seed))
}

// measure runs w against the session's relay, with the relay's resources
// sampled around it, and keeps the phases it measured.
func (s *liveSession) measure(w runner.Workload, c *corpus.Corpus, live []*nostr.Event) error {
	env := runner.Env{URL: s.target.URL, Corpus: c, Info: s.info, Live: live, Progress: progressFunc(s.prog)}
	phases, err := runner.RunWorkload(s.ctx, w, env, s.target.Probe, s.cores)
	for _, ph := range phases {
		if ph.Counts != nil {
			s.run.Phases = append(s.run.Phases, ph)
		}
	}
	if s.ctx.Err() != nil {
		// Stopped by the user: no waiting to see whether the relay died.
		return err
	}
	if derr := runner.RelayDied(s.target)(s.run); derr != nil {
		// a relay relaybench started died: that, not its lost connections, is the cause
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

func (s *liveSession) finish(quiet bool, params map[string]any, err error) error {
	s.run.Params = params
	defer s.stop()
	return finishRun(s.ctx, s.file, s.path, quiet, err)
}

// judgeLive says which side limited a live phase, from CPU: the client's
// own saturation is judged by the workload; with the relay's CPU known
// (relaybench started it), a saturated machine or a saturated relay is
// named too.
type subscribeCmd struct {
	targetFlags
	liveKeyFlags
	outputFlags
	subSegmentFlags
	Subscribers int           `name:"sub-count" aliases:"subscribers" default:"10" help:"Subscriber connections, one live REQ each (reference: -sub-count)."`
	Publishers  int           `default:"2" help:"Publisher connections."`
	Channels    int           `default:"10" help:"Distinct channel tags (t) the events are spread over."`
	Overlap     int           `default:"2" help:"Channels (or authors) each subscriber follows: above 1, one event reaches several subscribers."`
	Filter      string        `default:"mix" enum:"tag,author,kind,mix" help:"Subscription filters: tag (#t channels), author, kind (every event reaches every subscriber), or mix (one of each in turn)."`
	Events      int           `default:"0" help:"Fresh events to publish (default: rate×duration, else 10000)."`
	Size        int           `default:"1024" help:"Content bytes of each fresh event."`
	Rate        float64       `default:"0" help:"Total publish rate in events/s, open loop; 0: closed loop (--mode)."`
	Mode        string        `default:"wait" enum:"wait,pipeline" help:"Closed loop: wait (one EVENT in flight per publisher) or pipeline (--window)."`
	Window      int           `default:"0" help:"Unacknowledged EVENTs allowed per publisher (pipeline: 64; open loop: 1024)."`
	Duration    time.Duration `name:"sub-duration" aliases:"duration" default:"0s" help:"Stop publishing after this (0: when all events are sent) (reference: -sub-duration)."`
	Grace       time.Duration `default:"2s" help:"Wait this long after the last OK for late deliveries before counting the missing ones."`
	Timeout     time.Duration `default:"10s" help:"How long an EVENT may wait for its OK, and a REQ for its EOSE."`
	SourceAddrs string        `name:"source-addrs" placeholder:"ADDRS" help:"Local addresses to spread the connections over, e.g. 127.0.0.2-127.0.0.9 or 127.0.0.2,127.0.0.3 (default: one address; 127.0.0.1…127.0.0.K on their own past ~20,000 connections to a loopback relay)."`
}

func init() {
	register("subscribe", "Fan-out: subscribers hold live REQs while publishers send fresh events; every delivery timed and checked.", &subscribeCmd{})
}

func (c *subscribeCmd) Run(g *Globals) error {
	if err := c.subscribeSegment(); err != nil {
		return segmentUsage(err)
	}
	if c.SourceAddrs != "" {
		if _, err := workload.ParseSourceAddrs(c.SourceAddrs); err != nil {
			return withCode(judge.Usage, fmt.Errorf("--source-addrs: %w", err))
		}
	}
	// Raise the open-file limit before the relay starts (it inherits it).
	if err := rlimit.Need(c.Subscribers + c.Publishers); err != nil {
		return withCode(judge.Usage, err)
	}
	return c.runSubscribe(g, map[string]any{
		"subscribers": c.Subscribers, "publishers": c.Publishers, "channels": c.Channels, "overlap": c.Overlap,
		"filter": c.Filter, "events": c.events(), "size": c.Size, "rate": c.Rate, "mode": c.Mode, "window": c.Window,
		"duration": c.Duration.String(), "grace": c.Grace.String(), "store": c.Store,
	})
}

// events is the number of fresh events to publish: --events, else
// rate×duration, else 10000 (as workload.Subscribe defaults it).
func (c *subscribeCmd) events() int {
	switch {
	case c.Events > 0:
		return c.Events
	case c.Rate > 0 && c.Duration > 0:
		return max(1, int(c.Rate*c.Duration.Seconds()))
	}
	return 10000
}

// freshEvents is events() computed without overflow, for the cost check
// of an absurd --rate × --sub-duration.
func (c *subscribeCmd) freshEvents() float64 {
	if c.Events == 0 && c.Rate > 0 && c.Duration > 0 {
		return max(1, c.Rate*c.Duration.Seconds())
	}
	return float64(c.events())
}

// workload is the fan-out workload with this command's options.
func (c *subscribeCmd) workload() runner.Workload {
	return runner.Workload{Name: "subscribe", Run: func(ctx context.Context, env runner.Env) ([]results.Phase, error) {
		o := workload.SubscribeOptions{
			Subscribers: c.Subscribers, Publishers: c.Publishers, Channels: c.Channels, Overlap: c.Overlap,
			Filter: c.Filter, Events: c.Events, Size: c.Size, Rate: c.Rate, Mode: c.Mode, Window: c.Window,
			Duration: c.Duration, Grace: c.Grace, Timeout: c.Timeout, Seed: c.Seed, Begin: c.segRun.Sampler(env.Sample),
			Segment: c.seg, StartAt: c.startAt,
		}
		if c.SourceAddrs != "" {
			o.SourceAddrs, _ = workload.ParseSourceAddrs(c.SourceAddrs) // checked in Run
		}
		total := int64(c.seg.Share(c.events())) // a segment publishes its share
		o.Progress = env.Progress(fmt.Sprintf("Publishing %d events to %d subscribers", total, c.Subscribers), total)
		stopProfile := startCPUProfile("subscribe")
		defer stopProfile()
		stop := startCPUProfile("subscribe")
		ph, err := workload.Subscribe(ctx, env.URL, env.Corpus, o)
		stop()
		c.segRun.Settle(&ph)
		return onePhase(ph, err)
	}}
}
