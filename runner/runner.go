// Package runner runs a benchmark against one relay target: the phases in
// order (publish, then query, then the others asked for), with the relay's
// resource use sampled during each, and returns one results.Run. It is the
// library entry point the CLI's run and compare commands call.
package runner

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/workload"
)

// Probe samples the relay's resource use during a phase. The harness's
// managed relays implement it; a plain URL has none.
type Probe interface {
	Begin() (end func() *results.Resources)
}

// Target is the relay under test.
type Target struct {
	URL     string
	Name    string // catalog name, "" for a plain URL
	Managed bool
	LogFile string
	Probe   Probe // nil when the relay is not ours to observe
}

// Config is what to run.
type Config struct {
	Publish     workload.PublishOptions
	SkipPublish bool
	Query       workload.QueryOptions
	SkipQuery   bool
	// Cores the client may use (0: all of GOMAXPROCS); used to judge whether
	// the client limited a figure.
	ClientCores int
	// Log receives progress lines (nil: none).
	Log io.Writer
	// Progress makes a progress reporter for a phase (nil: none).
	Progress func(label string, total int64) func(done int64)
}

// Run benchmarks target with c. It returns the measured run even when a
// phase fails or ctx is cancelled (Ctrl-C): the error says why it stopped.
func Run(ctx context.Context, c *corpus.Corpus, cfg Config, t Target) (results.Run, error) {
	run := results.Run{
		Relay: results.Relay{Name: t.Name, URL: t.URL, Managed: t.Managed, LogFile: t.LogFile},
		Corpus: results.Corpus{
			Seed: c.Params.Seed, Events: len(c.Events), Authors: len(c.Authors), AvgSize: c.Params.AvgSize,
			Bytes: c.Bytes, Key: c.Key, Cached: c.Cached, SignSecs: c.SignDuration.Seconds(),
		},
	}
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	info, raw, err := nip11.Fetch(ictx, t.URL)
	cancel()
	if err != nil {
		run.Notes = append(run.Notes, "no NIP-11 document: "+err.Error())
	} else {
		run.Relay.NIP11 = raw
		run.Relay.Software = info.Software
		run.Relay.Version = info.Version
		run.Relay.MaxLimit = info.Limitation.MaxLimit
	}

	var model *workload.Model
	if !cfg.SkipPublish {
		all := make([]int, len(c.Events))
		for i := range all {
			all[i] = i
		}
		po := cfg.Publish
		if cfg.Progress != nil {
			po.Progress = cfg.Progress(fmt.Sprintf("Publishing %d events to %s", len(all), t.URL), int64(len(all)))
		}
		end := begin(t.Probe)
		pr, err := workload.Publish(ctx, t.URL, c, all, po)
		if pr != nil {
			finish(&pr.Phase, end, cfg.ClientCores)
			run.Phases = append(run.Phases, pr.Phase)
			acc := make([]*nostr.Event, 0, len(all))
			for _, i := range pr.StoredIndexes() {
				acc = append(acc, c.Events[i])
			}
			model = workload.NewModel(acc)
		} else if end != nil {
			end()
		}
		if err != nil {
			return run, fmt.Errorf("publish: %w", err)
		}
	}
	if !cfg.SkipQuery {
		qo := cfg.Query
		if qo.RelayCap == 0 {
			qo.RelayCap = run.Relay.MaxLimit
		}
		if cfg.Progress != nil {
			qo.Progress = cfg.Progress(fmt.Sprintf("Querying events from %s", t.URL), int64(qo.Queries))
		}
		source := c.Events
		if model != nil {
			source = model.Live
		}
		end := begin(t.Probe)
		ph, err := workload.Query(ctx, t.URL, model, source, qo)
		finish(&ph, end, cfg.ClientCores)
		if ph.Name != "" {
			run.Phases = append(run.Phases, ph)
		}
		if err != nil {
			return run, fmt.Errorf("query: %w", err)
		}
	}
	return run, ctx.Err()
}

func begin(p Probe) func() *results.Resources {
	if p == nil {
		return nil
	}
	return p.Begin()
}

// finish merges the relay's resource use into the phase and judges whether
// the client limited the figure.
func finish(ph *results.Phase, end func() *results.Resources, clientCores int) {
	if ph.Resources == nil {
		ph.Resources = &results.Resources{}
	}
	if end != nil {
		if r := end(); r != nil {
			r.ClientCPUSecs = ph.Resources.ClientCPUSecs
			ph.Resources = r
		}
	}
	judgeClient(ph, clientCores)
}

// judgeClient marks a phase client-limited when the client used (nearly) all
// the CPU it may use, or when the machine was saturated and the client used
// at least as much of it as the relay.
func judgeClient(ph *results.Phase, clientCores int) {
	if ph.Duration <= 0 || ph.Resources == nil {
		return
	}
	cores := float64(runtime.GOMAXPROCS(0))
	if clientCores > 0 {
		cores = float64(clientCores)
	}
	secs := float64(ph.Duration) / 1e9
	client := ph.Resources.ClientCPUSecs / secs // cores busy
	relay := ph.Resources.RelayCPUSecs / secs
	ph.Resources.ClientCPUUtil = client / cores
	machine := float64(runtime.NumCPU())
	switch {
	case client >= 0.9*cores:
		ph.ClientLimited = true
		ph.Notes = append(ph.Notes, fmt.Sprintf("client-limited: the client kept %.2f of its %.0f cores busy; the relay may be faster than this figure", client, cores))
	case relay > 0 && client+relay >= 0.9*machine && client >= relay:
		ph.ClientLimited = true
		ph.Notes = append(ph.Notes, fmt.Sprintf("client-limited: the machine's %.0f cores were saturated (client %.2f, relay %.2f cores) and the client used at least as much as the relay; pin them apart (--client-cpus/--relay-cpus) or use a bigger machine", machine, client, relay))
	case relay > 0 && client+relay >= 0.9*machine:
		ph.Notes = append(ph.Notes, fmt.Sprintf("machine saturated: client %.2f + relay %.2f cores of %.0f; the relay had less CPU than it would alone", client, relay, machine))
	}
}
