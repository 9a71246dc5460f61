package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/flagcheck"
	"github.com/relaybench/relaybench/relay/embedded"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/threshold"
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
	Corpus   string `name:"corpus" placeholder:"FILE" help:"Publish the events of a dump instead of generated ones: NDJSON or a JSON array, plain or gzip (e.g. strfry export, nak req). Every id and signature is verified; bad events, duplicates, ephemeral kinds, deletions and expiring events are dropped and counted; the rest is published in created_at order and cached. --events, --size and --anchor are then ignored; --seed and --authors pick the keys that sign fresh events for live workloads."`
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

// validate checks the corpus flags (see checkFlags): a value out of range
// is refused, never replaced by a default.
func (f corpusFlags) validate() error {
	var r ranges
	r.Between("events", f.Events, 1, corpus.MaxEvents)
	r.Between("size", f.Size, 1, corpus.MaxAvgSize)
	r.Between("authors", f.Authors, 1, corpus.MaxAuthors)
	if r.Err() != nil {
		return r.Err()
	}
	if f.Corpus != "" {
		// A dump that cannot be read is a bad flag: said before anything starts.
		fh, err := os.Open(f.Corpus)
		if err != nil {
			return fmt.Errorf("--corpus %s: %v", f.Corpus, errors.Unwrap(err))
		}
		st, err := fh.Stat()
		fh.Close()
		if err == nil && st.IsDir() {
			return fmt.Errorf("--corpus %s: is a folder: give an NDJSON or JSON event dump", f.Corpus)
		}
	}
	_, err := f.anchor()
	if err == nil && f.Corpus == "" {
		f.checkCosts(&r)
		err = r.Err()
	}
	return err
}

// checkCosts refuses a generated corpus the machine cannot hold (budget.go):
// in memory with --cache-dir off, else in the cache folder on disk (unless
// it is cached already).
func (f corpusFlags) checkCosts(r *ranges) {
	if f.CacheDir == "off" {
		r.Memory("events", fmt.Sprintf("%d (× --size %d)", f.Events, f.Size), float64(f.Events), flagcheck.StoredEventBytes(f.Size), "event of the corpus, held in memory with --cache-dir off")
		return
	}
	dir := f.CacheDir
	if dir == "" {
		dir, _ = corpus.DefaultCacheDir()
	}
	if dir == "" {
		return
	}
	if _, err := os.Stat(corpus.CachePath(dir, f.params().Key())); err == nil {
		return // cached: nothing to write
	}
	r.Disk("events", fmt.Sprintf("%d (× --size %d)", f.Events, f.Size), float64(f.Events)*flagcheck.StoredEventBytes(f.Size), dir, "the corpus cache")
}

func (f corpusFlags) params() corpus.Params {
	anchor, _ := f.anchor() // checked by validate
	return corpus.Params{Seed: f.Seed, Events: f.Events, Authors: f.Authors, AvgSize: f.Size, Spread: corpus.DefaultSpread, Anchor: anchor}.WithDefaults()
}

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

func (f liveKeyFlags) validate() error {
	var r ranges
	r.Between("authors", f.Authors, 1, corpus.MaxAuthors)
	return r.Err()
}

type publishFlags struct {
	Concurrency int           `default:"10" help:"Publishing connections."`
	Mode        string        `default:"wait" enum:"wait,pipeline" help:"wait: one EVENT in flight per connection; pipeline: up to --window unacknowledged EVENTs per connection (every OK still read and matched)."`
	Window      int           `default:"64" help:"Pipelined mode: unacknowledged EVENTs allowed per connection."`
	Timeout     time.Duration `default:"10s" help:"How long an EVENT may wait for its OK, and a REQ for its EOSE."`
	SkipPublish bool          `name:"skip-publish" help:"Skip the publishing phase (queries then run against what the relay holds, unverified)."`
}

