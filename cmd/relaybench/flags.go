package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/workload"
)

// Flag groups shared by run, compare and the workload subcommands. Names
// follow the reference suite where it has them (-relay, -events, -size,
// -concurrency, -queries, -query-limit, -skip-publish, -skip-query).

type corpusFlags struct {
	Events   int    `default:"10000" help:"Number of events to publish."`
	Size     int    `default:"1024" help:"Average event content size in bytes."`
	Seed     int64  `default:"1" help:"Corpus seed: same seed and parameters, same events."`
	Authors  int    `default:"200" help:"Number of distinct authors (keys) in the corpus."`
	CacheDir string `name:"cache-dir" placeholder:"DIR" help:"Corpus cache directory (default ~/.cache/relaybench/corpus; 'off' disables)."`
	Anchor   string `placeholder:"TIME" help:"End of the corpus's created_at window, RFC 3339 (e.g. 2026-01-01T00:00:00Z); default: the start of the current hour. Fix it to get the same events on another day."`
}

// anchor parses --anchor (0: the default, the current hour).
func (f corpusFlags) anchor() (int64, error) {
	if f.Anchor == "" {
		return 0, nil
	}
	t, err := time.Parse(time.RFC3339, f.Anchor)
	if err != nil {
		return 0, fmt.Errorf("--anchor %q: want RFC 3339 time, e.g. 2026-01-01T00:00:00Z", f.Anchor)
	}
	if t.After(time.Now()) {
		return 0, fmt.Errorf("--anchor %s is in the future: relays reject events from the future", f.Anchor)
	}
	return t.Unix(), nil
}

// validate rejects values that would otherwise be replaced by defaults.
func (f corpusFlags) validate() error {
	switch {
	case f.Events < 1:
		return fmt.Errorf("--events %d: want at least 1", f.Events)
	case f.Size < 1:
		return fmt.Errorf("--size %d: want at least 1 byte", f.Size)
	case f.Authors < 1:
		return fmt.Errorf("--authors %d: want at least 1", f.Authors)
	}
	_, err := f.anchor()
	return err
}

func (f corpusFlags) params() corpus.Params {
	anchor, _ := f.anchor() // checked by validate
	return corpus.Params{Seed: f.Seed, Events: f.Events, Authors: f.Authors, AvgSize: f.Size, Spread: corpus.DefaultSpread, Anchor: anchor}.WithDefaults()
}

type publishFlags struct {
	Concurrency int           `default:"10" help:"Publishing connections."`
	Mode        string        `default:"wait" enum:"wait,pipeline" help:"wait: one EVENT in flight per connection; pipeline: up to --window unacknowledged EVENTs per connection (every OK still read and matched)."`
	Window      int           `default:"64" help:"Pipelined mode: unacknowledged EVENTs allowed per connection."`
	Timeout     time.Duration `default:"10s" help:"How long an EVENT may wait for its OK, and a REQ for its EOSE."`
	SkipPublish bool          `name:"skip-publish" help:"Skip the publishing phase (queries then run against what the relay holds, unverified)."`
}

func (f publishFlags) options() workload.PublishOptions {
	return workload.PublishOptions{Connections: f.Concurrency, Mode: f.Mode, Window: f.Window, Timeout: f.Timeout}
}

type queryFlags struct {
	Queries          int  `default:"100" help:"Number of queries (rotating through the filter shapes)."`
	QueryLimit       int  `name:"query-limit" default:"100" help:"Limit of each query filter."`
	QueryConcurrency int  `name:"query-concurrency" default:"1" help:"Query connections running at once."`
	SkipQuery        bool `name:"skip-query" help:"Skip the query phase."`
}

func (f queryFlags) options(seed int64, timeout time.Duration) workload.QueryOptions {
	return workload.QueryOptions{Queries: f.Queries, Limit: f.QueryLimit, Connections: f.QueryConcurrency, Timeout: timeout, Seed: seed}
}

type outputFlags struct {
	JSON       string `name:"json" placeholder:"FILE" help:"Write the results file here (default: OUT/<command>-<time>.json)."`
	Out        string `default:"relaybench-results" placeholder:"DIR" help:"Folder for results files and relay logs."`
	NoProgress bool   `name:"no-progress" help:"No progress display."`
	Quiet      bool   `help:"Print no summary (the results file is still written)."`
}

// resultsPath returns where to write the results file and makes its folder.
func (f outputFlags) resultsPath(command string, started time.Time) (string, error) {
	p := f.JSON
	if p == "" {
		p = filepath.Join(f.Out, fmt.Sprintf("%s-%s.json", command, started.UTC().Format("20060102-150405")))
	}
	if p == "-" {
		return p, nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("results folder: %w", err)
	}
	return p, nil
}

type targetFlags struct {
	Relay      string `placeholder:"URL" help:"Relay to benchmark (ws://127.0.0.1:PORT). Default: start the embedded relay (khatru) on a free loopback port."`
	Store      string `default:"badger" enum:"badger,lmdb,sqlite3,memory,sink" help:"Store of the embedded relay (when no --relay): badger, lmdb, sqlite3, memory, or sink (OKs everything, stores nothing: the client's ceiling)."`
	IOperate   bool   `name:"i-operate-this-relay" help:"Allow a --relay outside 127.0.0.0/8: you state that you operate it."`
	RelayCPUs  string `name:"relay-cpus" placeholder:"LIST" help:"Pin a relay started by relaybench to these CPUs (e.g. 1)."`
	ClientCPUs string `name:"client-cpus" placeholder:"LIST" help:"Pin relaybench itself to these CPUs (e.g. 0)."`
}

// benchFlags are the corpus and workload flags run and compare share.
type benchFlags struct {
	corpusFlags
	publishFlags
	queryFlags
	workloadFlags
}

// config is the runner configuration these flags ask for.
func (f *benchFlags) config(extra []runner.Workload, clientCPUs string, prog *progress.Reporter) runner.Config {
	return runner.Config{
		Workloads:   extra,
		Publish:     f.publishFlags.options(),
		SkipPublish: f.SkipPublish,
		Query:       f.queryFlags.options(f.Seed, f.Timeout),
		SkipQuery:   f.SkipQuery,
		ClientCores: clientCores(clientCPUs),
		Progress:    progressFunc(prog),
	}
}

// params records the flags in the results file.
func (f *benchFlags) params() map[string]any {
	return map[string]any{
		"events": f.Events, "size": f.Size, "seed": f.Seed, "authors": f.Authors,
		"concurrency": f.Concurrency, "mode": f.Mode, "window": f.Window,
		"queries": f.Queries, "query_limit": f.QueryLimit, "query_concurrency": f.QueryConcurrency,
		"skip_publish": f.SkipPublish, "skip_query": f.SkipQuery, "workloads": f.Workloads,
	}
}
