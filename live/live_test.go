package live

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
)

// hostile is a relay name no output may pass through raw: a quote, a
// backslash, a line feed, markup and invalid UTF-8.
const hostile = "evil\"relay\\\n</script><img src=x onerror=alert(1)>\xff"

// sample is one parsed exposition line.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// parseExposition parses the text format strictly: every sample belongs
// to the family of the last TYPE line (its name, or name_bucket/_sum/_count
// of a histogram), each family appears once, and label values are
// unescaped as the format says.
func parseExposition(t *testing.T, text string) []sample {
	t.Helper()
	var out []sample
	seen := map[string]bool{}
	family, typ := "", ""
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			f := strings.Fields(rest)
			if len(f) != 2 || seen[f[0]] {
				t.Fatalf("line %d: bad or repeated TYPE: %q", i+1, line)
			}
			family, typ, seen[f[0]] = f[0], f[1], true
			continue
		}
		if strings.HasPrefix(line, "# HELP ") {
			continue
		}
		s := parseSample(t, i+1, line)
		okName := s.name == family
		if typ == "histogram" {
			okName = okName || s.name == family+"_bucket" || s.name == family+"_sum" || s.name == family+"_count"
		}
		if !okName {
			t.Fatalf("line %d: sample %s outside its family (last TYPE %s)", i+1, s.name, family)
		}
		out = append(out, s)
	}
	return out
}

func parseSample(t *testing.T, n int, line string) sample {
	t.Helper()
	open := strings.IndexByte(line, '{')
	if open < 0 {
		t.Fatalf("line %d: no labels: %q", n, line)
	}
	s := sample{name: line[:open], labels: map[string]string{}}
	i := open + 1
	for line[i] != '}' {
		eq := strings.Index(line[i:], `="`)
		if eq < 0 {
			t.Fatalf("line %d: bad label at %d: %q", n, i, line)
		}
		key := line[i : i+eq]
		i += eq + 2
		var v strings.Builder
		for ; line[i] != '"'; i++ {
			if line[i] == '\\' {
				i++
				switch line[i] {
				case 'n':
					v.WriteByte('\n')
				case '\\', '"':
					v.WriteByte(line[i])
				default:
					t.Fatalf("line %d: bad escape \\%c", n, line[i])
				}
				continue
			}
			v.WriteByte(line[i])
		}
		s.labels[key] = v.String()
		i++
		if line[i] == ',' {
			i++
		}
	}
	val, err := strconv.ParseFloat(strings.TrimSpace(line[i+1:]), 64)
	if err != nil || line[i+1] != ' ' {
		t.Fatalf("line %d: bad value: %q", n, line)
	}
	s.value = val
	return s
}

// find returns the value of the one sample called name with labels want.
func find(t *testing.T, ss []sample, name string, want map[string]string) (float64, bool) {
	t.Helper()
	var got []float64
	for _, s := range ss {
		if s.name != name {
			continue
		}
		match := true
		for k, v := range want {
			if s.labels[k] != v {
				match = false
			}
		}
		if match {
			got = append(got, s.value)
		}
	}
	if len(got) > 1 {
		t.Fatalf("%s%v: %d samples", name, want, len(got))
	}
	if len(got) == 0 {
		return 0, false
	}
	return got[0], true
}

// latencyPhase is a finished phase with an account and an HDR latency.
func latencyPhase(name string, values ...int64) results.Phase {
	h := metrics.NewHistogram()
	for _, v := range values {
		h.Record(v)
	}
	ph := results.NewPhase(name, name)
	ph.Accounts = []results.Account{{Op: results.OpEvent, Requested: int64(len(values)) + 1, Accepted: int64(len(values)), TimedOut: 1}}
	ph.Latency = map[string]*results.Histogram{"ok": h.Result()}
	ph.Verification = &results.Verification{Verified: true, Checked: 5, Missing: 2, State: results.VerificationFailed}
	return ph
}