func (f publishFlags) validate() error {
	var r ranges
	r.Min("concurrency", f.Concurrency, 1)
	r.Min("window", f.Window, 1)
	r.Window("window", f.Window, 64, 0)
	r.Positive("timeout", f.Timeout)
	if !f.SkipPublish {
		r.Conns("concurrency", f.Concurrency, f.Concurrency)
	}
	return r.Err()
}

// checkWindow refuses a pipelined window above the events of the corpus
// cf signs (a corpus file's count is not known here).
func (f publishFlags) checkWindow(r *ranges, cf corpusFlags) {
	if f.Mode == workload.ModePipeline && cf.Corpus == "" && !f.SkipPublish {
		r.Window("window", f.Window, 64, float64(cf.Events))
	}
}

// checkPublishRun checks the flag groups of a command that publishes the
// corpus to its target before its workload (clients, count, search, sync).
func checkPublishRun(tf targetFlags, cf corpusFlags, pf publishFlags) error {
	var r ranges
	r.Add(tf.validate())
	r.Add(cf.validate())
	r.Add(pf.validate())
	pf.checkWindow(&r, cf)
	return r.Err()
}

func (f publishFlags) options() workload.PublishOptions {
	return workload.PublishOptions{Base: workload.Base{Timeout: f.Timeout}, Connections: f.Concurrency, Mode: f.Mode, Window: f.Window}
}

// publishParams records the corpus and publishing flags that shaped a run:
// a dump's --events and --size did not take effect, nor did a skipped
// publish phase's flags.
func publishParams(cf corpusFlags, pf publishFlags) map[string]any {
	p := map[string]any{"events": cf.Events, "size": cf.Size, "seed": cf.Seed, "authors": cf.Authors}
	if cf.Corpus != "" {
		p = map[string]any{"corpus": cf.Corpus, "seed": cf.Seed, "authors": cf.Authors}
	}
	if pf.SkipPublish {
		p["skip_publish"] = true
	} else {
		p["concurrency"], p["mode"] = pf.Concurrency, pf.Mode
	}
	return p
}

// windowParam records --window in p when it shaped the publish phase
// (pipelined).
func (f publishFlags) windowParam(p map[string]any) {
	if !f.SkipPublish && f.Mode == workload.ModePipeline {
		p["window"] = f.Window
	}
}

type queryFlags struct {
	Queries          int    `default:"100" help:"Number of queries (rotating through the filter shapes)."`
	QueryLimit       int    `name:"query-limit" default:"100" help:"Limit of each query filter."`
	QueryConcurrency int    `name:"query-concurrency" aliases:"query-conns" default:"1" help:"Query connections running at once (alias --query-conns), each running the mix one query at a time (queries/s and events returned/s are over all of them)."`
	QueryMix         string `name:"query-mix" default:"reference" placeholder:"MIX" help:"Query shapes: reference (the reference suite's kind, time-range, tag-p, tag-t, author, complex), clients (what clients send: global, home, profiles, thread, notifications, hashtag, ids, reactions, addressable), all, or a comma-separated list of shapes."`
	SkipQuery        bool   `name:"skip-query" help:"Skip the query phase."`
}

// validate: --queries may be 0 only with --skip-query (no query phase).
func (f queryFlags) validate() error {
	var r ranges
	if f.SkipQuery {
		r.Min("queries", f.Queries, 0)
	} else if f.Queries < 1 {
		r.Bad("queries", f.Queries, "must be at least 1 (or pass --skip-query)")
	}
	r.QueryLimit("query-limit", f.QueryLimit)
	r.Min("query-concurrency", f.QueryConcurrency, 1)
	if _, err := workload.ParseMix(f.QueryMix); err != nil {
		r.Bad("query-mix", f.QueryMix, "%v", err)
	}
	return r.Err()
}

