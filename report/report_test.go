package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/relaybench/relaybench/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s\n(go test ./report -update rewrites it)", name, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s differs in length: got %d lines, want %d", name, len(gl), len(wl))
	}
}

// roundTrip writes f as a results file and reads it back, so that tests see
// exactly what a report of a real file sees.
func roundTrip(t *testing.T, f *results.File) *results.File {
	t.Helper()
	p := filepath.Join(t.TempDir(), "r.json")
	if err := results.Write(p, f); err != nil {
		t.Fatal(err)
	}
	g, err := results.Read(p)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestSummaryGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    *results.File
	}{{"summary_single.golden", singleFile()}, {"summary_compare.golden", compareFile(0, 1)}} {
		var b bytes.Buffer
		if err := Summary(&b, roundTrip(t, tc.f)); err != nil {
			t.Fatal(err)
		}
		golden(t, tc.name, b.Bytes())
	}
}

func TestSummaryContent(t *testing.T) {
	var b bytes.Buffer
	if err := Summary(&b, singleFile()); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{
		"=== Benchmark Results ===", "Publish Performance:", "Events Published: 99,998 accepted of 100,000 sent",
		"Refused: 2 (duplicate 1, rate-limited 1)", "Total Data: 124 MiB", "Rate: 7,730.85 events/second", "Sent rate: 7,731.00 events/second", "Bytes received: 10.5 MiB",
		"Bandwidth: 9.61 MiB/s", "OK Latency: p50 ", "p99.9 ", "Query Performance:", "Queries Executed: 600",
		"Avg Events/Query: 40.00", "Query shapes:", "time-range", "Verification: PASSED",
		"Client CPU: 0.90 s (35% of usable cores)",
		"WARNING: client-limited", "WARNING: verification FAILED", "Payload Sweep:", "64 KiB",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
}

// A figure the file does not hold is shown as "–", never made up.
func TestMissingFiguresAreDashes(t *testing.T) {
	f := baseFile("run")
	f.Interrupted = true
	f.Runs = []results.Run{{Relay: results.Relay{URL: "ws://x"}, Phases: []results.Phase{{Name: "publish", Counts: map[string]int64{"sent": 10}}}}}
	var b bytes.Buffer
	if err := Summary(&b, f); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Events Published: – accepted of 10 sent", "Rate: –", "Bandwidth: –", "Duration: –", "INTERRUPTED"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := Markdown(&b, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| ws://x | 10 | – | – | – | – | – | – | – | ok |") {
		t.Errorf("markdown publish row does not show missing figures as –:\n%s", b.String())
	}
}

func TestMarkdownGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, []*results.File{roundTrip(t, compareFile(3, 1))}, Options{Title: "Relay comparison"}); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.md.golden", b.Bytes())
	s := b.String()
	// strfry's query phase failed verification: its row says so.
	if !regexp.MustCompile(`(?m)^\| strfry \| 120 \|.*\| verification FAILED \|$`).MatchString(s) {
		t.Error("the strfry query row is not marked verification FAILED")
	}
	if !strings.Contains(s, "median, with the spread (min–max)") {
		t.Error("repeated runs are not explained")
	}

	b.Reset()
	if err := Markdown(&b, []*results.File{roundTrip(t, singleFile())}, Options{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "single.md.golden", b.Bytes())
}

func TestCSVGolden(t *testing.T) {
	raw, rows := csvOf(t, roundTrip(t, singleFile()), roundTrip(t, compareFile(0, 1)))
	golden(t, "report.csv.golden", raw)
	// single: 3 phases + 5 sweeps + 6 shapes = 14 rows; compare: 2 × (2 + 6).
	if got, want := len(rows), 14+16; got != want {
		t.Fatalf("%d rows, want %d", got, want)
	}
	for _, r := range rows {
		if r["phase"] == "subscribe" && !strings.Contains(r["status"], "client-limited") {
			t.Error("subscribe row not marked client-limited")
		}
	}
}

// csvOf is the CSV report of files, and its rows (the header's left out)
// with each cell under its column's name; every row has the header's
// columns (CSVHeader).
func csvOf(t *testing.T, files ...*results.File) ([]byte, []map[string]string) {
	t.Helper()
	var b bytes.Buffer
	if err := CSV(&b, files); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b.Bytes())).ReadAll()
	if err != nil {
		t.Fatalf("CSV does not parse back: %v", err)
	}
	if len(rows) == 0 || len(rows[0]) != len(CSVHeader) {
		t.Fatalf("CSV header %q, want the %d columns of CSVHeader", rows, len(CSVHeader))
	}
	out := make([]map[string]string, 0, len(rows)-1)
	for _, r := range rows[1:] {
		m := make(map[string]string, len(r))
		for i, h := range rows[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return b.Bytes(), out
}

func TestJSON(t *testing.T) {
	var b bytes.Buffer
	if err := JSON(&b, []*results.File{compareFile(3, 1)}, Options{}); err != nil {
		t.Fatal(err)
	}
	var rep JSONReport
	if err := json.Unmarshal(b.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Schema != JSONSchema || len(rep.Files) != 1 || len(rep.Files[0].Runs) != 6 || len(rep.Relays) != 2 {
		t.Fatalf("unexpected shape: schema %q, %d files, %d relays", rep.Schema, len(rep.Files), len(rep.Relays))
	}
	if strings.Contains(b.String(), `"hdr"`) {
		t.Error("condensed JSON holds raw HDR encodings")
	}
	var found bool
	for _, f := range rep.Relays[0].Figures {
		if f.Phase == "publish" && f.Name == "events/s" {
			found = true
			if f.N != 3 || !(f.Min <= f.Median && f.Median <= f.Max) {
				t.Errorf("publish events/s aggregate: %+v", f)
			}
		}
	}
	if !found {
		t.Error("no publish events/s figure")
	}
	if st := rep.Files[0].Runs[3].Phases[1].Status; len(st) != 1 || st[0] != "verification FAILED" {
		t.Errorf("strfry query status %v", st)
	}
}

var (
	offPage = regexp.MustCompile(`(?i)\b(src|href)\s*=\s*["']?\s*([^"'\s>]*)`)
	svgTag  = regexp.MustCompile(`<svg\b`)
)

func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{"http://", "https://", "<script", "<link", "@import", "url("} {
		if strings.Contains(strings.ToLower(page), bad) {
			t.Errorf("page contains %q: it must load nothing", bad)
		}
	}
	for _, m := range offPage.FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[2], "#") && !strings.HasPrefix(m[2], "data:") {
			t.Errorf("%s=%q points off the page", m[1], m[2])
		}
	}
}

