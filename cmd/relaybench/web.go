package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alecthomas/kong"
	"github.com/relaybench/relaybench/harness"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/live"
	"github.com/relaybench/relaybench/relaymetrics"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
)

// webFlags serve a live view of the run (package live): every measuring
// command has them, in outputFlags.
type webFlags struct {
	Web           flagValue     `name:"web" placeholder:"ADDR" help:"Serve a live view of the run at ADDR (a port, :PORT or HOST:PORT; a port alone binds 127.0.0.1): a page updated every second that ends with the report, and /metrics in the Prometheus format. Off by default."`
	WebAnyAddress bool          `name:"web-any-address" help:"Let --web listen on an address other than loopback (the page and /metrics are then open to the network)."`
	WebKeep       time.Duration `name:"web-keep" default:"0s" placeholder:"DURATION" help:"With --web: once the results file is written, keep serving the final page and /metrics this long, e.g. 30s for a last Prometheus scrape (Ctrl-C ends it sooner; the exit status stays the run's)."`
	RelayMetrics  flagValue     `name:"relay-metrics" placeholder:"URL" help:"The relay's own Prometheus metrics: an http(s) URL, a path on the relay's own address (/metrics), or off; redirects are followed on its host only. Without it, a catalog relay that serves them (metrics_path: nostr-rs-relay, Wisp) is read at its path. Read right before and after every timed window; what they counted goes into each phase of the results file and the live view, beside relaybench's figures, each count relaybench can bound flagged where the two disagree (relay_checks)."`
	PrometheusRW  flagValue     `name:"prometheus-rw" placeholder:"URL" help:"Push the figures of /metrics to a Prometheus remote-write receiver (e.g. http://127.0.0.1:9090/api/v1/write, Prometheus started with --web.enable-remote-write-receiver) every 5 s and once at the end; for runs no Prometheus can scrape. Works with or without --web."`
}

// rwInterval is how often --prometheus-rw pushes.
const rwInterval = 5 * time.Second

func (f webFlags) validate() error {
	if f.PrometheusRW != "" {
		if err := live.CheckRemoteWriteURL(string(f.PrometheusRW)); err != nil {
			return err
		}
	}
	if f.RelayMetrics != "" {
		if err := relaymetrics.Check(string(f.RelayMetrics)); err != nil {
			return err
		}
	}
	if f.WebKeep < 0 {
		return fmt.Errorf("--web-keep %s: must not be negative", f.WebKeep)
	}
	if f.Web == "" {
		if f.WebKeep > 0 || f.WebAnyAddress {
			return fmt.Errorf("--web-keep and --web-any-address need --web ADDR")
		}
		return nil
	}
	_, err := live.ParseAddr(string(f.Web), f.WebAnyAddress)
	return err
}

// webRun is the live view of a session (nil without --web: every method
// then does nothing).
type webRun struct {
	st   *live.State  // nil without --web and --prometheus-rw
	srv  *live.Server // nil without --web
	push *live.Pusher // nil without --prometheus-rw
	// pushURL is --prometheus-rw's URL
	pushURL string
	keep    time.Duration
	ctx     context.Context // the run's

	relayMetrics string // --relay-metrics ("off": not even a catalog relay's)

	rmMu sync.Mutex
	rms  []relayRecorder // one per relay read, in turn; the last is reading
}

// relayRecorder reads the metrics of the relay at url.
type relayRecorder struct {
	url string
	rec *relaymetrics.Recorder
}

var (
	websMu sync.Mutex
	webs   = map[*webRun]struct{}{}
)

// startWeb serves the live view of the run writing its results to path
// (command's), fed by prog's phases, when --web or --prometheus-rw is set,
// and reads the relay's own metrics (--relay-metrics, or a catalog relay's
// metrics_path); ctx is the run's.
func startWeb(ctx context.Context, f webFlags, command, path string, started time.Time, prog *progress.Reporter) (*webRun, error) {
	w := &webRun{ctx: ctx, relayMetrics: string(f.RelayMetrics), keep: f.WebKeep}
	if f.Web != "" || f.PrometheusRW != "" {
		if err := w.startLive(f, command, path, started, prog); err != nil {
			return nil, err
		}
	}
	websMu.Lock()
	webs[w] = struct{}{}
	websMu.Unlock()
	return w, nil
}