func (f queryFlags) options(seed int64, timeout time.Duration) workload.QueryOptions {
	shapes, _ := workload.ParseMix(f.QueryMix) // checked by validate
	return workload.QueryOptions{Base: workload.Base{Timeout: timeout, Seed: seed}, Queries: f.Queries, Limit: f.QueryLimit, Connections: f.QueryConcurrency, Shapes: shapes}
}

type outputFlags struct {
	JSON       string `name:"json" placeholder:"FILE" help:"Write the results file here, '-' for standard output (default: OUT/<command>-<time>.json). Never overwritten: an existing FILE is refused (a FIFO or /dev/null is written as it is)."`
	Out        string `default:"relaybench-results" placeholder:"DIR" help:"Folder for results files and relay logs."`
	NoProgress bool   `name:"no-progress" help:"No progress display (bars, count lines, load's and find-max's per-second lines)."`
	Quiet      bool   `help:"Print no summary (the results file is still written)."`
	gateFlags
	webFlags // web.go
}

// gateFlags turn a run into a CI gate: thresholds judged at the end (exit
// status 5 when one is not met) and a JUnit report of the checks.
type gateFlags struct {
	Threshold  []string `name:"threshold" sep:"none" placeholder:"EXPR" help:"Pass/fail criterion on a figure of the results, e.g. 'publish.ok.p99<20ms', 'query.eose.p99<50ms', 'publish.rate>5000', 'verification==passed', 'query/author.eose.p99{relay=strfry}<10ms' (grammar: README, In a relay's CI). Repeatable. Not met: exit status 5."`
	Thresholds string   `name:"thresholds" placeholder:"FILE" help:"TOML file of thresholds: thresholds = [\"publish.ok.p99<20ms\", …] (added to --threshold)."`
	JUnit      string   `name:"junit" placeholder:"FILE" help:"Also write the thresholds, verifications and verdict as a JUnit XML report to FILE (overwritten), for CI systems."`

	parsed []threshold.Threshold `kong:"-"`
}

// validate parses the thresholds (a bad one is a usage error) and checks
// that the JUnit file can be written.
func (f *gateFlags) validate() error {
	ts, err := threshold.ParseAll(f.Threshold, f.Thresholds)
	if err != nil {
		return err
	}
	f.parsed = ts
	if f.JUnit != "" {
		if st, err := os.Stat(f.JUnit); err == nil && st.IsDir() {
			return fmt.Errorf("--junit %s: is a folder: give a file name", f.JUnit)
		}
		return checkWritableDir("junit", f.JUnit, filepath.Dir(f.JUnit))
	}
	return nil
}

// gate returns the command's gate flags: every command with outputFlags
// has them (see finishRun).
func (f *gateFlags) gate() *gateFlags { return f }

// activeGate is the gate flags of the command being run, set once its flags
// are checked (Globals.AfterApply); nil for commands without them.
var activeGate *gateFlags

// validate checks, before anything runs, that the results file can be
// written: an explicit --json FILE must not exist (results files are never
// overwritten) and its folder, or --out for the default name, must be a
// folder this process can write in (or be creatable under one).
func (f outputFlags) validate() error {
	if err := f.webFlags.validate(); err != nil {
		return err
	}
	if f.JSON == "-" {
		return checkNotFile("out", f.Out)
	}
	if f.JSON != "" {
		if st, err := os.Stat(f.JSON); err == nil && st.IsDir() {
			return fmt.Errorf("--json %s: is a folder: give a file name, e.g. %s", f.JSON, filepath.Join(f.JSON, "results.json"))
		} else if err == nil && notAResultsFile(st) {
			return checkNotFile("out", f.Out) // /dev/null, a FIFO: written as it is, nothing overwritten
		} else if err == nil {
			return fmt.Errorf("--json %s: file exists: relaybench never overwrites a results file; give another name", f.JSON)
		}
		if err := checkWritableDir("json", f.JSON, filepath.Dir(f.JSON)); err != nil {
			return err
		}
		return checkNotFile("out", f.Out)
	}
	return checkWritableDir("out", f.Out, f.Out)
}

