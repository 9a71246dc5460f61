package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/relaybench/relaybench/harness"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/live"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
)

// webFlags serve a live view of the run (package live): every measuring
// command has them, in outputFlags.
type webFlags struct {
	Web           string        `name:"web" placeholder:"ADDR" help:"Serve a live view of the run at ADDR (a port, :PORT or HOST:PORT; a port alone binds 127.0.0.1): a page updated every second that ends with the report, and /metrics in the Prometheus format. Off by default."`
	WebAnyAddress bool          `name:"web-any-address" help:"Let --web listen on an address other than loopback (the page and /metrics are then open to the network)."`
	WebKeep       time.Duration `name:"web-keep" default:"0s" placeholder:"DURATION" help:"With --web: once the results file is written, keep serving the final page and /metrics this long (Ctrl-C ends it sooner, exit status 130), e.g. 30s for a last Prometheus scrape."`
	PrometheusRW  string        `name:"prometheus-rw" placeholder:"URL" help:"Push the figures of /metrics to a Prometheus remote-write receiver (e.g. http://127.0.0.1:9090/api/v1/write, Prometheus started with --web.enable-remote-write-receiver) every 5 s and once at the end; for runs no Prometheus can scrape. Works with or without --web."`
}

// rwInterval is how often --prometheus-rw pushes.
const rwInterval = 5 * time.Second

func (f webFlags) validate() error {
	if f.PrometheusRW != "" {
		if err := live.CheckRemoteWriteURL(f.PrometheusRW); err != nil {
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
	_, err := live.ParseAddr(f.Web, f.WebAnyAddress)
	return err
}

// webRun is the live view of a session (nil without --web: every method
// then does nothing).
type webRun struct {
	st   *live.State
	srv  *live.Server // nil without --web
	push *live.Pusher // nil without --prometheus-rw
	keep time.Duration
}

var (
	websMu sync.Mutex
	webs   = map[*webRun]struct{}{}
)

// startWeb serves the live view of the run writing its results to path
// (command's), fed by prog's phases, when --web is set.
func startWeb(f webFlags, command, path string, started time.Time, prog *progress.Reporter) (*webRun, error) {
	if f.Web == "" && f.PrometheusRW == "" {
		return nil, nil
	}
	name := strings.TrimSuffix(filepath.Base(path), ".json")
	if path == "-" || path == "" {
		name = command + "-" + started.UTC().Format("20060102T150405Z")
	}
	w := &webRun{st: live.New(live.Options{Run: name}), keep: f.WebKeep}
	if f.Web != "" {
		addr, err := live.ParseAddr(f.Web, f.WebAnyAddress)
		if err != nil {
			w.st.Close()
			return nil, withCode(judge.Usage, err)
		}
		if w.srv, err = live.Serve(w.st, addr); err != nil {
			w.st.Close()
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "Live view: %s (Prometheus: %smetrics)\n", w.srv.URL(), w.srv.URL())
	}
	w.st.Start()
	if f.PrometheusRW != "" {
		w.push = live.Push(w.st, f.PrometheusRW, rwInterval)
	}
	prog.Tap(w.st.Progress)
	websMu.Lock()
	webs[w] = struct{}{}
	websMu.Unlock()
	return w, nil
}

// setTarget names the relay in the live view and samples its process when
// relaybench started it.
func (w *webRun) setTarget(t runner.Target) {
	if w == nil {
		return
	}
	name, pid := t.Name, 0
	if name == "" {
		name = t.URL
	}
	if inst, ok := t.Probe.(*harness.Instance); ok {
		pid = inst.PID
	}
	w.st.SetRelay(name, pid)
}

// phaseDone shows finished phases with their exact figures.
func (w *webRun) phaseDone(phs ...results.Phase) {
	if w != nil {
		w.st.PhaseDone(phs...)
	}
}

// end shows the results file and its report, serves them --web-keep
// longer (until ctx ends), then stops the server.
func (w *webRun) end(ctx context.Context, f *results.File) {
	if w == nil {
		return
	}
	w.st.Finish(f)
	if w.keep > 0 && w.srv != nil && ctx.Err() == nil {
		t := time.NewTimer(w.keep)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	w.close()
}

// close stops the server, the last push and the ticks (each waiting at
// most 10 s) once; a failed push is said in one line.
func (w *webRun) close() {
	websMu.Lock()
	_, open := webs[w]
	delete(webs, w)
	websMu.Unlock()
	if !open {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if w.srv != nil {
		_ = w.srv.Close(ctx)
	}
	if w.push != nil {
		if err := w.push.Close(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "relaybench: %v\n", err)
		}
	}
	w.st.Close()
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
		w.close()
	}
}