// startLive starts the live view (--web, --prometheus-rw).
func (w *webRun) startLive(f webFlags, command, path string, started time.Time, prog *progress.Reporter) error {
	name := strings.TrimSuffix(filepath.Base(path), ".json")
	if path == "-" || path == "" {
		name = command + "-" + started.UTC().Format("20060102T150405Z")
	}
	w.st = live.New(live.Options{Run: name, Command: command})
	if f.Web != "" {
		addr, err := live.ParseAddr(string(f.Web), f.WebAnyAddress)
		if err != nil {
			w.st.Close()
			return withCode(judge.Usage, err)
		}
		if w.srv, err = live.Serve(w.st, addr); err != nil {
			w.st.Close()
			return err
		}
		fmt.Fprintf(os.Stderr, "Live view: %s (Prometheus: %smetrics)\n", w.srv.URL(), w.srv.URL())
	}
	w.st.Start()
	if f.PrometheusRW != "" {
		w.push, w.pushURL = live.Push(w.st, string(f.PrometheusRW), rwInterval), string(f.PrometheusRW)
		fmt.Fprintf(os.Stderr, "Prometheus remote write: pushing to %s every %v and once at the end\n", f.PrometheusRW, rwInterval)
	}
	prog.Tap(w.st.Progress)
	return nil
}

// setTarget names the relay in the live view and samples its process tree
// when relaybench started it; it starts reading the relay's own metrics.
func (w *webRun) setTarget(t runner.Target) {
	if w == nil {
		return
	}
	w.readRelayMetrics(t)
	if w.st == nil {
		return
	}
	name := t.Name
	if name == "" {
		name = t.URL
	}
	var read func() (float64, int64, bool)
	if inst, ok := t.Probe.(*harness.Instance); ok {
		read = inst.Usage().Read // the whole tree: children and PostgreSQL too
	}
	w.st.SetRelayUsage(name, read)
}

// readRelayMetrics starts reading the metrics of t (--relay-metrics, else
// its catalog entry's metrics_path), unless they are read already; the
// previous relay's reading stops (compare measures one after another).
func (w *webRun) readRelayMetrics(t runner.Target) {
	u := w.metricsURL(t)
	if u == "" {
		return
	}
	w.rmMu.Lock()
	defer w.rmMu.Unlock()
	if n := len(w.rms); n > 0 {
		if w.rms[n-1].url == t.URL {
			return
		}
		w.rms[n-1].rec.Stop()
	}
	w.rms = append(w.rms, relayRecorder{url: t.URL, rec: relaymetrics.Start(w.ctx, u)})
}

// metricsURL is where t's own metrics are read ("" when nowhere).
func (w *webRun) metricsURL(t runner.Target) string {
	flag := w.relayMetrics
	if flag == relaymetrics.Off {
		return ""
	}
	if flag == "" {
		inst, ok := t.Probe.(*harness.Instance)
		if !ok || inst.Spec.MetricsPath == "" {
			return ""
		}
		flag = inst.Spec.MetricsPath
	}
	u, err := relaymetrics.Resolve(flag, t.URL)
	if err != nil {
		return ""
	}
	return u
}

// recorder is the reading of the relay at url (nil: none).
func (w *webRun) recorder(url string) *relaymetrics.Recorder {
	w.rmMu.Lock()
	defer w.rmMu.Unlock()
	for i := len(w.rms) - 1; i >= 0; i-- {
		if w.rms[i].url == url {
			return w.rms[i].rec
		}
	}
	return nil
}

// recorders is the relays whose metrics were read, in turn.
func (w *webRun) recorders() []relayRecorder {
	w.rmMu.Lock()
	defer w.rmMu.Unlock()
	return slices.Clone(w.rms)
}

// phaseDone shows finished phases with their exact figures, and the
// relay's own metrics of each (a copy annotated: the run's phases are at
// its end).
func (w *webRun) phaseDone(t runner.Target, phs ...results.Phase) {
	if w == nil || w.st == nil {
		return
	}
	if rec := w.recorder(t.URL); rec != nil {
		phs = slices.Clone(phs)
		for i := range phs {
			phs[i].Notes = slices.Clip(phs[i].Notes) // the copy's notes go elsewhere
			rec.AnnotatePhase(&phs[i])
		}
	}
	w.st.PhaseDone(phs...)
}

// hook has the runner tell the live view of each relay as its run starts
// and of each phase as it finishes (run, compare and the corpus commands).
func (w *webRun) hook(cfg *runner.Config) {
	if w == nil {
		return
	}
	cfg.Started = w.setTarget
	cfg.PhaseDone = func(t runner.Target, phs []results.Phase) { w.phaseDone(t, phs...) }
	if w.st == nil {
		return
	}
	cfg.Workloads = slices.Clone(cfg.Workloads)
	for i := range cfg.Workloads {
		cfg.Workloads[i] = w.workload(cfg.Workloads[i])
	}
}

