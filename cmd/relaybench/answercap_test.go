package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
)

// A relay that streams 1 KB events into every REQ without end (ignoring
// limit, no EOSE) cannot swamp the client: each answer is cut at the cap,
// the run is incomplete (exit 4, not wrong) and its peak memory stays far
// below what the answers would take uncapped (about 100 MB per second of
// streaming). The cap does not depend on how fast the relay streams.
func TestEndlessAnswersKeepMemoryBounded(t *testing.T) {
	t.Parallel() // beside the package's other parallel tests: its deadlines are 10 s hang guards; nothing shared
	r := testrelay.Start(t, testrelay.Config{Verify: true, EndlessAnswers: true})
	for _, tc := range []struct {
		name  string
		extra []string
		cap   string // the event cap named in the errors
	}{
		{"derived", nil, "more than 10100 events"},
		{"flag", []string{"--max-answer-events", "40"}, "more than 40 events"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			path := filepath.Join(out, "r.json")
			args := append([]string{"run", "--relay", r.URL(), "--events", "400", "--size", "1024", "--queries", "12",
				"--query-limit", "100", "--timeout", "10s", "--cache-dir", t.TempDir(), "--out", out, "--json", path, "--no-progress"}, tc.extra...)
			p := startCLI(t, args...)
			if code := p.exit(t, 3*time.Minute); code != judge.Incomplete {
				t.Fatalf("run: exit %d, want exit %d\n%s", code, judge.Incomplete, lastLines(p.stdout()+p.stderr(), 10))
			}
			if rss, ok := p.peakRSS(); ok {
				t.Logf("peak RSS %d MB", rss>>20)
				if rss > 256<<20 {
					t.Errorf("peak RSS %d MB, want under 256 MB", rss>>20)
				}
			}
			f, err := results.Read(path)
			if err != nil {
				t.Fatal(err)
			}
			q := f.Runs[0].Phase("query")
			if q == nil {
				t.Fatal("no query phase")
			}
			a := q.Account(results.OpQuery)
			if a == nil || a.Refused != 12 || a.RefusedBy[outcome.OverCap] != 12 || q.Counts["answers_over_cap"] != 12 {
				t.Errorf("account %+v, counts %v: want 12 queries refused %q", a, q.Counts, outcome.OverCap)
			}
			if !strings.Contains(strings.Join(q.Errors, "\n"), tc.cap) {
				t.Errorf("errors %q do not name the cap (%s)", q.Errors, tc.cap)
			}
		})
	}
}

func TestMaxAnswerFlagsValidated(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--max-answer-events", "-1"},
		{"run", "--max-answer-events", "1000000000000"},
		{"lifecycle", "--max-answer-bytes", "-5"},
	} {
		res := runCLI(t, args...)
		lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
		if res.code != judge.Usage || len(lines) != 1 || !strings.Contains(res.stderr, args[1]) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line naming the flag", args, res.code, res.stderr)
		}
	}
}
