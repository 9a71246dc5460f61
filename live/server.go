package live

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

//go:embed page.html
var page []byte

// subBuffer is how many events a page may fall behind before it is
// dropped (it reconnects and gets the history again).
const subBuffer = 16

// maxStreams is how many pages may follow the run at once: each first
// gets the whole history (up to a megabyte of JSON, encoded on this
// machine while it measures), so more are refused (503).
const maxStreams = 32

// ParseAddr reads --web: a bare port or ":PORT" binds 127.0.0.1; a host
// must be a loopback address or "localhost" unless anyAddress is set.
func ParseAddr(addr string, anyAddress bool) (string, error) {
	if addr == "" {
		return "", errors.New("--web: give a port or HOST:PORT, e.g. --web 8080")
	}
	if _, err := strconv.Atoi(addr); err == nil {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--web %q: want a port or HOST:PORT, e.g. 8080 or 127.0.0.1:8080", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("--web %q: port %q is not a number from 0 to 65535", addr, port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if !anyAddress && !loopback(host) {
		return "", fmt.Errorf("--web %s: %s is not a loopback address; the page and /metrics would be open to the network: add --web-any-address to serve there", addr, host)
	}
	return net.JoinHostPort(host, port), nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Server serves a State: the page at /, its events at /events, the
// Prometheus exposition at /metrics, the final report at /report.
type Server struct {
	st    *State
	srv   *http.Server
	ln    net.Listener
	quit  context.Context // done once Close began
	stop  context.CancelFunc
	wg    sync.WaitGroup
	close sync.Once

	streams atomic.Int64  // pages following the run now
	idle    chan struct{} // a token each time a page's stream ended (Drain)
}

// Serve listens on addr (ParseAddr's) and serves st until Close (st.Start
// makes its points).
func Serve(st *State, addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--web %s: %w", addr, err)
	}
	s := &Server{st: st, ln: ln, idle: make(chan struct{}, 1)}
	s.quit, s.stop = context.WithCancel(context.Background())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.handlePage)
	mux.HandleFunc("GET /events", s.handleEvents)
	mux.HandleFunc("GET /metrics", s.handleMetrics)
	mux.HandleFunc("GET /report", s.handleReport)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	s.wg.Add(1)
	go func() { defer s.wg.Done(); _ = s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the address served (with the port chosen for port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the page's address.
func (s *Server) URL() string { return "http://" + s.Addr() + "/" }

// Close stops the server: every page's stream, the listener; it waits
// for them up to ctx's deadline.
func (s *Server) Close(ctx context.Context) error {
	var err error
	s.close.Do(func() {
		s.stop() // ends every response's write under way (streamWriter)
		s.st.closeSubs()
		err = s.srv.Shutdown(ctx)
		if err != nil {
			_ = s.srv.Close()
		}
		done := make(chan struct{})
		go func() { s.wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			err = ctx.Err()
		}
	})
	return err
}

// Drain waits until no page follows the run any more, or ctx ends: after
// State.Finish, each page's stream ends once it has written the last
// message (the figures and the report), so that Close, which follows,
// does not cut it off. A page that stopped reading holds it only until
// ctx's deadline. It says whether every page got the end.
func (s *Server) Drain(ctx context.Context) bool {
	for s.streams.Load() > 0 {
		select {
		case <-s.idle:
		case <-ctx.Done():
			return s.streams.Load() == 0
		}
	}
	return true
}

// streamEnded counts a page's stream out and wakes Drain.
func (s *Server) streamEnded() {
	s.streams.Add(-1)
	select {
	case s.idle <- struct{}{}:
	default:
	}
}

func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	s.respond(w, page)
}

func (s *Server) handleReport(w http.ResponseWriter, r *http.Request) {
	rep := s.st.Report()
	if rep == nil {
		http.Error(w, "the run is still going: the report comes at its end", http.StatusNotFound)
		return
	}
	securityHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	s.respond(w, rep)
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	s.respond(w, s.st.Exposition())
}

// respond writes body as one response, within streamWriteTimeout and
// ended by Close (a reader that stops reading cannot hold the server).
func (s *Server) respond(w http.ResponseWriter, body []byte) {
	sw := &streamWriter{w: w, rc: http.NewResponseController(w)}
	defer context.AfterFunc(s.quit, sw.stop)()
	sw.send(body)
}

// securityHeaders keep the page from loading anything else or running
// anything it did not ship with.
func securityHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; frame-src 'self'; img-src data:")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
}