// workload is wl telling the live view of itself (run, compare and the
// live commands: mixed's parts show on the page whichever command ran
// it): it names the phase in flight as it starts, so one that announces
// no progress of its own (load) is shown under its name, not as no phase
// at all, and each of its lines that names a part starting names the
// part under way (partLines).
func (w *webRun) workload(wl runner.Workload) runner.Workload {
	if w == nil || w.st == nil {
		return wl
	}
	name, run := wl.Name, wl.Run
	wl.Run = func(ctx context.Context, env runner.Env) ([]results.Phase, error) {
		w.st.Workload(name)
		defer w.st.Workload("")
		if env.Log != nil {
			env.Log = partLines{env.Log, name + ": ", w.st.Part}
		}
		return run(ctx, env)
	}
	return wl
}

// partLines passes a workload's lines on and gives the live view each
// one that names a part starting ("mixed: together (10s)", written in one
// Write): the phase in flight (mixed's plan, announced before its first
// part) then says which part is under way. A skip line names no part.
type partLines struct {
	w      io.Writer
	prefix string
	part   func(string)
}

func (p partLines) Write(b []byte) (int, error) {
	if part, ok := partOf(b, p.prefix); ok {
		p.part(part)
	}
	return p.w.Write(b)
}

// partOf is the part b, one line of a workload's, names starting (ok
// false: none) when the workload's lines begin with prefix.
func partOf(b []byte, prefix string) (part string, ok bool) {
	line := strings.TrimSpace(string(b))
	rest, ok := strings.CutPrefix(line, prefix)
	if !ok || strings.Contains(line, "\n") || strings.HasPrefix(rest, "skipped on ") {
		return "", false
	}
	return rest, true
}

// quietParts keeps a workload's part lines, progress, off its log (mixed
// --no-progress) and passes its other lines on (a skip): the live view
// still shows the part under way when the log is its partLines.
type quietParts struct {
	w      io.Writer
	prefix string
}

func (q quietParts) Write(b []byte) (int, error) {
	part, ok := partOf(b, q.prefix)
	if !ok {
		return q.w.Write(b)
	}
	if p, ok := q.w.(partLines); ok && p.prefix == q.prefix {
		p.part(part)
	}
	return len(b), nil
}

// end shows the results file and its report, serves them --web-keep
// longer (until ctx ends, or a signal ends the keep: endServing), then
// stops the server. f was judged and saved: its verdict is the exit
// status, which a signal from now on no longer changes.
func (w *webRun) end(ctx context.Context, f *results.File) {
	if w == nil {
		return
	}
	if w.st == nil {
		w.close(ctx)
		return
	}
	e := newRunEnd(f)
	defer e.stop()
	if w.srv != nil && ctx.Err() == nil {
		ending.Store(e)
		defer ending.CompareAndSwap(e, nil)
	}
	w.st.Finish(f)
	if w.srv != nil {
		// The pages following the run get the last figures and the report
		// before the server stops (a page that stopped reading is not
		// waited for longer).
		budget := finalReportWait
		if ctx.Err() != nil {
			budget = closeBudgetInterrupted
		}
		dctx, cancel := context.WithTimeout(e.ctx, budget) // a signal ends it too
		w.srv.Drain(dctx)
		cancel()
	}
	if w.keep > 0 && w.srv != nil && ctx.Err() == nil && !e.ended() {
		until := time.Now().Add(w.keep)
		fmt.Fprintf(os.Stderr, "Serving the final page at %s (and %smetrics) until %s (--web-keep %s): Ctrl-C stops it sooner, the exit status staying the run's%s\n",
			w.srv.URL(), w.srv.URL(), clock(until), numfmt.Dur(w.keep), e.status)
		t := time.NewTimer(w.keep)
		select {
		case <-t.C:
		case <-ctx.Done():
		case <-e.ctx.Done():
		}
		t.Stop()
	}
	run := ctx
	if e.ended() {
		// Stopped by the user: closed as fast as an interrupted run is.
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		run = cancelled
	}
	w.close(run)
}

// runEnd is a run's end under way (webRun.end): its results are judged
// and saved, and the live view serves them before it stops.
type runEnd struct {
	ctx    context.Context // done once a signal stopped the serving (endServing)
	cancel context.CancelFunc
	once   sync.Once
	status string // the run's exit status, as said after "exit status" (" (3)"; "": not known)
}

func newRunEnd(f *results.File) *runEnd {
	e := &runEnd{}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	if f != nil && f.Verdict != nil {
		e.status = " (" + strconv.Itoa(f.Verdict.Status) + ")"
	}
	return e
}

// stop releases the end's context once the end is over.
func (e *runEnd) stop() { e.once.Do(func() {}); e.cancel() }