// notAResultsFile reports whether st, an existing path's, is a file that
// can hold no results file to overwrite: a character device such as
// /dev/null, a FIFO, a socket (neither regular nor a folder). --json and
// merge -o write to it as it is (results.Write).
func notAResultsFile(st fs.FileInfo) bool {
	return !st.IsDir() && !st.Mode().IsRegular()
}

// checkWritableDir checks that dir, or the nearest folder above it that
// exists (dir is made later), is a folder this process can create files in.
func checkWritableDir(flag, value, dir string) error {
	d := dir
	for {
		st, err := os.Stat(d)
		if err == nil {
			if !st.IsDir() {
				return fmt.Errorf("--%s %s: %s is not a folder", flag, value, d)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return fmt.Errorf("--%s %s: %v", flag, value, pathErr(err))
		}
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	probe, err := os.CreateTemp(d, ".relaybench-probe-*")
	if err != nil {
		return fmt.Errorf("--%s %s: cannot create files in %s: %v", flag, value, d, pathErr(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

// checkNotFile refuses a folder flag naming something that is not a folder.
func checkNotFile(flag, dir string) error {
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return fmt.Errorf("--%s %s: not a folder", flag, dir)
	}
	return nil
}

// pathErr drops the path an *fs.PathError repeats.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// relaySourceFlags say where the relays relaybench starts come from: the
// catalog built in, the user's catalog files, and prebuilt binaries.
type relaySourceFlags struct {
	Catalog []string          `name:"catalog" sep:"none" placeholder:"FILE" help:"A relay catalog of your own, in the format of harness/catalog.toml (unknown keys refused): its relays are added, or replace the built-in ones of the same name whole. Repeatable; later files win."`
	BinDir  string            `name:"bin-dir" placeholder:"DIR" help:"Folder of prebuilt relay binaries named after catalog entries (DIR/strfry, DIR/nostr-rs-relay-sqlite, …): a file there is that relay's binary, no build needed. Default: $RELAYBENCH_BIN_DIR. --bin wins over it."`
	Bin     map[string]string `name:"bin" placeholder:"NAME=PATH" help:"Binary for one relay, e.g. --bin strfry=/opt/strfry/strfry (wins over --bin-dir, RELAYBENCH_<NAME>_BIN and the build cache)."`
}

// templateFlags go with relay lists that may hold NAME=COMMAND templates.
type templateFlags struct {
	RelayConfig map[string]string `name:"relay-config" mapsep:"none" placeholder:"NAME=FILE" help:"Config file for the relay given as NAME=COMMAND: FILE is a template with the same {placeholders}, written into the relay's run dir before it starts; {config} in the command is its path. Repeatable."`
}

type targetFlags struct {
	Relay      string `placeholder:"RELAY" help:"Relay to benchmark: a ws:// URL (ws://127.0.0.1:PORT), a catalog name (see 'relaybench relays list'), or NAME='COMMAND {port} {dir} …', a relay started from a command template (see compare --relays). Default: start the embedded relay (khatru) on a free loopback port."`
	Store      string `default:"native" enum:"native,badger,lmdb,sqlite3,memory,sink" help:"Store of the embedded relay (when no --relay): native (relaybench's own store, correct answers; the default), badger, lmdb, sqlite3, memory (eventstore v0.16.2, with known wrong answers), or sink (OKs everything, stores nothing: the client's ceiling)."`
	IOperate   bool   `name:"i-operate-this-relay" help:"Allow a --relay outside 127.0.0.0/8: you state that you operate it."`
	RelayCPUs  string `name:"relay-cpus" placeholder:"LIST" help:"Pin a relay started by relaybench to these CPUs (e.g. 1)."`
	ClientCPUs string `name:"client-cpus" placeholder:"LIST" help:"Pin relaybench itself to these CPUs (e.g. 0)."`
	relaySourceFlags
	templateFlags
	authFlags
}

func (f targetFlags) validate() error {
	if f.Relay == "" && embedded.NotBuilt[f.Store] != "" {
		return fmt.Errorf("--store %s: this relaybench has no %s store: build relaybench with -tags cgostores", f.Store, f.Store)
	}
	return checkTarget(f.authFlags, f.RelayCPUs, f.ClientCPUs, f.relaySourceFlags, func() error {
		_, err := f.relayRef()
		return err
	})
}

// checkTarget checks the flags that say how to reach the relays and where
// they and the client run (run's --relay, compare's --relays), then, when
// they are good, resolves the relays they name (resolve).
func checkTarget(a authFlags, relayCPUs, clientCPUs string, src relaySourceFlags, resolve func() error) error {
	var r ranges
	r.Add(a.validate())
	checkCPUs(&r, "relay-cpus", relayCPUs)
	checkCPUs(&r, "client-cpus", clientCPUs)
	r.Add(src.validate())
	if r.Err() == nil {
		r.Add(resolve())
	}
	return r.Err()
}

// benchFlags are the corpus and workload flags run and compare share.
type benchFlags struct {
	corpusFlags
	publishFlags
	queryFlags
	workloadFlags
}

func (f *benchFlags) validate() error {
	var r ranges
	r.Add(f.corpusFlags.validate())
	r.Add(f.publishFlags.validate())
	r.Add(f.queryFlags.validate())
	f.publishFlags.checkWindow(&r, f.corpusFlags)
	if r.Err() == nil {
		f.workloadFlags.check(&r, workload.CheckInput{Events: f.Events, Size: f.Size})
	}
	f.checkCosts(&r)
	return r.Err()
}

// checkCosts refuses counts the machine cannot pay for (budget.go): the
// query connections, and the queries' answers, held until the query phase
// is verified (publishFlags check the publishing connections).
func (f *benchFlags) checkCosts(r *ranges) {
	if !f.SkipPublish && (!f.SkipQuery || len(f.Workloads) > 0) && f.Corpus == "" {
		// What the relay accepted is kept to verify what follows: id,
		// pubkey, kind, created_at and tags on the heap (about 0.64 KB an
		// event), content and signature in the mapped corpus file.
		r.Memory("events", f.Events, float64(f.Events), flagcheck.ModelEventBytes, "event kept to verify the queries")
	}
	if f.SkipQuery {
		return
	}
	r.Conns("query-concurrency", f.QueryConcurrency, f.QueryConcurrency)
	r.QueryMemory("query-limit", f.QueryLimit, 1, f.QueryLimit, f.Events, f.Size)
	r.QueryMemory("queries", f.Queries, f.Queries, f.QueryLimit, f.Events, f.Size)
}

// config is the runner configuration these flags ask for (the session
// adds the client's cores and the progress display).
func (f *benchFlags) config(extra []runner.Workload) runner.Config {
	return runner.Config{
		Workloads:   extra,
		Publish:     f.publishFlags.options(),
		SkipPublish: f.SkipPublish,
		Query:       f.queryFlags.options(f.Seed, f.Timeout),
		SkipQuery:   f.SkipQuery,
	}
}

// params records the flags in the results file.
func (f *benchFlags) params() map[string]any {
	// Only the parameters that shaped the run, each once: a skipped phase's
	// flags did not take effect, and no workloads means none.
	p := publishParams(f.corpusFlags, f.publishFlags)
	f.publishFlags.windowParam(p)
	if f.SkipQuery {
		p["skip_query"] = true
	} else {
		p["queries"], p["query_limit"], p["query_concurrency"] = f.Queries, f.QueryLimit, f.QueryConcurrency
		if f.QueryMix != "" && f.QueryMix != workload.MixReference {
			p["query_mix"] = f.QueryMix
		}
	}
	if len(f.Workloads) > 0 {
		p["workloads"] = f.Workloads
	}
	return p
}