func TestHTMLSelfContained(t *testing.T) {
	for _, tc := range []struct {
		name   string
		f      *results.File
		charts int
	}{
		// publish: throughput, latency over time, spectrum, CPU, RSS; query
		// and subscribe spectra; three sweep plots.
		{"single", singleFile(), 10},
		// publish: 5 as above; query spectrum; bars: events/s, OK latency,
		// queries/s, EOSE latency.
		{"compare", compareFile(3, 1), 10},
	} {
		var b bytes.Buffer
		if err := HTML(&b, []*results.File{tc.f}, Options{Title: "T <&>"}); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		checkSelfContained(t, page)
		if n := len(svgTag.FindAllString(page, -1)); n != tc.charts {
			t.Errorf("%s: %d <svg> charts, want %d", tc.name, n, tc.charts)
		}
		if !strings.Contains(page, "<title>T &lt;&amp;&gt;</title>") {
			t.Errorf("%s: title not escaped", tc.name)
		}
	}
}

func TestCharts(t *testing.T) {
	dir := t.TempDir()
	paths, err := Charts(dir, []*results.File{singleFile()}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 20 {
		t.Fatalf("%d files, want 10 PNG + 10 SVG", len(paths))
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		switch filepath.Ext(p) {
		case ".png":
			if !bytes.HasPrefix(b, []byte("\x89PNG")) || len(b) < 5000 {
				t.Errorf("%s: not a real PNG (%d bytes)", p, len(b))
			}
		case ".svg":
			if !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("<path")) {
				t.Errorf("%s: SVG without drawing", p)
			}
		}
	}
}

func TestDownsample(t *testing.T) {
	var xys plotter.XYs
	for i := range 10 * maxPoints {
		y := 1.0
		if i == 2001 {
			y = 100 // one spike
		}
		xys = append(xys, plotter.XY{X: float64(i), Y: y})
	}
	mean, peak := downsample(xys, false), downsample(xys, true)
	if len(mean) != maxPoints || len(peak) != maxPoints {
		t.Fatalf("downsampled to %d and %d points, want %d", len(mean), len(peak), maxPoints)
	}
	var maxMean, maxPeak float64
	for i := range mean {
		maxMean, maxPeak = max(maxMean, mean[i].Y), max(maxPeak, peak[i].Y)
	}
	if maxPeak != 100 || maxMean >= 100 || maxMean <= 1 {
		t.Errorf("spike: mean line max %v, max line max %v", maxMean, maxPeak)
	}
	if short := xys[:10]; len(downsample(short, false)) != 10 {
		t.Error("short series changed")
	}
}

// Files a workload could write when things go wrong must still render in
// every format, without panics, and say what is missing.
func TestOddFiles(t *testing.T) {
	empty := baseFile("run")
	odd := baseFile("run")
	odd.Runs = []results.Run{{Relay: results.Relay{URL: "ws://odd"}, Errors: []string{"relay exited with status 2"}, Phases: []results.Phase{
		{Name: "publish"}, // nothing measured
		{Name: "query", Duration: 1e9, Counts: map[string]int64{"queries": 0},
			Latency:      map[string]*results.Histogram{"eose": {Count: 3, Max: 9e6, Mean: 5e6, Percentiles: map[string]int64{"50": 4e6, "99": 9e6}}, "none": nil},
			Verification: &results.Verification{Verified: false, Notes: []string{"relay not written by relaybench"}}},
		{Name: "load", Workload: "load", Duration: 2e9, Series: []results.Second{{T: 0}, {T: 1, Counts: map[string]int64{"intended": 5}}}},
	}}}
	for _, f := range []*results.File{empty, odd} {
		var b bytes.Buffer
		if err := Summary(&b, f); err != nil {
			t.Fatal(err)
		}
		fs := []*results.File{f}
		if err := Markdown(&b, fs, Options{}); err != nil {
			t.Fatal(err)
		}
		if err := CSV(&b, fs); err != nil {
			t.Fatal(err)
		}
		if err := JSON(&b, fs, Options{}); err != nil {
			t.Fatal(err)
		}
		if err := HTML(&b, fs, Options{}); err != nil {
			t.Fatal(err)
		}
		if _, err := Charts(t.TempDir(), fs, Options{}); err != nil {
			t.Fatal(err)
		}
		if err := Compare(&b, fs, fs, "md"); err != nil && len(f.Runs) > 0 {
			t.Fatal(err)
		}
		if f == odd {
			s := b.String()
			for _, want := range []string{"NOT VERIFIED", "relay exited with status 2", "EOSE Latency: p50 4.00ms", "p90 –"} {
				if !strings.Contains(s, want) {
					t.Errorf("odd file: output lacks %q", want)
				}
			}
		}
	}
}
