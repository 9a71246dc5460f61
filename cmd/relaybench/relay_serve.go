package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/relaybench/relaybench/internal/owntemp"
	"github.com/relaybench/relaybench/internal/sysinfo"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/relay/embedded"
	"github.com/relaybench/relaybench/relay/sink"
)

type relayCmd struct {
	Serve relayServeCmd `cmd:"" help:"Serve the embedded khatru relay (or the sink) until SIGINT/SIGTERM, which stop it (exit 0); prints 'listening ws://HOST:PORT' once bound."`
}

func init() {
	register("relay", "Run the embedded relay (khatru) or the sink relay by hand.", &relayCmd{})
}

type relayServeCmd struct {
	Addr     string `default:"127.0.0.1:0" help:"Address to listen on; port 0 picks a free port."`
	DataDir  string `name:"data-dir" placeholder:"DIR" help:"Where the store keeps its files (kept on exit). Default: a new temporary directory, removed on exit."`
	Store    string `default:"native" enum:"native,badger,lmdb,sqlite3,memory,sink" help:"Event store: native (relaybench's own, the default), badger, lmdb, sqlite3, memory, or sink (OK everything, store nothing)."`
	IOperate bool   `name:"i-operate-this-relay" help:"Allow listening on a non-loopback address (load must only go to relays you operate)."`
}

// shutdownTimeout bounds the graceful shutdown after a signal.
const shutdownTimeout = 10 * time.Second

// checkFlags refuses a non-loopback --addr without --i-operate-this-relay.
func (c *relayServeCmd) checkFlags() error { return checkLoopback(c.Addr, c.IOperate) }

func (c *relayServeCmd) Run(g *Globals) error {
	servingRelay.Store(true)
	if err := checkLoopback(c.Addr, c.IOperate); err != nil {
		return withCode(judge.Usage, err)
	}
	handler, closeRelay, cleanup, err := c.relay(g.Verbose)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		closeRelay()
		cleanup()
		return fmt.Errorf("listen on %s: %v", c.Addr, err)
	}
	err = serveRelay(g.Ctx, ln, handler, closeRelay, g.Verbose)
	cleanup()
	if err == nil && g.Ctx.Err() != nil {
		// A signal is how a server stops: its job is done (exit 0).
		fmt.Fprintf(os.Stderr, "relaybench relay: %s\n", stoppedBy(relayStopSignal.Load()))
	}
	return err
}

// stoppedBy is the line of a relay stopped by the signal named sig
// ("stopped (interrupt)"; nil: no signal was named).
func stoppedBy(sig *string) string {
	if sig == nil {
		return "stopped"
	}
	return "stopped (" + *sig + ")"
}

// relay makes the relay --store asks for: the sink, or the embedded relay
// on --data-dir (else a temporary directory, which cleanup removes).
func (c *relayServeCmd) relay(verbose bool) (handler http.Handler, closeRelay func() error, cleanup func(), err error) {
	if c.Store == "sink" {
		s := sink.New(sink.Options{})
		return s, s.Close, func() {}, nil
	}
	var logger *log.Logger
	if verbose {
		logger = log.New(os.Stderr, "[khatru] ", log.LstdFlags)
	}
	dir, cleanup := c.DataDir, func() {}
	if dir == "" && c.Store != "memory" {
		tmp, err := owntemp.Dir("", "relaybench-relay-")
		if err != nil {
			return nil, nil, nil, fmt.Errorf("temporary data directory: %v", err)
		}
		dir, cleanup = tmp, func() { os.RemoveAll(tmp) }
	}
	r, err := embedded.New(embedded.Options{Store: c.Store, DataDir: dir, Version: sysinfo.ShortVersion(), Logger: logger})
	if err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	return r.Handler(), r.Close, cleanup, nil
}

// serveRelay serves handler on ln until ctx is done or serving fails, then
// shuts the server down, closes the relay (close frames to clients, the
// store drained and closed) and every connection left.
func serveRelay(ctx context.Context, ln net.Listener, handler http.Handler, closeRelay func() error, verbose bool) error {
	errLog := log.New(io.Discard, "", 0)
	if verbose {
		errLog = log.New(os.Stderr, "[http] ", log.LstdFlags)
	}
	hijacked := &hijackedConns{conns: map[net.Conn]struct{}{}}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ErrorLog: errLog, ConnState: hijacked.track}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(os.Stdout, "listening ws://%s\n", ln.Addr())

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}

	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	shutErr := srv.Shutdown(sctx)
	closeErr := closeRelay()
	hijacked.closeAll()

	switch {
	case serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed):
		return fmt.Errorf("serving: %v", serveErr)
	case closeErr != nil:
		return closeErr
	case shutErr != nil:
		return fmt.Errorf("shutting down: %v", shutErr)
	}
	return nil
}

// hijackedConns are the hijacked (WebSocket) connections of a server,
// which its Shutdown does not close: closed at the end.
type hijackedConns struct {
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// track is the server's ConnState hook.
func (h *hijackedConns) track(nc net.Conn, st http.ConnState) {
	if st == http.StateHijacked {
		h.mu.Lock()
		h.conns[nc] = struct{}{}
		h.mu.Unlock()
	}
}

func (h *hijackedConns) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for nc := range h.conns {
		nc.Close()
	}
}

// checkLoopback refuses an address that is not on 127.0.0.0/8 or ::1
// unless the user says they operate the relay.
func checkLoopback(addr string, allowed bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %v", addr, err)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("--addr %q: the port must be 0 to 65535: %v", addr, err)
	}
	if allowed {
		return nil
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--addr %q is not a loopback address: pass --i-operate-this-relay to serve beyond this machine", addr)
}
