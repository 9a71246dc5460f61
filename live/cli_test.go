package live

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testkit"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
)

// The tests here run the real CLI (built once) with --web against the
// embedded relay; RELAYBENCH_INTEGRATION=1 runs them (scripts/test does).

func cliBin(t *testing.T) string {
	t.Helper()
	if os.Getenv("RELAYBENCH_INTEGRATION") != "1" {
		t.Skip("set RELAYBENCH_INTEGRATION=1 (scripts/test does) to run the CLI with --web")
	}
	bin, err := testkit.Relaybench()
	if err != nil {
		t.Fatalf("build relaybench: %v", err)
	}
	return bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.RemoveRelaybench()
	os.Exit(code)
}

// cliRun is relaybench running with --web.
type cliRun struct {
	cmd    *exec.Cmd
	base   string // http://127.0.0.1:PORT/
	out    string // --out folder
	ended  chan struct{}
	stderr strings.Builder
	mu     sync.Mutex
}

// startWebRun starts relaybench with args plus --web on a free loopback
// port, kept 5 minutes after the run (the test ends it with Ctrl-C), and
// returns once it said where the page is.
func startWebRun(t *testing.T, args ...string) *cliRun {
	t.Helper()
	r := &cliRun{out: t.TempDir(), ended: make(chan struct{})}
	args = append(args, "--out", r.out, "--no-progress", "--quiet", "--cache-dir", "off", "--web", "0", "--web-keep", "5m")
	r.cmd = exec.Command(cliBin(t), args...)
	r.cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	pipe, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	base := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			r.mu.Lock()
			r.stderr.WriteString(line + "\n")
			r.mu.Unlock()
			if u, ok := strings.CutPrefix(line, "Live view: "); ok {
				base <- strings.Fields(u)[0]
			}
		}
		r.cmd.Wait()
		close(r.ended)
	}()
	t.Cleanup(func() { r.cmd.Process.Kill(); <-r.ended })
	select {
	case r.base = <-base:
	case <-r.ended:
		t.Fatalf("relaybench ended before serving: %s", r.errText())
	case <-time.After(2 * time.Minute): // hang guard
		t.Fatal("relaybench never said where the live view is")
	}
	return r
}

func (r *cliRun) errText() string { r.mu.Lock(); defer r.mu.Unlock(); return r.stderr.String() }

// scrape reads /metrics, parsed strictly.
func (r *cliRun) scrape(t *testing.T) []sample {
	t.Helper()
	c := http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(r.base + "metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return parseExposition(t, string(b))
}

// sumOps adds up relaybench_operations_total samples with outcome oc.
func sumOps(ss []sample, oc string) float64 {
	var n float64
	for _, s := range ss {
		if s.name == "relaybench_operations_total" && s.labels["outcome"] == oc {
			n += s.value
		}
	}
	return n
}

// finished says whether the scrape says the run ended.
func finished(t *testing.T, ss []sample) bool {
	v, _ := find(t, ss, "relaybench_run_finished", nil)
	return v == 1
}

// results reads the one results file the run wrote.
func (r *cliRun) results(t *testing.T) *results.File {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(r.out, "*.json"))
	if len(m) != 1 {
		t.Fatalf("results files: %v", m)
	}
	return testkit.ReadResults(t, m[0])
}

// stop sends Ctrl-C and wants exit status want: 130 during the run, the
// run's own status once it ended (Ctrl-C then only ends --web-keep).
func (r *cliRun) stop(t *testing.T, want int) {
	t.Helper()
	r.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-r.ended:
	case <-time.After(time.Minute): // hang guard
		t.Fatal("relaybench did not end after Ctrl-C")
	}
	if c := r.cmd.ProcessState.ExitCode(); c != want {
		t.Fatalf("exit status %d, want %d: %s", c, want, r.errText())
	}
}