func TestExpositionParsesBackWithHostileRelay(t *testing.T) {
	st := New(Options{Run: "run-1"})
	defer st.Close()
	st.SetRelay(hostile, 0)
	l := outcome.New(results.OpEvent, 10)
	l.AddN(outcome.Accepted, "", 7)
	l.AddN(outcome.Refused, "blocked", 2)
	se := metrics.NewSeries(mono.Now() - 5e9)
	se.Latency(mono.Now()-3e9, 2e6) // a completed second
	st.Tick()
	ss := parseExposition(t, string(st.Exposition()))
	wantRelay := strings.ToValidUTF8(hostile, "\uFFFD")
	cur := map[string]string{"run": "run-1", "relay": wantRelay, "phase": "current", "outcome": "accepted"}
	if v, ok := find(t, ss, "relaybench_operations_total", cur); !ok || v != 7 {
		t.Fatalf("current accepted = %v (found %v), want 7, the ledger's", v, ok)
	}
	if v, _ := find(t, ss, "relaybench_latency_seconds_count", map[string]string{"phase": "current"}); v != 1 {
		t.Fatalf("live latency count = %v, want the series' 1", v)
	}

	st.PhaseDone(latencyPhase("publish", 1e6, 2e6, 3e6, 40e6))
	ss = parseExposition(t, string(st.Exposition()))
	ph := map[string]string{"relay": wantRelay, "phase": "publish", "op": "event"}
	for oc, want := range map[string]float64{"accepted": 4, "timed_out": 1, "refused": 0} {
		if v, _ := find(t, ss, "relaybench_operations_total", with(ph, "outcome", oc)); v != want {
			t.Errorf("publish %s = %v, want %v", oc, v, want)
		}
	}
	if v, _ := find(t, ss, "relaybench_operations_total", with(cur, "phase", "current")); v != 0 {
		t.Errorf("current accepted after the phase ended = %v: the ledger was the phase's", v)
	}
	lat := map[string]string{"phase": "publish", "latency": "ok"}
	for le, want := range map[string]float64{"0.001": 1, "0.0025": 2, "0.005": 3, "0.025": 3, "0.05": 4, "+Inf": 4} {
		if v, _ := find(t, ss, "relaybench_latency_seconds_bucket", with(lat, "le", le)); v != want {
			t.Errorf("bucket le=%s = %v, want %v", le, v, want)
		}
	}
	if v, _ := find(t, ss, "relaybench_verification_faults_total", map[string]string{"phase": "publish", "fault": "missing"}); v != 2 {
		t.Errorf("missing = %v, want 2", v)
	}
}

func with(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for a, b := range m {
		if a != k {
			out[a] = b
		}
	}
	return out
}

func TestHistoryIsBoundedAndKeepsTheStart(t *testing.T) {
	st := New(Options{Run: "r", HistoryCap: 10})
	defer st.Close()
	for range 1000 {
		st.Tick()
	}
	h := st.History()
	if len(h) > 10 || len(h) < 5 {
		t.Fatalf("%d points kept, want 5 to 10", len(h))
	}
	for i := 1; i < len(h); i++ {
		if h[i].T < h[i-1].T {
			t.Fatalf("points out of order at %d", i)
		}
	}
	if st.stride < 64 {
		t.Fatalf("stride %d after 1000 ticks into 10 points", st.stride)
	}
}

func TestParseAddr(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		any      bool
		bad      string
	}{
		{in: "8080", want: "127.0.0.1:8080"},
		{in: ":8080", want: "127.0.0.1:8080"},
		{in: "localhost:9", want: "localhost:9"},
		{in: "[::1]:9", want: "[::1]:9"},
		{in: "0.0.0.0:9", bad: "not a loopback address"},
		{in: "0.0.0.0:9", any: true, want: "0.0.0.0:9"},
		{in: "example.org:80", bad: "not a loopback address"},
		{in: "99999", bad: "from 0 to 65535"},
		{in: "a:b:c", bad: "want a port"},
		{in: "", bad: "give a port"},
	} {
		got, err := ParseAddr(tc.in, tc.any)
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) || strings.Contains(err.Error(), "\n") {
				t.Errorf("ParseAddr(%q) = %q, %v; want one-line error with %q", tc.in, got, err, tc.bad)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseAddr(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// readEvent reads one server-sent event's data.
func readEvent(t *testing.T, r *bufio.Reader) message {
	t.Helper()
	var data string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("event stream: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		if line == "" && data != "" {
			break
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data += d
		}
	}
	if strings.ContainsAny(data, "<>") {
		t.Fatalf("event data holds raw < or >: %s", data)
	}
	var m message
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("event data: %v: %s", err, data)
	}
	return m
}