// ending is the run's end under way, while a live view serves its last
// figures (and --web-keep): a signal then stops the serving, not the run.
var ending atomic.Pointer[runEnd]

// endServing is the signal handler's (main.go): while a run's end is under
// way (its verdict printed, its results saved), sig stops the live view's
// serving (--web-keep) and the process exits with the run's own status;
// it says so in one line and returns true. False: no run is ending, sig
// interrupts as usual (exit status 130).
func endServing(sig os.Signal) bool {
	e := ending.Load()
	if e == nil {
		return false
	}
	e.once.Do(func() {
		fmt.Fprintf(os.Stderr, "\nrelaybench: %v after the run: the live view stops; the exit status is the run's%s\n", sig, e.status)
		e.cancel()
	})
	return true
}

// ended says whether a signal stopped the serving.
func (e *runEnd) ended() bool { return e.ctx.Err() != nil }

// clock is t as a user reads it: the time of day, with the date when it
// is not today.
func clock(t time.Time) string {
	if y, m, d := t.Date(); time.Now().Day() != d || time.Now().Month() != m || time.Now().Year() != y {
		return t.Format("2006-01-02 15:04:05 MST")
	}
	return t.Format("15:04:05 MST")
}

// Time the last remote-write push and the server's shutdown may take: a
// run interrupted (run's context done) exits within a second.
const (
	closeBudget            = 10 * time.Second
	closeBudgetInterrupted = 500 * time.Millisecond
	// finalReportWait bounds the wait for the pages to have the report.
	finalReportWait = 2 * time.Second
)

// closeContext bounds a live view's close: closeBudget, or
// closeBudgetInterrupted once run is done.
func closeContext(run context.Context) (context.Context, context.CancelFunc) {
	budget := closeBudget
	if run.Err() != nil {
		budget = closeBudgetInterrupted
	}
	return context.WithTimeout(context.Background(), budget)
}

// close stops the server, the last push and the ticks once (within
// closeBudget, or closeBudgetInterrupted once run is done); a failed push
// is said in one line.
func (w *webRun) close(run context.Context) {
	websMu.Lock()
	_, open := webs[w]
	delete(webs, w)
	websMu.Unlock()
	if !open {
		return
	}
	ctx, cancel := closeContext(run)
	defer cancel()
	w.rmMu.Lock()
	if n := len(w.rms); n > 0 {
		w.rms[n-1].rec.Stop()
	}
	w.rmMu.Unlock()
	if w.st == nil {
		return
	}
	if w.srv != nil {
		_ = w.srv.Close(ctx)
	}
	if w.push != nil {
		if err := w.push.Close(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "relaybench: %v\n", err)
		} else {
			what := "pushes"
			n, _ := w.push.Pushes()
			if n == 1 {
				what = "push"
			}
			fmt.Fprintf(os.Stderr, "Prometheus remote write: %d %s to %s, all accepted\n", n, what, w.pushURL)
		}
	}
	w.st.Close()
}

// annotate puts the relay's own metrics into f's phases (--relay-metrics,
// a catalog relay's metrics_path), before f is written.
func (w *webRun) annotate(f *results.File) {
	if w == nil {
		return
	}
	for i := range f.Runs {
		r := &f.Runs[i]
		if rec := w.recorder(r.Relay.URL); rec != nil {
			rec.Annotate(r)
			continue
		}
		if w.relayMetrics != "" && w.relayMetrics != relaymetrics.Off && r.Skipped == "" {
			r.Notes = append(r.Notes, "relay metrics not read: the relay's address gives no metrics URL for --relay-metrics "+w.relayMetrics)
		}
	}
}

// closeWebs stops every live view still served: a command that returned
// before its end (an error before measuring) leaves none behind.
func closeWebs() {
	websMu.Lock()
	var all []*webRun
	for w := range webs {
		all = append(all, w)
	}
	websMu.Unlock()
	for _, w := range all {
		w.close(context.Background())
	}
}

// flagValue is a string flag that, once given, must not be empty: an
// empty --web, --prometheus-rw or --relay-metrics (”, an unset shell
// variable) is a usage error, not the feature silently off.
type flagValue string

// Decode is kong's mapper: the value given, refused when empty.
func (v *flagValue) Decode(ctx *kong.DecodeContext) error {
	var s string
	if err := ctx.Scan.PopValueInto(ctx.Value.Name, &s); err != nil {
		return err
	}
	if strings.TrimSpace(s) == "" {
		return errors.New("empty value: give one or leave the flag out") // kong names the flag
	}
	*v = flagValue(s)
	return nil
}
