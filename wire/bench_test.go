package wire

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/relaybench/relaybench/relay/sink"
)

// Benchmarks publish 1 KiB events over 8 connections to the sink relay.
//
// Where the sink runs is chosen with WIRE_BENCH_SINK:
//
//	""/"inproc"  in this process (httptest on 127.0.0.1): cpu-µs/ev then
//	             counts client AND sink, which share the process.
//	"proc"       a child process (this test binary re-executed): client and
//	             sink CPU are measured separately.
//	"ws://…"     an already running sink (e.g. relaybench relay serve -store sink).
//
//	go test ./wire -run '^$' -bench Publish -benchtime 200000x
//	WIRE_BENCH_SINK=proc go test ./wire -run '^$' -bench Publish -benchtime 200000x

const (
	benchConns   = 8
	benchEvSize  = 1024
	benchPerConn = 8192 // distinct pre-built events per connection, reused cyclically
	benchWindow  = 512  // pipelined: events in flight per connection
)

func TestMain(m *testing.M) {
	if os.Getenv("WIRE_SINK_CHILD") == "1" {
		runSinkChild()
		return
	}
	os.Exit(m.Run())
}

// runSinkChild serves the sink on 127.0.0.1, prints its URL and exits when
// stdin closes (the parent died or is done).
func runSinkChild() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	go http.Serve(l, sink.New(sink.Options{}))
	fmt.Println("ws://" + l.Addr().String())
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

type benchSink struct {
	url     string
	mode    string
	sinkCPU func() time.Duration // nil when not measurable separately
	stop    func()
}

func startBenchSink(b *testing.B) *benchSink {
	mode := os.Getenv("WIRE_BENCH_SINK")
	switch {
	case mode == "" || mode == "inproc":
		srv := httptest.NewServer(sink.New(sink.Options{}))
		return &benchSink{url: "ws" + strings.TrimPrefix(srv.URL, "http"), mode: "inproc", stop: srv.Close}
	case mode == "proc":
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "WIRE_SINK_CHILD=1")
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		line := make(chan string, 1)
		go func() {
			l, _ := bufio.NewReader(stdout).ReadString('\n')
			line <- strings.TrimSpace(l)
		}()
		var url string
		select {
		case url = <-line:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			b.Fatal("sink child did not start")
		}
		if !strings.HasPrefix(url, "ws://") {
			cmd.Process.Kill()
			b.Fatalf("sink child: %q", url)
		}
		pid := cmd.Process.Pid
		return &benchSink{url: url, mode: "proc",
			sinkCPU: func() time.Duration { return procCPU(pid) },
			stop: func() {
				stdin.Close()
				done := make(chan struct{})
				go func() { cmd.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(5 * time.Second):
					cmd.Process.Kill()
					<-done
				}
			}}
	default:
		return &benchSink{url: mode, mode: "external", stop: func() {}}
	}
}

// selfCPU is this process's user+system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU reads utime+stime of pid from /proc (clock ticks of 10 ms).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

type benchEvent struct {
	id  string
	raw []byte
}

// benchEvents builds n well-formed, unsigned ~1 KiB events with distinct ids.
func benchEvents(conn, n int) []benchEvent {
	evs := make([]benchEvent, n)
	for i := range evs {
		id := fmt.Sprintf("%056x%08x", conn, i)
		head := `{"id":"` + id + `","pubkey":"` + strings.Repeat("7", 64) + `","created_at":1700000000,"kind":1,"tags":[["t","bench"]],"content":"`
		tail := `","sig":"` + strings.Repeat("5", 128) + `"}`
		content := strings.Repeat("x", benchEvSize-len(head)-len(tail))
		evs[i] = benchEvent{id: id, raw: []byte(head + content + tail)}
	}
	return evs
}

type benchRun struct {
	b      *testing.B
	sink   *benchSink
	conns  []*Conn
	evs    [][]benchEvent
	cpu0   time.Duration
	sink0  time.Duration
	start  time.Time
	okN    atomic.Int64
	badN   atomic.Int64
	badMsg atomic.Value
}

func newBenchRun(b *testing.B) *benchRun {
	r := &benchRun{b: b, sink: startBenchSink(b)}
	b.Cleanup(r.sink.stop)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conns, err := DialPool(ctx, r.sink.url, benchConns, Options{})
	if err != nil {
		b.Fatal(err)
	}
	r.conns = conns
	b.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for i := range conns {
		r.evs = append(r.evs, benchEvents(i, benchPerConn))
	}
	b.SetBytes(benchEvSize)
	b.ResetTimer()
	r.cpu0 = selfCPU()
	if r.sink.sinkCPU != nil {
		r.sink0 = r.sink.sinkCPU()
	}
	r.start = time.Now()
	return r
}

func (r *benchRun) check(ok OK) {
	if ok.Err != nil || !ok.Accepted {
		r.badN.Add(1)
		r.badMsg.Store(fmt.Sprintf("%+v", ok))
		return
	}
	r.okN.Add(1)
}