// keepLine waits for the line --web-keep says after the verdict: where the
// page is served, until when, and that Ctrl-C ends it.
func (r *cliRun) keepLine(t *testing.T) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // hang guard
	for {
		for _, l := range strings.Split(r.errText(), "\n") {
			if strings.HasPrefix(l, "Serving the final page at "+r.base) {
				return l
			}
		}
		select {
		case <-r.ended:
			t.Fatalf("relaybench ended without serving the final page: %s", r.errText())
		case <-time.After(50 * time.Millisecond): // polling pace
		}
		if time.Now().After(deadline) {
			t.Fatalf("no line about --web-keep: %s", r.errText())
		}
	}
}

// stopKeep ends --web-keep after a finished run with Ctrl-C: the exit
// status is the run's verdict's, said in one line, never "interrupted".
func (r *cliRun) stopKeep(t *testing.T, f *results.File) {
	t.Helper()
	l := r.keepLine(t)
	if !strings.Contains(l, "until ") || !strings.Contains(l, "Ctrl-C") || !strings.Contains(l, fmt.Sprintf("(%d)", f.Verdict.Status)) {
		t.Errorf("the --web-keep line does not say until when, Ctrl-C and the run's status %d: %s", f.Verdict.Status, l)
	}
	r.stop(t, f.Verdict.Status)
	e := r.errText()
	if strings.Contains(e, "interrupted") || !strings.Contains(e, fmt.Sprintf("interrupt after the run: the live view stops; the exit status is the run's (%d)", f.Verdict.Status)) {
		t.Errorf("Ctrl-C after the run: %s", e)
	}
}

// wantCounts checks that every account of every phase in f has its
// outcomes in ss as relaybench_operations_total, and nothing else is
// there.
func wantCounts(t *testing.T, ss []sample, f *results.File) {
	t.Helper()
	var total float64
	for _, run := range f.Runs {
		for _, ph := range run.Phases {
			for _, a := range ph.Accounts {
				for i, n := range accountCounts(a) {
					l := map[string]string{"phase": ph.Name, "op": a.Op, "outcome": outcomeNames[i]}
					if v, ok := find(t, ss, "relaybench_operations_total", l); !ok || v != float64(n) {
						t.Errorf("%v = %v (found %v), results file says %d", l, v, ok, n)
					}
					total += float64(n)
				}
			}
		}
	}
	if got := sumOps(ss, "accepted") + sumOps(ss, "refused") + sumOps(ss, "timed_out") + sumOps(ss, "conn_lost") + sumOps(ss, "not_run") + sumOps(ss, "cancelled"); got != total || total == 0 {
		t.Errorf("/metrics has %v operations, the results file %v", got, total)
	}
}

// mixedArgs is a small run of several phases whose timed parts last 12 s
// whatever the machine's speed: long enough for a browser started beside
// it on a saturated machine to see it move.
var mixedArgs = []string{"mixed", "--duration", "4s", "--publish-rate", "200", "--query-rate", "20"}

