package main

import (
	"debug/buildinfo"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/sysinfo"
	"github.com/relaybench/relaybench/results"
)

// testAnchor pins the corpus's created_at window in tests that assert a
// real relay passes verification: the same events every time, so the
// outcome does not change with the hour the tests run (real stores have
// query bugs that only some corpora hit; see the README).
const testAnchor = "2026-11-01T00:00:00Z"

func TestRunDefaultBenchmarkEndToEnd(t *testing.T) {
	t.Parallel() // beside the package's other parallel tests: its own cache and out dirs; the relay on a free port
	out := t.TempDir()
	cache := t.TempDir()
	res := runCLI(t, "run", "-events", "400", "-queries", "18", "-concurrency", "4",
		"--out", out, "--cache-dir", cache, "--no-progress", "--anchor", testAnchor)
	if res.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{"Publish Performance:", "Query Performance:", "Verification: PASSED", "khatru"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, res.stdout)
		}
	}
	files, _ := filepath.Glob(filepath.Join(out, "run-*.json"))
	if len(files) != 1 {
		t.Fatalf("want one results file, got %v", files)
	}
	f, err := results.Read(files[0])
	if err != nil {
		t.Fatal(err)
	}
	r := f.Runs[0]
	pub, q := r.Phase("publish"), r.Phase("query")
	if pub == nil || q == nil {
		t.Fatalf("phases %+v", r.Phases)
	}
	if pub.Counts["accepted"] != 400 || q.Counts["queries"] != 18 || !q.Verification.Passed {
		t.Fatalf("publish %v query %v verification %+v", pub.Counts, q.Counts, q.Verification)
	}
	if !r.Relay.Managed || r.Relay.Software == "" || r.Relay.MaxLimit == 0 || len(r.Relay.NIP11) == 0 {
		t.Fatalf("relay info %+v", r.Relay)
	}
	if pub.Resources == nil || pub.Resources.RelayCPUSecs <= 0 || pub.Resources.RelayPeakRSS <= 0 {
		t.Fatalf("relay resources not sampled: %+v", pub.Resources)
	}
	if f.Machine.Cores == 0 || f.Tool.GoVersion == "" || r.Corpus.Key == "" {
		t.Fatalf("file does not describe itself: %+v %+v", f.Machine, f.Tool)
	}
	if left := relaysUnder(out); len(left) > 0 {
		t.Fatalf("relay left running: %v", left)
	}
	// A second run with the same parameters signs nothing: the corpus is cached.
	res = runCLI(t, "run", "-events", "400", "-queries", "6", "--out", out, "--cache-dir", cache, "--no-progress", "--quiet", "--anchor", testAnchor, "--json", filepath.Join(out, "second.json"))
	if res.code != 0 {
		t.Fatalf("second run: exit %d: %s", res.code, res.stderr)
	}
	f2, err := results.Read(filepath.Join(out, "second.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !f2.Runs[0].Corpus.Cached || f2.Runs[0].Corpus.Key != r.Corpus.Key {
		t.Fatalf("corpus not reused from cache: %+v", f2.Runs[0].Corpus)
	}
}

func TestRunBadInputOneLineErrors(t *testing.T) {
	refused := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no websockets here", http.StatusForbidden)
	}))
	defer refused.Close()
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"bad flag value", []string{"run", "--events", "many"}, 2, "--events"},
		{"unknown flag", []string{"run", "--evnets", "10"}, 2, "(relaybench run --help lists the flags)"},
		{"bad mode", []string{"run", "--mode", "fast"}, 2, "--mode"},
		{"non-loopback relay", []string{"run", "--relay", "ws://192.0.2.1:7777", "--events", "10"}, 2, "i-operate-this-relay"},
		{"bad scheme", []string{"run", "--relay", "http://127.0.0.1:7777", "--events", "10"}, 2, "ws://"},
		{"unreachable relay", []string{"run", "--relay", "ws://127.0.0.1:1", "--events", "10", "--queries", "1"}, 1, "127.0.0.1:1"},
		{"refused upgrade", []string{"run", "--relay", "ws" + strings.TrimPrefix(refused.URL, "http"), "--events", "10", "--queries", "1"}, 1, "403"},
		{"bad corpus", []string{"run", "--events", "0"}, 2, "events"},
		{"bad anchor", []string{"run", "--anchor", "yesterday"}, 2, "--anchor"},
		{"future anchor", []string{"run", "--anchor", "2999-01-01T00:00:00Z"}, 2, "future"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append(tc.args, "--out", t.TempDir(), "--cache-dir", "off", "--no-progress", "--quiet")
			res := runCLI(t, args...)
			if res.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", res.code, tc.code, res.stderr)
			}
			lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "relaybench: ") || !strings.Contains(last, tc.want) {
				t.Fatalf("want a one-line error mentioning %q, got stderr:\n%s", tc.want, res.stderr)
			}
		})
	}
}