// handleEvents streams server-sent events: first the history so far, then
// one event a second, then the end.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	if s.streams.Add(1) > maxStreams {
		s.streams.Add(-1)
		http.Error(w, fmt.Sprintf("%d pages already follow this run: close one", maxStreams), http.StatusServiceUnavailable)
		return
	}
	defer s.streamEnded()
	first, ch := s.st.subscribe()
	if ch != nil {
		defer s.st.unsubscribe(ch)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	sw := &streamWriter{w: w, rc: http.NewResponseController(w)}
	defer context.AfterFunc(s.quit, sw.stop)()
	if !sw.send([]byte("data: "), first, []byte("\n\n")) || ch == nil {
		return // finished or closed: the first event said everything
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.quit.Done():
			return
		case msg, open := <-ch:
			if !open || !sw.send([]byte("data: "), msg, []byte("\n\n")) {
				return
			}
		}
	}
}

// streamWriter writes a response (a page's events: one send each), each
// send within streamWriteTimeout (a reader that stops reading is dropped);
// stop ends the write under way and refuses later ones (Close).
type streamWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController

	mu      sync.Mutex
	stopped bool
	writing bool
}

// streamWriteTimeout is how long a page may take to read one event.
const streamWriteTimeout = 10 * time.Second

// send writes parts and flushes them; it says whether the reader is still
// there. The data of an event is JSON on one line: no newline inside.
func (sw *streamWriter) send(parts ...[]byte) bool {
	sw.mu.Lock()
	if sw.stopped {
		sw.mu.Unlock()
		return false
	}
	_ = sw.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	sw.writing = true
	sw.mu.Unlock()
	ok := true
	for _, p := range parts {
		if _, err := sw.w.Write(p); err != nil {
			ok = false
			break
		}
	}
	ok = ok && sw.rc.Flush() == nil
	sw.mu.Lock()
	sw.writing = false
	sw.mu.Unlock()
	return ok
}

// stop makes the write under way fail now (a page that stopped reading)
// and refuses later ones; a page between two events gets the end of the
// stream.
func (sw *streamWriter) stop() {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.stopped = true
	if sw.writing {
		_ = sw.rc.SetWriteDeadline(time.Unix(1, 0))
	}
}

// subscribe returns the event a new page starts with (the history so far)
// and the channel of the next ones (nil when the run is over).
func (s *State) subscribe() ([]byte, chan []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var last *Point
	if n := len(s.history); n > 0 {
		last = &s.history[n-1]
	}
	first := s.messageLocked(last, s.history)
	if s.closed || s.final != nil {
		return first, nil
	}
	ch := make(chan []byte, subBuffer)
	s.subs[ch] = struct{}{}
	return first, ch
}

func (s *State) unsubscribe(ch chan []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.subs[ch]; ok {
		delete(s.subs, ch)
		close(ch)
	}
}

// broadcast sends msg to every page without waiting: a page whose buffer
// is full is dropped.
func (s *State) broadcast(msg []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.subs {
		select {
		case ch <- msg:
		default:
			delete(s.subs, ch)
			close(ch)
		}
	}
}

// closeSubs ends every page's stream (the run is over).
func (s *State) closeSubs() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.endSubsLocked()
}

// sendLast gives every page msg, the last message (Finish), and ends its
// stream after it: a page whose buffer is full loses its oldest message
// instead (msg holds every figure), so that every page gets the end.
func (s *State) sendLast(msg []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.subs {
		select {
		case ch <- msg:
		default:
			select { // only this goroutine sends (s.mu held): room is made
			case <-ch:
			default:
			}
			ch <- msg
		}
	}
	s.endSubsLocked()
}

func (s *State) endSubsLocked() {
	for ch := range s.subs {
		delete(s.subs, ch)
		close(ch)
	}
}

func htmlEscape(s string) string { return html.EscapeString(strings.ToValidUTF8(s, "\uFFFD")) }
