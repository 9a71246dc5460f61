package relaymetrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/testkit"
	"github.com/relaybench/relaybench/results"
)

const page = `# HELP nostr_cmd_event_total EVENT commands
# TYPE nostr_cmd_event_total counter
nostr_cmd_event_total %d
# TYPE nostr_db_connections gauge
nostr_db_connections 3
# TYPE nostr_query_seconds histogram
nostr_query_seconds_bucket{le="0.005"} %d
nostr_query_seconds_bucket{le="+Inf"} %d
nostr_query_seconds_sum %g
nostr_query_seconds_count %d
# TYPE nostr_disconnects_total counter
nostr_disconnects_total{reason="normal",b="x \"q\" \\ y"} 2 1700000000000
this line is not a sample
`

func TestParseReadsSeriesTypesAndSkipsBadLines(t *testing.T) {
	s, bad, err := Parse(strings.NewReader(fmt.Sprintf(page, 10, 1, 2, 0.5, 2)))
	if err != nil || bad != 1 {
		t.Fatalf("err %v, %d bad lines (want 1)", err, bad)
	}
	if s.Values["nostr_cmd_event_total"] != 10 || s.Values[`nostr_disconnects_total{b="x \"q\" \\ y",reason="normal"}`] != 2 {
		t.Fatalf("values: %v", s.Values)
	}
	if _, typ := s.family("nostr_query_seconds_count"); typ != "histogram" {
		t.Fatalf("histogram _count's family type %q", typ)
	}
}

func TestParseBoundsWhatItReads(t *testing.T) {
	var b strings.Builder
	for i := range maxSeries + 1 {
		fmt.Fprintf(&b, "m{i=\"%d\"} 1\n", i)
	}
	if _, _, err := Parse(strings.NewReader(b.String())); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("too many series: %v", err)
	}
	big := strings.Repeat("# "+strings.Repeat("x", 1000)+"\n", maxBody/1000+10)
	if _, _, err := Parse(strings.NewReader(big)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("too big a page: %v", err)
	}
}

// phase is a publish-and-query phase starting at mono time start.
func phase(start int64, sent, accepted, reqs int64) results.Phase {
	ph := results.NewPhase("p", "p")
	ph.Start = mono.Time(start)
	ph.Accounts = []results.Account{
		{Op: results.OpEvent, Requested: sent, Accepted: accepted, TimedOut: sent - accepted},
		{Op: results.OpQuery, Requested: reqs, Accepted: reqs},
	}
	ph.Latency = map[string]*results.Histogram{results.LatencyEOSE: {Count: reqs, Mean: 2e6}}
	return ph
}

func TestRecorderAnnotatesEachPhaseWithDeltasAndBounds(t *testing.T) {
	var events atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := events.Load()
		fmt.Fprintf(w, page, n, n, n, float64(n)*0.001, n)
	}))
	defer srv.Close()
	r := &Recorder{url: srv.URL, client: srv.Client(), stop: func() {}}
	// Window 1: the relay counts every EVENT twice (nostr-rs-relay 0.8.12).
	closed := r.opened()
	events.Add(20)
	closed(1000, 2000)
	// Window 2: as many as sent.
	closed = r.opened()
	events.Add(7)
	closed(5000, 6000)
	run := &results.Run{Phases: []results.Phase{phase(1000, 10, 10, 0), phase(5000+matchSlack/2, 8, 6, 7), phase(9e9, 1, 1, 1)}}
	r.Annotate(run)
	p1, p2, p3 := run.Phases[0], run.Phases[1], run.Phases[2]
	if p1.RelayMetrics["nostr_cmd_event_total"] != 20 || p2.RelayMetrics["nostr_cmd_event_total"] != 7 {
		t.Fatalf("deltas: %v / %v", p1.RelayMetrics, p2.RelayMetrics)
	}
	if p1.RelayMetrics["nostr_db_connections"] != 3 || p1.RelayMetrics[`nostr_query_seconds_bucket{le="+Inf"}`] != 0 {
		t.Fatalf("a gauge is its value, a bucket left out: %v", p1.RelayMetrics)
	}
	if !hasNote(p1, "relay metrics disagree: the relay counted 20 EVENT messages received (nostr_cmd_event_total), 2 times relaybench's 10 … 10") || len(p1.RelayChecks) != 1 || !p1.RelayChecks[0].Disagree {
		t.Errorf("no disagreement for twice the EVENTs: %q %+v", p1.Notes, p1.RelayChecks)
	}
	if !hasNote(p2, "relay metrics: 7 EVENT messages received (nostr_cmd_event_total), within relaybench's 6 … 8") || hasNote(p2, "disagree") {
		t.Errorf("7 of 8 sent, 6 accepted is within: %q", p2.Notes)
	}
	if !hasNote(p2, "relay metrics: mean subscription response time 1.000 ms over 7 (nostr_query_seconds), relaybench's mean REQ→EOSE 2.000 ms over 7") {
		t.Errorf("no timing note: %q", p2.Notes)
	}
	if p3.RelayMetrics != nil || len(p3.Notes) != 0 {
		t.Errorf("a phase without a window got %v %q", p3.RelayMetrics, p3.Notes)
	}
}

