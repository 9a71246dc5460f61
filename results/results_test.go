package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWriteReadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	in := &File{
		Command:   "run",
		StartedAt: time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC),
		Runs: []Run{{
			Relay: Relay{Name: "khatru-badger", URL: "ws://127.0.0.1:7447", MaxLimit: 1000},
			Phases: []Phase{{
				Name: "publish", Duration: 2e9,
				Counts:       map[string]int64{"sent": 10, "accepted": 9, "refused": 1},
				Refused:      map[string]int64{"duplicate": 1},
				Latency:      map[string]*Histogram{"ok": {Count: 9, Percentiles: map[string]int64{"99": 1234}}},
				Verification: &Verification{Verified: true, Checked: 3, Missing: 1},
			}},
		}},
	}
	if err := Write(path, in); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("temporary file left behind: %v", err)
	}
	out, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if out.Schema != SchemaVersion {
		t.Fatalf("schema %q", out.Schema)
	}
	ph := out.Runs[0].Phase("publish")
	if ph == nil || ph.Counts["accepted"] != 9 || ph.Refused["duplicate"] != 1 || ph.Latency["ok"].Percentiles["99"] != 1234 ||
		ph.Verification.Missing != 1 || out.Runs[0].Relay.MaxLimit != 1000 {
		t.Fatalf("round trip lost data: %+v", out.Runs[0])
	}
	if out.Runs[0].Phase("query") != nil {
		t.Fatal("Phase found a phase that is not there")
	}
}

func TestReadRefusesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{ // the file, and what its error says
		"other-schema.json": `{"schema":"relaybench/results/v99","runs":[]}`,
		"not-json.json":     `hello`,
		"empty-object.json": `{}`,
		"other-tool.json":   `{"schema":"https://json-schema.org/draft/2020-12/schema"}`,
	}
	says := map[string]string{
		"other-schema.json": `results schema "relaybench/results/v99", this build reads`,
		"not-json.json":     "not a relaybench results file",
		"empty-object.json": `not a relaybench results file (it has no "schema"`,
		"other-tool.json":   "not a relaybench results file (its schema is",
	}
	for name, body := range cases {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Read(p)
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), says[name]) {
			t.Errorf("%s: want an error naming the file and saying %q, got %v", name, says[name], err)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file read without error")
	}
}

// Add sums every outcome and class and keeps the sum balanced; a nil
// class map is made only when something is added to it.
func TestAccountAdd(t *testing.T) {
	a := Account{Op: "publish", Requested: 3, Accepted: 2, Refused: 1, RefusedBy: map[string]int64{"blocked": 1}}
	a.Add(Account{Op: "other", Requested: 5, Accepted: 1, Refused: 1, TimedOut: 1, ConnLost: 1, NotRun: 1, Cancelled: 0,
		RefusedBy: map[string]int64{"blocked": 1}, NotRunBy: map[string]int64{"aborted": 1}})
	if a.Op != "publish" || a.Requested != 8 || a.Accepted != 3 || a.Refused != 2 || a.TimedOut != 1 || a.ConnLost != 1 || a.NotRun != 1 ||
		!a.Balanced() || a.RefusedBy["blocked"] != 2 || a.NotRunBy["aborted"] != 1 {
		t.Fatalf("%+v", a)
	}
	var b Account
	b.Add(Account{Requested: 1, Accepted: 1})
	if b.RefusedBy != nil || b.NotRunBy != nil || !b.Balanced() {
		t.Fatalf("%+v", b)
	}
}