// serveRun is a State of run "r" served on a free port of 127.0.0.1; the
// server, then the State, close when the test ends.
func serveRun(t *testing.T) (*State, *Server) {
	t.Helper()
	return serveRunOf(t, Options{Run: "r"})
}

// serveRunOf is serveRun with the State's options o.
func serveRunOf(t *testing.T, o Options) (*State, *Server) {
	t.Helper()
	st := New(o)
	t.Cleanup(st.Close)
	srv, err := Serve(st, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	return st, srv
}

// drainAndClose ends srv as the run's end does: Drain (within ctx) until
// every page's stream has ended, then Close (a hang guard of 20 s).
func drainAndClose(t *testing.T, ctx context.Context, srv *Server) {
	t.Helper()
	if !srv.Drain(ctx) {
		t.Fatal("Drain: the page's stream did not end")
	}
	cctx, ccancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer ccancel()
	if err := srv.Close(cctx); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// follow opens srv's event stream as a page does, until ctx ends; its
// body closes when the test ends.
func follow(t *testing.T, ctx context.Context, srv *Server) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL()+"events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, bufio.NewReader(resp.Body)
}

func TestEventStreamHistoryUpdatesReportAndShutdown(t *testing.T) {
	st, srv := serveRun(t)
	st.SetRelay(hostile, 0)
	l := outcome.New(results.OpQuery, 100)
	for range 5 {
		l.AddN(outcome.Accepted, "", 3)
		st.Tick()
	}
	st.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // hang guard
	defer cancel()
	resp, br := follow(t, ctx, srv)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	first := readEvent(t, br)
	if len(first.History) < 5 || first.Relay != strings.ToValidUTF8(hostile, "\uFFFD") {
		t.Fatalf("first event: %d points of history (want ≥ 5), relay %q", len(first.History), first.Relay)
	}
	if got := first.History[len(first.History)-1].Outcomes["accepted"]; got != 15 {
		t.Fatalf("history's last accepted = %d, want 15", got)
	}
	l.AddN(outcome.Accepted, "", 1)
	for { // the server's own ticks: wait for one that saw the new operation
		m := readEvent(t, br)
		if m.Point != nil && m.Point.Outcomes["accepted"] == 16 {
			break
		}
	}
	st.Finish(finishedFile())
	for {
		if m := readEvent(t, br); m.Finished {
			if len(m.Phases) != 1 || m.Phases[0].Outcomes["accepted"] != 1 || len(m.Failures) != 1 {
				t.Fatalf("final event: %+v", m)
			}
			break
		}
	}
	rep := get(t, srv.URL()+"report")
	if !strings.Contains(rep, "<!DOCTYPE html>") || strings.Contains(rep, "<img src=x") {
		t.Fatalf("report: not the HTML report, or the relay's markup unescaped")
	}
	page := get(t, srv.URL())
	if strings.Contains(page, "innerHTML") || strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Fatal("the page writes markup from strings or loads something from elsewhere")
	}
	// As the run's end does: the page's stream ends once it wrote the
	// last message (Drain), then the server closes; closed while the last
	// write was still under way, the stream would be cut short.
	drainAndClose(t, ctx, srv)
	if _, err := io.ReadAll(br); err != nil { // ends (EOF), not hangs: the hang guard is ctx
		t.Fatalf("stream after close: %v", err)
	}
}