func TestRunCtrlCSavesAndStopsRelay(t *testing.T) {
	needCgoStores(t)
	out := t.TempDir()
	// Slow OKs keep the publish phase running long enough to interrupt it.
	p := startCLI(t, "run", "--events", "3000", "--concurrency", "1", "--store", "sqlite3",
		"--out", out, "--cache-dir", t.TempDir(), "--json", filepath.Join(out, "r.json"))
	p.until(t, func(l string) bool { return strings.HasPrefix(l, "Publishing") }, 2*time.Minute, "publishing")
	time.Sleep(300 * time.Millisecond)
	p.interrupt()
	if code := p.exit(t, 60*time.Second); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, p.stderr())
	}
	f, err := results.Read(filepath.Join(out, "r.json"))
	if err != nil {
		t.Fatalf("results not saved on Ctrl-C: %v", err)
	}
	if !f.Interrupted || f.Runs[0].Phase("publish") == nil || f.Runs[0].Phase("publish").Counts["sent"] == 0 {
		t.Fatalf("want an interrupted file with what was measured: %+v", f.Runs[0].Phases)
	}
	if !strings.Contains(p.stdout(), "Publish Performance:") {
		t.Fatalf("summary not printed on Ctrl-C:\n%s", p.stdout())
	}
	if left := relaysUnder(out); len(left) > 0 {
		t.Fatalf("relay left running after Ctrl-C: %v", left)
	}
	raw, _ := os.ReadFile(filepath.Join(out, "r.json"))
	var probe map[string]any
	if json.Unmarshal(raw, &probe) != nil {
		t.Fatal("results file is not JSON")
	}
}

func TestNormalizeArgs(t *testing.T) {
	got := strings.Join(normalizeArgs([]string{"run", "-relay", "ws://x", "-v", "-events=5", "--queries", "3", "-1.5", "--", "-keep"}), " ")
	want := "run --relay ws://x -v --events=5 --queries 3 -1.5 -- -keep"
	if got != want {
		t.Fatalf("got %q want %q", got, want)
	}
}

// TestUnknownCommandNamed: a first argument that is no command is named
// as such, with the commands there are (exit 2); kong alone said only
// "unexpected argument".
func TestUnknownCommandNamed(t *testing.T) {
	res := runCLI(t, "frobnicate")
	if res.code != 2 || !strings.Contains(res.stderr, `unknown command "frobnicate": the commands are `) || !strings.Contains(res.stderr, " run, ") {
		t.Errorf("exit %d, stderr %q", res.code, res.stderr)
	}
	if res := runCLI(t, "run", "frobnicate"); res.code != 2 || strings.Contains(res.stderr, "unknown command") {
		t.Errorf("run frobnicate: exit %d, stderr %q: an argument after a command is not a command", res.code, res.stderr)
	}
}

// TestUsageAndVersion: no arguments and `help [COMMAND]` print the usage
// (exit 0); --version says what the build says about itself, never a
// placeholder beside a real module version.
func TestUsageAndVersion(t *testing.T) {
	for _, args := range [][]string{nil, {"help"}, {"help", "burst"}} {
		res := runCLI(t, args...)
		want := "Usage: relaybench"
		if len(args) == 2 {
			want = "Usage: relaybench burst"
		}
		if res.code != 0 || !strings.Contains(res.stdout, want) {
			t.Errorf("relaybench %v: exit %d, stdout %q", args, res.code, lastLines(res.stdout, 3))
		}
	}
	// The binary's own build information (module version, VCS revision)
	// is what it must print, whatever the test binary was built with.
	bi, err := buildinfo.ReadFile(relaybenchBin(t))
	if err != nil {
		t.Fatal(err)
	}
	want := sysinfo.VersionLineOf(bi)
	res := runCLI(t, "--version")
	if res.code != 0 || strings.TrimSpace(res.stdout) != want || !strings.HasPrefix(res.stdout, "relaybench ") {
		t.Errorf("--version: exit %d, %q; want %q", res.code, res.stdout, want)
	}
}

// TestVersionUnstampedSaid: a build without any version (go run, or
// -buildvcs=false) says so and how to get one, where it said "dev"; a
// build go stamped (go build in a checkout: a pseudo-version and the
// revision, dirty or not) says what it is.
func TestVersionUnstampedSaid(t *testing.T) {
	if got, want := sysinfo.VersionLineOf(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}),
		"relaybench "+sysinfo.Unstamped+" (go1.26.8)"; got != want {
		t.Errorf("unstamped: %q, want %q", got, want)
	}
	if !strings.Contains(sysinfo.Unstamped, "built without version control information") {
		t.Errorf("Unstamped %q does not say what is missing", sysinfo.Unstamped)
	}
	stamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261126065110-f21ca5e5b4f1+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "f21ca5e5b4f1"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := sysinfo.VersionLineOf(stamped), "relaybench v0.0.0-20261126065110-f21ca5e5b4f1+dirty (commit f21ca5e5b4f1-dirty, go1.26.8)"; got != want {
		t.Errorf("stamped: %q, want %q", got, want)
	}
}