// TestWebDuringARealRun runs relaybench mixed with --web and watches it
// from every side at once: /metrics scraped during and after the run, the
// page in headless Chromium, a real Prometheus scraping /metrics. During
// the run the figures must change; after it they must be the results
// file's.
func TestWebDuringARealRun(t *testing.T) {
	cliBin(t)
	var prom *promServer
	args := mixedArgs
	if bin, err := exec.LookPath("prometheus"); err != nil {
		t.Log("prometheus not installed (apt-get install -y prometheus): skipping its part")
	} else {
		prom = startPrometheus(t, bin)
		args = append(append([]string(nil), mixedArgs...), "--prometheus-rw", prom.base+"/api/v1/write")
	}
	r := startWebRun(t, args...)
	if prom != nil {
		prom.scrape(t, r.base)
	}
	var br *browser
	if bin := chromiumBin(); bin == "" {
		t.Log("chromium not installed (apt-get install -y chromium): skipping the browser part")
	} else {
		br = openBrowser(t, bin, r.base)
	}
	scraped, shown, phases, parts := map[float64]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	deadline := time.Now().Add(5 * time.Minute) // hang guard
	for {
		ss := r.scrape(t)
		if finished(t, ss) {
			break
		}
		scraped[sumOps(ss, "accepted")] = true
		if br != nil {
			if f := br.figures(t); f.Status == "running" {
				shown[f.Accepted] = true
				phases[f.Phase] = true
				if strings.HasPrefix(f.Phase, "mixed: ") && strings.Contains(f.Progress, "now: ") {
					parts[f.Progress[strings.Index(f.Progress, "now: "):]] = true
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never finished: %s", r.errText())
		}
		time.Sleep(200 * time.Millisecond) // polling pace, not a synchronisation
	}
	if len(scraped) < 2 {
		t.Errorf("/metrics during the run showed %d distinct accepted counts, want them to change", len(scraped))
	}
	f := r.results(t)
	wantCounts(t, r.scrape(t), f)
	if br != nil {
		if len(shown) < 2 {
			t.Errorf("the page during the run showed %d distinct accepted counts (%v), want them to change", len(shown), shown)
		}
		// The mixed phase under way shows as its plan ("mixed: 1,760
		// operations in three parts of 4s each"), with the part under way
		// ("now: together (4s)"): parts of 4 s each, the page polled every
		// 200 ms, see at least one.
		var mixed bool
		for p := range phases {
			mixed = mixed || strings.HasPrefix(p, "mixed: ")
		}
		if !mixed || len(parts) == 0 {
			t.Errorf("the page during the run never showed the mixed phase under way with its part: phases %v, parts %v", phases, parts)
		}
		// Its latency chart plotted the query parts' EOSE latency apart
		// from the publishes' OK latency (it had OK latency only).
		var kinds []string
		if br.eval(t, "latencyKinds()", &kinds); !slices.Contains(kinds, "EOSE") || !slices.Contains(kinds, "OK") {
			t.Errorf("the page's latency chart plotted %v, want OK and EOSE", kinds)
		}
		checkPageAfter(t, br, f)
	}
	if prom != nil {
		prom.check(t, f, `job="relaybench"`) // scraped
		prom.check(t, f, `job=""`)           // pushed by remote write
		for _, e := range grafanaExprs(t) {
			if prom.query(t, e) == nil {
				t.Errorf("Prometheus refuses the dashboard's query %s", e)
			}
		}
	}
	r.stopKeep(t, f)
	if e := r.errText(); prom != nil && (strings.Contains(e, "pushes failed") || !strings.Contains(e, "Prometheus remote write: pushing to "+prom.base+"/api/v1/write every 5s") ||
		!regexp.MustCompile(`Prometheus remote write: \d+ push(es)? to \S+, all accepted`).MatchString(e)) {
		t.Errorf("remote write: the run did not say it pushes and that every push was accepted, or a push failed: %s", e)
	}
}

// checkPageAfter waits for the page to say the run finished, then wants
// its table of phases to be the results file's, and the report shown.
func checkPageAfter(t *testing.T, br *browser, f *results.File) {
	t.Helper()
	var pf pageFigures
	deadline := time.Now().Add(time.Minute) // hang guard
	for pf = br.figures(t); pf.Status != "finished" || !pf.Report; pf = br.figures(t) {
		if time.Now().After(deadline) {
			t.Fatalf("the page never showed the end: %+v", pf)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var want [][]string
	var accepted int64
	for _, ph := range f.Runs[0].Phases {
		// a row per kind of operation when the phase has several (mixed:
		// events, queries, read-backs), else one
		type kind struct {
			n [6]int64
			r int64
		}
		var ops []string
		byOp := map[string]*kind{}
		for _, a := range ph.Accounts {
			k := byOp[a.Op]
			if k == nil {
				k = &kind{}
				byOp[a.Op] = k
				ops = append(ops, a.Op)
			}
			for i, c := range accountCounts(a) {
				k.n[i] += c
			}
			k.r += a.Requested
			accepted += a.Accepted
		}
		if len(ops) > 1 {
			for _, op := range ops {
				row := []string{ph.Name + " · " + outcome.Noun(op, 2), fmtN(byOp[op].r)}
				for _, c := range byOp[op].n {
					row = append(row, fmtN(c))
				}
				want = append(want, row)
			}
			continue
		}
		var all kind
		for _, k := range byOp {
			all.r += k.r
			for i, c := range k.n {
				all.n[i] += c
			}
		}
		row := []string{ph.Name, fmtN(all.r)}
		for _, c := range all.n {
			row = append(row, fmtN(c))
		}
		want = append(want, row)
	}
	if len(pf.Rows) != len(want) {
		t.Fatalf("page lists %d phases, results file %d: %v", len(pf.Rows), len(want), pf.Rows)
	}
	for i := range want {
		if got := strings.Join(pf.Rows[i][:8], "|"); got != strings.Join(want[i], "|") {
			t.Errorf("page row %d = %s, results file %s", i, got, strings.Join(want[i], "|"))
		}
	}
	if pf.Accepted != fmtN(accepted) {
		t.Errorf("page shows %s accepted, results file %d", pf.Accepted, accepted)
	}
	if pf.Canvas != 4 {
		t.Errorf("%d charts drawn, want 4", pf.Canvas)
	}
	if failed := f.Verdict != nil && f.Verdict.Status == 3; !failed && pf.Found != "none found" {
		t.Errorf("a run whose verification passed shows faults found: %q", pf.Found)
	}
}

// fmtN formats n as the page does (en-US grouping).
func fmtN(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// promServer is Debian's prometheus scraping the live view every second.
type promServer struct {
	cmd     *exec.Cmd
	base    string
	targets string // file_sd file of the scrape job
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startPrometheus starts Prometheus with the remote-write receiver and a
// scrape job whose target comes later (scrape), and waits until it is ready.
func startPrometheus(t *testing.T, bin string) *promServer {
	t.Helper()
	dir := t.TempDir()
	p := &promServer{targets: filepath.Join(dir, "targets.json")}
	if err := os.WriteFile(p.targets, []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: relaybench\n    file_sd_configs:\n      - files: ['%s']\n        refresh_interval: 1s\n", p.targets)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	p.base = fmt.Sprintf("http://127.0.0.1:%d", port)
	p.cmd = exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port), "--web.enable-remote-write-receiver")
	var log strings.Builder
	p.cmd.Stdout, p.cmd.Stderr = io.Discard, &lockedBuilder{b: &log}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	t.Cleanup(func() { p.cmd.Process.Kill(); <-done })
	c := http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(2 * time.Minute) // hang guard
	for {
		if resp, err := c.Get(p.base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		select {
		case <-done:
			t.Fatalf("prometheus ended: %s", log.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("prometheus never got ready")
		}
	}
}

// scrape points Prometheus's job at the live view at base.
func (p *promServer) scrape(t *testing.T, base string) {
	t.Helper()
	u, _ := url.Parse(base)
	tmp := p.targets + ".new"
	if err := os.WriteFile(tmp, []byte(`[{"targets":["`+u.Host+`"]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p.targets); err != nil {
		t.Fatal(err)
	}
}

type lockedBuilder struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// query runs an instant PromQL query; nil while Prometheus is not up.
func (p *promServer) query(t *testing.T, q string) map[string]float64 {
	t.Helper()
	c := http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(p.base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var ans struct {
		Status string
		Data   struct {
			Result []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	if json.NewDecoder(resp.Body).Decode(&ans) != nil || ans.Status != "success" {
		return nil
	}
	out := map[string]float64{}
	for _, r := range ans.Data.Result {
		v, _ := strconv.ParseFloat(fmt.Sprint(r.Value[1]), 64)
		out[r.Metric["phase"]+"|"+r.Metric["op"]+"|"+r.Metric["outcome"]] = v
	}
	return out
}

// check waits until Prometheus has the finished run in the series that
// match sel (scraped, or pushed), then wants them to be the results
// file's counts.
func (p *promServer) check(t *testing.T, f *results.File, sel string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // hang guard
	for {
		if got := p.query(t, "relaybench_run_finished{"+sel+"}"); len(got) == 1 && got["||"] == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus never got the finished run {%s}", sel)
		}
		time.Sleep(200 * time.Millisecond)
	}
	got := p.query(t, "relaybench_operations_total{"+sel+"}")
	n := 0
	for _, ph := range f.Runs[0].Phases {
		for _, a := range ph.Accounts {
			for i, c := range accountCounts(a) {
				k := ph.Name + "|" + a.Op + "|" + outcomeNames[i]
				if got[k] != float64(c) {
					t.Errorf("Prometheus {%s} %s = %v, results file %d", sel, k, got[k], c)
				}
				n++
			}
		}
	}
	if len(got) != n {
		t.Errorf("Prometheus has %d relaybench_operations_total{%s} series, the results file's accounts give %d: %v", len(got), sel, n, got)
	}
}

// relayBinDir is the folder of relay binaries built from source
// (testkit.SharedBinDir), with name in it; the test is skipped in one line
// without it.
func relayBinDir(t *testing.T, name string) string {
	t.Helper()
	dir := testkit.SharedBinDir()
	if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		t.Skipf("no %s in %s: relays built from source are not on this machine", name, dir)
	}
	return dir
}

// runOnRelay runs relaybench run, 300 events and queries queries, against
// the catalog's relay (its binary built from source, the test skipped
// without it) and returns the results file.
func runOnRelay(t *testing.T, relay string, queries int) *results.File {
	t.Helper()
	bin := cliBin(t)
	dir := relayBinDir(t, relay)
	out := t.TempDir()
	cmd := exec.Command(bin, "run", "--relay", relay, "--bin-dir", dir, "--events", "300", "--queries", strconv.Itoa(queries),
		"--out", out, "--json", filepath.Join(out, "r.json"), "--no-progress", "--quiet", "--cache-dir", "off")
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(5*time.Minute, func() { cmd.Process.Kill() }) // hang guard
	err := cmd.Wait()
	if !timer.Stop() {
		t.Fatalf("relaybench run did not end within 5 minutes: %s", stderr.String())
	}
	if err != nil {
		t.Fatalf("relaybench: %v: %s", err, stderr.String())
	}
	return testkit.ReadResults(t, filepath.Join(out, "r.json"))
}

// TestRelayMetricsOfNostrRsRelay runs relaybench run against
// nostr-rs-relay, whose catalog entry names its metrics (metrics_path: no
// --relay-metrics needed): each phase holds what the relay's own metrics
// counted over its window, with notes beside relaybench's figures and the
// checks of its counts (relay_checks); a count outside what relaybench
// bounds it by is flagged, never failed.
func TestRelayMetricsOfNostrRsRelay(t *testing.T) {
	f := runOnRelay(t, "nostr-rs-relay-sqlite", 40)
	ph := map[string]results.Phase{}
	for _, p := range f.Runs[0].Phases {
		ph[p.Name] = p
	}
	pub, q := ph["publish"], ph["query"]
	if pub.RelayMetrics["nostr_events_write_seconds_count"] != float64(pub.Accounts[0].Accepted) || pub.Accounts[0].Accepted == 0 {
		t.Errorf("events written %v, accepted %d", pub.RelayMetrics["nostr_events_write_seconds_count"], pub.Accounts[0].Accepted)
	}
	if q.RelayMetrics["nostr_cmd_req_total"] != 40 || q.RelayMetrics["nostr_cmd_event_total"] != 0 {
		t.Errorf("query phase: %v", q.RelayMetrics)
	}
	// What the relay counted of EVENTs, against what relaybench sent: the
	// note says agree or disagree as the numbers do.
	sent := pub.Accounts[0].Requested - pub.Accounts[0].NotRun
	got := int64(pub.RelayMetrics["nostr_cmd_event_total"])
	wantWord := "relay metrics: "
	if got < pub.Accounts[0].Accepted || got > sent {
		wantWord = "relay metrics disagree: "
	}
	found := false
	for _, n := range pub.Notes {
		found = found || strings.HasPrefix(n, wantWord) && strings.Contains(n, "EVENT messages received")
	}
	if !found {
		t.Errorf("no %q note for %d EVENTs counted, %d sent: %q", wantWord, got, sent, pub.Notes)
	}
	checks := map[string]results.RelayCheck{}
	for _, c := range pub.RelayChecks {
		checks[c.Series] = c
	}
	if c := checks["nostr_events_write_seconds_count"]; c.Relay != float64(pub.Accounts[0].Accepted) || c.Low != pub.Accounts[0].Accepted || c.High != sent || c.Disagree {
		t.Errorf("events written check %+v: want the relay's count within relaybench's %d … %d", c, pub.Accounts[0].Accepted, sent)
	}
	if c, ok := checks["nostr_cmd_event_total"]; !ok || c.Disagree != (got < pub.Accounts[0].Accepted || got > sent) {
		t.Errorf("EVENT messages check %+v (present %v) for %d counted", c, ok, got)
	}
	t.Logf("nostr-rs-relay counted %d EVENT messages for %d sent; publish notes: %q", got, sent, pub.Notes)
}

// TestWebCtrlCStillSaves interrupts a run watched with --web: the results
// file is still written, and the server is gone when relaybench exits
// (--web-keep does not hold an interrupted run).
func TestWebCtrlCStillSaves(t *testing.T) {
	r := startWebRun(t, mixedArgs...)
	deadline := time.Now().Add(5 * time.Minute) // hang guard
	for sumOps(r.scrape(t), "accepted") == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("nothing accepted: %s", r.errText())
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.stop(t, 130)
	f := r.results(t)
	if f.Verdict == nil || f.Verdict.Status != 130 || !strings.Contains(r.errText(), "interrupted") {
		t.Errorf("a run interrupted: verdict %+v, stderr %s", f.Verdict, r.errText())
	}
	if len(f.Runs) != 1 || len(f.Runs[0].Phases) == 0 {
		t.Fatalf("results file without the phases measured: %+v", f.Runs)
	}
	c := http.Client{Timeout: 10 * time.Second}
	if resp, err := c.Get(r.base + "metrics"); err == nil {
		resp.Body.Close()
		t.Fatal("the live view still answers after relaybench exited")
	}
}

// TestRelayMetricsOfWisp: Wisp's catalog entry names its metrics too: the
// events it stored and the REQs it received over each phase's window are
// checked beside relaybench's counts, and agree with them.
func TestRelayMetricsOfWisp(t *testing.T) {
	f := runOnRelay(t, "wisp", 20)
	want := map[string]string{"publish": "wisp_events_stored_total", "query": "wisp_req_total"}
	for _, ph := range f.Runs[0].Phases {
		series, ok := want[ph.Name]
		if !ok {
			continue
		}
		delete(want, ph.Name)
		if len(ph.RelayChecks) != 1 || ph.RelayChecks[0].Series != series || ph.RelayChecks[0].Disagree || ph.RelayChecks[0].Relay == 0 {
			t.Errorf("%s: relay checks %+v, want %s within relaybench's bounds", ph.Name, ph.RelayChecks, series)
		}
	}
	if len(want) > 0 {
		t.Errorf("phases missing: %v", want)
	}
}