func TestSlowPageNeverBlocksTheTicks(t *testing.T) {
	st := New(Options{Run: "r"})
	defer st.Close()
	_, ch := st.subscribe() // a page that never reads
	for range 10 * subBuffer {
		st.Tick()
	}
	st.mu.Lock()
	n := len(st.subs)
	st.mu.Unlock()
	if n != 0 {
		t.Fatal("a page that stopped reading is still subscribed")
	}
	got := 0
	for range ch {
		got++
	}
	if got != subBuffer {
		t.Fatalf("the page got %d events before being dropped, want %d", got, subBuffer)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	c := http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		fmt.Fprintln(&b, sc.Text())
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	return b.String()
}

// TestConcurrentFeedsAndReaders books operations and latencies from
// several goroutines while the State ticks, exposes and finishes phases
// (run it with -race): the readers copy, the writers never wait on them.
func TestConcurrentFeedsAndReaders(t *testing.T) {
	st := New(Options{Run: "r"})
	defer st.Close()
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := outcome.New(results.OpEvent, 0)
			se := metrics.NewSeries(mono.Now() - 3e9)
			up := st.Progress(fmt.Sprintf("worker %d", w), 1000)
			for i := int64(1); ; i++ {
				select {
				case <-done:
					return
				default:
				}
				l.Request(1)
				l.Add(outcome.Accepted, "")
				se.Latency(mono.Now()-int64(i%3)*1e9, i)
				up(i)
				if i%100 == 0 {
					st.faultFound(verify.Found{Kind: verify.FoundInvalid, N: 1, Raw: []byte("x")})
				}
			}
		}()
	}
	for i := range 50 {
		st.Tick()
		parseExposition(t, string(st.Exposition()))
		if i%10 == 0 {
			st.PhaseDone(latencyPhase(fmt.Sprintf("p%d", i), 1e6))
		}
		if i%7 == 0 {
			st.SetRelayUsage(fmt.Sprintf("relay %d", i), func() (float64, int64, bool) { return float64(i), 1, true })
		}
	}
	close(done)
	wg.Wait()
	if len(st.Phases()) != 5 {
		t.Fatalf("%d phases", len(st.Phases()))
	}
}

// BenchmarkTick is the live view's cost per second of a run: one tick over
// a phase of three ledgers and a series with 1,000 latencies in its last
// completed second, then one /metrics exposition (a scrape a second).
func BenchmarkTick(b *testing.B) {
	st := New(Options{Run: "r"})
	defer st.Close()
	for range 3 {
		outcome.New(results.OpEvent, 1000).AddN(outcome.Accepted, "", 900)
	}
	se := metrics.NewSeries(mono.Now() - 3600e9)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		for j := range 1000 {
			se.Latency(se.Start()+int64(i)*1e9+int64(j)*1e6, int64(j+1)*1e4)
		}
		b.StartTimer()
		st.Tick()
		_ = st.Exposition()
	}
}

// TestCloseEndsAResponseWhoseReaderStopped: a page that opened /events,
// or a scraper that asked for /metrics, and never reads leaves the server
// blocked writing to it; Close must end that write at once, not wait for
// its context (the process exits within a second of Ctrl-C).
func TestCloseEndsAResponseWhoseReaderStopped(t *testing.T) {
	for _, path := range []string{"/events", "/metrics"} {
		t.Run(path, func(t *testing.T) { closeWithStalledReader(t, path) })
	}
}

func closeWithStalledReader(t *testing.T, path string) {
	st, srv := serveRun(t)
	st.SetRelay(strings.Repeat("x", 16<<20), 0) // a response larger than any socket buffer
	conn, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// The response has begun: its first bytes arrive (the rest cannot).
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute)) // hang guard
	if _, err := io.ReadFull(conn, make([]byte, 12)); err != nil {
		t.Fatalf("no response: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // hang guard
	defer cancel()
	if err := srv.Close(ctx); err != nil {
		t.Fatalf("close waited for the stalled reader until its deadline: %v", err)
	}
}

// TestStreamsAreBounded: past maxStreams pages following the run, another
// is refused (each would get the whole history encoded); one that leaves
// makes room.
func TestStreamsAreBounded(t *testing.T) {
	_, srv := serveRun(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // hang guard
	defer cancel()
	open := func() *http.Response {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL()+"events", nil)
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	var pages []*http.Response
	for range maxStreams {
		resp := open()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("page %d refused: %s", len(pages)+1, resp.Status)
		}
		pages = append(pages, resp)
	}
	resp := open()
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("page %d: %s, want 503", maxStreams+1, resp.Status)
	}
	pages[0].Body.Close()
	deadline := time.Now().Add(time.Minute) // hang guard: the server sees the page leave
	for {
		resp := open()
		if resp.StatusCode == http.StatusOK {
			resp.Body.Close()
			break
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("a page that left made no room")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, p := range pages[1:] {
		p.Body.Close()
	}
}