func (r *benchRun) finish() {
	b := r.b
	el := time.Since(r.start)
	cpu := selfCPU() - r.cpu0
	b.StopTimer()
	n := int64(b.N)
	if bad := r.badN.Load(); bad != 0 {
		b.Fatalf("%d events without an accepting OK, e.g. %v", bad, r.badMsg.Load())
	}
	if got := r.okN.Load(); got != n {
		b.Fatalf("%d OKs matched for %d events", got, n)
	}
	var writes int64
	for _, c := range r.conns {
		st := c.Stats()
		if st.UnmatchedOK != 0 || st.Malformed != 0 {
			b.Fatalf("connection stats %+v", st)
		}
		writes += st.Writes
	}
	b.ReportMetric(float64(n)/float64(writes), "events/write")
	b.ReportMetric(float64(n)/el.Seconds(), "events/s")
	if r.sink.mode == "inproc" {
		b.ReportMetric(float64(cpu.Microseconds())/float64(n), "client+sink-cpu-µs/ev")
	} else {
		b.ReportMetric(float64(cpu.Microseconds())/float64(n), "client-cpu-µs/ev")
	}
	if r.sink.sinkCPU != nil {
		b.ReportMetric(float64((r.sink.sinkCPU()-r.sink0).Microseconds())/float64(n), "sink-cpu-µs/ev")
	}
}

// perConn runs fn on every connection at once, with its events and its
// share of b.N, then reports the run.
func (r *benchRun) perConn(fn func(c *Conn, evs []benchEvent, n int)) {
	var wg sync.WaitGroup
	for i, c := range r.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(c, r.evs[i], share(r.b.N, i))
		}()
	}
	wg.Wait()
	r.finish()
}

// share splits b.N events over the connections.
func share(n, i int) int {
	s := n / benchConns
	if i < n%benchConns {
		s++
	}
	return s
}

// BenchmarkPublishWaitOK: each of 8 connections publishes and waits for the
// OK before sending the next event.
func BenchmarkPublishWaitOK(b *testing.B) {
	r := newBenchRun(b)
	r.perConn(func(c *Conn, evs []benchEvent, n int) {
		ctx := context.Background()
		for k := range n {
			e := &evs[k%len(evs)]
			ok, _ := c.Publish(ctx, e.id, e.raw)
			r.check(ok)
		}
	})
}

// BenchmarkPublishPipelined: each of 8 connections keeps up to 512 events in
// flight; every OK is read and matched before the run ends.
func BenchmarkPublishPipelined(b *testing.B) {
	r := newBenchRun(b)
	r.perConn(func(c *Conn, evs []benchEvent, n int) {
		window := make(chan struct{}, benchWindow)
		var acked sync.WaitGroup
		acked.Add(n)
		done := func(ok OK) {
			r.check(ok)
			<-window
			acked.Done()
		}
		for k := range n {
			e := &evs[k%len(evs)]
			window <- struct{}{}
			if err := c.SendEvent(e.id, e.raw, done); err != nil {
				r.check(OK{Err: err})
				<-window
				acked.Done()
			}
		}
		acked.Wait()
	})
}

// BenchmarkRawLibraryWaitReply is the reference for BenchmarkPublishWaitOK:
// the same frames and sink, but a bare coder/websocket loop (write, read the
// reply, check it is an OK) on 8 connections with no matching, no reader
// goroutine and no parsing. The gap between the two is this client's cost.
func BenchmarkRawLibraryWaitReply(b *testing.B) {
	s := startBenchSink(b)
	b.Cleanup(s.stop)
	var conns []*websocket.Conn
	for range benchConns {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ws, _, err := websocket.Dial(ctx, s.url, &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { ws.CloseNow() })
		conns = append(conns, ws)
	}
	frames := make([][][]byte, benchConns)
	for i := range frames {
		for _, e := range benchEvents(i, benchPerConn) {
			frames[i] = append(frames[i], append(append([]byte(`["EVENT",`), e.raw...), ']'))
		}
	}
	b.SetBytes(benchEvSize)
	b.ResetTimer()
	cpu0 := selfCPU()
	start := time.Now()
	var bad atomic.Int64
	var wg sync.WaitGroup
	for i, ws := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			buf := make([]byte, 4096)
			for k := range share(b.N, i) {
				if err := ws.Write(ctx, websocket.MessageText, frames[i][k%benchPerConn]); err != nil {
					bad.Add(1)
					return
				}
				_, r, err := ws.Reader(ctx)
				if err != nil {
					bad.Add(1)
					return
				}
				n, _ := io.ReadFull(r, buf)
				if n < 6 || string(buf[:6]) != `["OK",` {
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	cpu := selfCPU() - cpu0
	b.StopTimer()
	if bad.Load() != 0 {
		b.Fatalf("%d replies missing or not OK", bad.Load())
	}
	b.ReportMetric(float64(b.N)/el.Seconds(), "events/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/ev")
}