func TestFailedReadingsAreSaidNotGuessed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", 500) }))
	defer srv.Close()
	r := &Recorder{url: srv.URL, client: srv.Client(), stop: func() {}}
	r.opened()(1000, 2000)
	run := &results.Run{Phases: []results.Phase{phase(1000, 1, 1, 1)}}
	r.Annotate(run)
	if run.Phases[0].RelayMetrics != nil || len(run.Notes) != 1 || !strings.Contains(run.Notes[0], "2 of 2 readings") {
		t.Fatalf("metrics %v, notes %q", run.Phases[0].RelayMetrics, run.Notes)
	}
}

func TestResolve(t *testing.T) {
	for _, tc := range []struct{ flag, relay, want, bad string }{
		{"/metrics", "ws://127.0.0.1:7777", "http://127.0.0.1:7777/metrics", ""},
		{"/metrics", "wss://relay.example:443/x", "https://relay.example:443/metrics", ""},
		{"http://127.0.0.1:9100/metrics", "ws://127.0.0.1:1", "http://127.0.0.1:9100/metrics", ""},
		{"ftp://x/metrics", "ws://127.0.0.1:1", "", "want the relay's Prometheus metrics URL"},
		{"metrics", "ws://127.0.0.1:1", "", "want the relay's Prometheus metrics URL"},
	} {
		got, err := Resolve(tc.flag, tc.relay)
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("Resolve(%q) = %q, %v", tc.flag, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%q, %q) = %q, %v; want %q", tc.flag, tc.relay, got, err, tc.want)
		}
	}
}

func hasNote(ph results.Phase, sub string) bool {
	for _, n := range ph.Notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

// TestHostileValuesKeepTheResultsFileWritable: NaN and infinite samples
// (which encoding/json cannot write) are not kept, and a counter that went
// down over a window (the relay restarted it) is not a disagreement.
func TestHostileValuesKeepTheResultsFileWritable(t *testing.T) {
	var after atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		events, nan := 500, "1"
		if after.Load() {
			events, nan = 3, "NaN"
		}
		fmt.Fprintf(w, "# TYPE nostr_cmd_event_total counter\nnostr_cmd_event_total %d\n"+
			"# TYPE g gauge\ng +Inf\n# TYPE c counter\nc %s\nd{a=\"1\"} -Inf\n", events, nan)
	}))
	defer srv.Close()
	r := &Recorder{url: srv.URL, client: srv.Client(), stop: func() {}}
	closed := r.opened()
	after.Store(true)
	closed(1000, 2000)
	run := &results.Run{Phases: []results.Phase{phase(1000, 10, 10, 0)}}
	r.Annotate(run)
	if _, err := json.Marshal(run); err != nil {
		t.Fatalf("the results file cannot be written: %v (%v)", err, run.Phases[0].RelayMetrics)
	}
	ph := run.Phases[0]
	if _, ok := ph.RelayMetrics["nostr_cmd_event_total"]; ok || hasNote(ph, "disagree") {
		t.Fatalf("a counter reset was taken for a count: %v %q", ph.RelayMetrics, ph.Notes)
	}
	if !hasNote(ph, "nostr_cmd_event_total went down") {
		t.Errorf("the reset is not said: %q", ph.Notes)
	}
}

// TestHostileStatusIsBounded: a metrics endpoint's error (its status line)
// goes into the run's notes at a bounded length.
func TestHostileStatusIsBounded(t *testing.T) {
	addr := testkit.ServeTCP(t, func(c net.Conn) {
		_, _ = c.Read(make([]byte, 4096))
		fmt.Fprintf(c, "HTTP/1.1 500 %s\r\nContent-Length: 0\r\n\r\n", strings.Repeat("</script>", 100000))
	})
	r := &Recorder{url: "http://" + addr + "/metrics", client: &http.Client{}, stop: func() {}}
	r.opened()(1000, 2000)
	run := &results.Run{Phases: []results.Phase{phase(1000, 1, 1, 1)}}
	r.Annotate(run)
	if len(run.Notes) != 1 || len(run.Notes[0]) > 1000 {
		t.Fatalf("notes: %d, %d bytes", len(run.Notes), len(strings.Join(run.Notes, "")))
	}
}

// TestAnEndpointThatKeepsFailingIsLeftAlone: readings that fail one after
// another (each may take scrapeTimeout at a window's edge) stop after
// maxFailuresInARow; the run's note says so.
func TestAnEndpointThatKeepsFailingIsLeftAlone(t *testing.T) {
	var asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.Error(w, "no", 500)
	}))
	defer srv.Close()
	r := &Recorder{url: srv.URL, client: srv.Client(), stop: func() {}}
	for i := range 10 {
		r.opened()(int64(i)*1000, int64(i)*1000+500)
	}
	if n := asked.Load(); n != maxFailuresInARow {
		t.Fatalf("%d readings asked of an endpoint failing every time, want %d", n, maxFailuresInARow)
	}
	run := &results.Run{Phases: []results.Phase{phase(1000, 1, 1, 1)}}
	r.Annotate(run)
	if len(run.Notes) != 1 || !strings.Contains(run.Notes[0], "4 of 4 readings") || !strings.Contains(run.Notes[0], "not read again") {
		t.Fatalf("notes %q", run.Notes)
	}
}

// TestRedirectToAnotherHostIsRefused: the endpoint may redirect on its own
// host, not send relaybench to another one.
func TestRedirectToAnotherHostIsRefused(t *testing.T) {
	var other atomic.Int64
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.Add(1)
		fmt.Fprint(w, "x_total 1\n")
	}))
	defer elsewhere.Close()
	target := strings.Replace(elsewhere.URL, "127.0.0.1", "localhost", 1) + "/metrics"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/here" {
			fmt.Fprint(w, "y_total 2\n")
			return
		}
		if r.URL.Path == "/local" {
			http.Redirect(w, r, "/here", http.StatusFound)
			return
		}
		http.Redirect(w, r, target, http.StatusFound)
	}))
	defer srv.Close()
	if s, err := Start(context.Background(), srv.URL+"/local").read(); err != nil || s.Values["y_total"] != 2 {
		t.Fatalf("a redirect on the same host: %v %v", s.Values, err)
	}
	r := Start(context.Background(), srv.URL+"/away")
	defer r.Stop()
	if _, err := r.read(); err == nil || other.Load() != 0 {
		t.Fatalf("followed a redirect to %s: err %v, asked %d", target, err, other.Load())
	}
}

// TestInterruptedRunEndsAReadingAtOnce: a reading of an endpoint that does
// not answer ends when the run's context does (Ctrl-C exits at once), not
// at scrapeTimeout.
func TestInterruptedRunEndsAReadingAtOnce(t *testing.T) {
	asked, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(asked)
		select { // never answers
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	r := Start(ctx, srv.URL)
	defer r.Stop()
	errc := make(chan error, 1)
	go func() { _, err := r.scrape(); errc <- err }()
	<-asked
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("the reading ended with %v, not the run's end", err)
	}
}

// TestWindowsKeepDeltasNotReadings: a window keeps at most maxKept series
// (what the relay counted over it), not its two readings, which may hold
// maxSeries series of a 4 MB page each: a run of many windows holds
// little whatever the page.
func TestWindowsKeepDeltasNotReadings(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := n.Add(1)
		for i := range maxSeries - 1 {
			fmt.Fprintf(w, "s%d_total{l=\"%s\"} %d\n", i, strings.Repeat("x", 100), v)
		}
	}))
	defer srv.Close()
	r := &Recorder{url: srv.URL, client: srv.Client(), stop: func() {}}
	for i := range 3 {
		r.opened()(int64(i)*1000, int64(i)*1000+500)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, w := range r.windows {
		if w.err != "" || len(w.delta) != maxKept {
			t.Fatalf("window %d: %q, %d series kept, want %d", i, w.err, len(w.delta), maxKept)
		}
	}
}
