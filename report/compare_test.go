package report

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/threshold"
)

func TestMannWhitneyP(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		want float64
	}{
		// Completely separated samples of 5: exact two-sided p = 2/C(10,5).
		{"separated 5+5", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 2.0 / 252},
		// Separated 3+3: the smallest p this design can give, 2/C(6,3).
		{"separated 3+3", []float64{1, 2, 3}, []float64{4, 5, 6}, 0.1},
		// Interleaved: U = 10 (R: wilcox.test gives W = 10, p = 0.6905).
		{"interleaved", []float64{1, 3, 5, 7, 9}, []float64{2, 4, 6, 8, 10}, 0.6905},
		// Identical samples (all ties): p = 1.
		{"identical", []float64{5, 5, 5, 5}, []float64{5, 5, 5, 5}, 1},
	} {
		got := mannWhitneyP(tc.x, tc.y)
		if math.Abs(got-tc.want) > 0.002 {
			t.Errorf("%s: p = %.4f, want %.4f", tc.name, got, tc.want)
		}
	}
	// Symmetric in its arguments.
	a, b := []float64{1.1, 2.5, 3.3, 9}, []float64{4, 5.5, 6, 7, 8}
	if mannWhitneyP(a, b) != mannWhitneyP(b, a) {
		t.Error("p depends on argument order")
	}
	// Ties use the normal approximation: still clearly significant.
	if p := mannWhitneyP([]float64{1, 1, 2, 2, 3}, []float64{8, 8, 9, 9, 10}); p >= 0.05 {
		t.Errorf("tied but separated samples: p = %.3f", p)
	}
}

func TestSignificance(t *testing.T) {
	if s := significance([]float64{1}, []float64{2, 3}); !strings.HasPrefix(s, "no repeats: noise unknown") {
		t.Errorf("one run: %q", s)
	}
	if s := significance([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}); !strings.HasPrefix(s, "p=0.008") {
		t.Errorf("separated: %q", s)
	}
	if s := significance([]float64{1, 2, 3}, []float64{4, 5, 6}); !strings.Contains(s, "too few runs") {
		t.Errorf("3+3: %q", s)
	}
}

// compareRows returns the comparison text lines of relay for phase/figure.
func compareRow(t *testing.T, out, relay, phase, fig string) string {
	t.Helper()
	in := false
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Relay ") {
			in = strings.HasPrefix(l, "Relay "+relay+":")
			continue
		}
		f := strings.Fields(l)
		if in && len(f) > 2 && f[0] == phase && strings.HasPrefix(strings.Join(f[1:], " "), fig+" ") {
			return l
		}
	}
	t.Fatalf("no row %s %s %s in:\n%s", relay, phase, fig, out)
	return ""
}

func TestCompare(t *testing.T) {
	base := []*results.File{compareFile(5, 1)}
	faster := []*results.File{compareFile(5, 1.5)} // 50% faster, everything else equal
	same := []*results.File{compareFile(5, 1)}
	var b bytes.Buffer
	if err := Compare(&b, base, faster, "text"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	row := compareRow(t, out, "khatru-badger", "publish", "events/s")
	if !strings.Contains(row, "+50.0% better") || !strings.Contains(row, "p=0.008 n=5+5") {
		t.Errorf("clearly faster candidate not significant: %q", row)
	}
	// Lower latency is better.
	row = compareRow(t, out, "khatru-badger", "publish", "OK p99")
	if !strings.Contains(row, "better") {
		t.Errorf("lower latency not called better: %q", row)
	}
	// Query latency is the same distribution on both sides: not significant.
	row = compareRow(t, out, "khatru-badger", "query", "EOSE p50")
	if !strings.Contains(row, "~ (p=") {
		t.Errorf("identical distributions reported as significant: %q", row)
	}
	// strfry failed verification: every figure of its query says so.
	row = compareRow(t, out, "strfry", "query", "queries/s")
	if !strings.Contains(row, "verification FAILED") {
		t.Errorf("failed verification not marked: %q", row)
	}
	for _, want := range []string{"Baseline:", "Candidate:", "Command:", "Machine:", "When:"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare output lacks %q", want)
		}
	}

	b.Reset()
	if err := Compare(&b, base, same, "md"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "| p=") {
		t.Errorf("identical files gave a significant difference:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "| Phase | Figure | Baseline | Candidate | Ratio | Delta | Significance | Phase status |") {
		t.Error("no Markdown table")
	}

	b.Reset()
	if err := Compare(&b, []*results.File{compareFile(0, 1)}, faster, ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "the baseline has 1 run and the candidate 5, so the run-to-run noise is unknown") {
		t.Errorf("single runs not flagged as noise unknown:\n%s", b.String())
	}
	if err := Compare(&b, base, faster, "pdf"); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{fmtInt(0), "0"}, {fmtInt(999), "999"}, {fmtInt(1000), "1,000"}, {fmtInt(-1234567), "-1,234,567"},
		{fmtFloat(7730.994, 2), "7,730.99"}, {fmtFloat(-0.001, 2), "0.00"},
		{fmtDur(950), "950ns"}, {fmtDur(12_345), "12.3µs"}, {fmtDur(1_290_000), "1.29ms"}, {fmtDur(3.57e9), "3.57s"}, {fmtDur(74.384e9), "74.4s"}, {fmtDur(60e9), "60.0s"},
		{fmtBytes(512), "512 B"}, {fmtBytes(13.03e6), "12.4 MiB"}, {fmtBytes(1.24e9), "1.15 GiB"},
		{fmtPayload(256), "256 B"}, {fmtPayload(1024), "1 KiB"}, {fmtPayload(131072), "128 KiB"},
		{fmtDelta(100, 150), "+50.0%"}, {fmtDelta(0, 1), dash},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestSweepNames(t *testing.T) {
	for name, want := range map[string]float64{"sweep/1024": 1024, "sweep:256": 256, "4096": 4096, "65536B": 65536} {
		if got, ok := sweepSize(name); !ok || got != want {
			t.Errorf("sweepSize(%q) = %v, %v", name, got, ok)
		}
	}
	if _, ok := sweepSize("sweep/big"); ok {
		t.Error("sweep/big parsed")
	}
	// The group convention: a phase named "sweep" with groups named by size.
	r := &results.Run{Phases: []results.Phase{{Name: "sweep", Groups: []results.Group{{Name: "4096"}, {Name: "256"}}}}}
	pts := sweep(r)
	if len(pts) != 2 || pts[0].size != 256 || pts[1].size != 4096 {
		t.Errorf("group sweep: %+v", pts)
	}
}

// TestCompareHTML checks the A/B page: self-contained HTML (not the
// terminal text), each side's verdict, a table with both sides' medians
// and their ratio, the fail-on limits, and charts drawing both sides under
// names that keep them apart. The input files are not changed.
func TestCompareHTML(t *testing.T) {
	base := []*results.File{compareFile(5, 1)}
	cand := []*results.File{compareFile(5, 1.5)}
	base[0].Verdict = &results.Verdict{Status: 0, Outcome: "passed"}
	cand[0].Verdict = &results.Verdict{Status: 3, Outcome: "wrong answers", Reasons: []string{"strfry, query: 12 events <missing>"}}
	rs := CheckFailOn(base, cand, []threshold.FailOn{mustFailOn(t, "publish.rate:-10%")})
	var b bytes.Buffer
	if err := CompareHTML(&b, base, cand, Options{}, rs); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.HasSuffix(page, "</html>\n") || strings.Contains(page, "===") {
		t.Fatalf("not an HTML page:\n%.500s", page)
	}
	checkSelfContained(t, page)
	for _, want := range []string{
		`<section id="baseline">`, `<section id="candidate">`,
		"Verdict: PASSED (exit 0)", "Verdict: WRONG ANSWERS (exit 3)", "12 events &lt;missing&gt;",
		`<th class="num">Ratio</th>`, "Fail-on limits",
		"khatru-badger (baseline, 5 runs)", "khatru-badger (candidate, 5 runs)",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("A/B page lacks %q", want)
		}
	}
	// The publish rate row holds both medians and their ratio, 1.50×.
	bm := median(append([]float64(nil), base[0].Runs[0].Phases[0].Rates["events_per_sec"], base[0].Runs[1].Phases[0].Rates["events_per_sec"], base[0].Runs[2].Phases[0].Rates["events_per_sec"], base[0].Runs[3].Phases[0].Rates["events_per_sec"], base[0].Runs[4].Phases[0].Rates["events_per_sec"]))
	row := regexp.MustCompile(`<tr><td>publish</td><td[^>]*>events/s</td>.*?</tr>`).FindString(page)
	if !strings.Contains(row, ">"+fmtRate(bm)+"<") || !strings.Contains(row, ">"+fmtRate(bm*1.5)+"<") || !strings.Contains(row, ">1.50×<") {
		t.Errorf("publish events/s row lacks baseline %s, candidate %s and ratio 1.50×: %s", fmtRate(bm), fmtRate(bm*1.5), row)
	}
	if n := len(svgTag.FindAllString(page, -1)); n < 5 {
		t.Errorf("%d charts, want both sides' charts", n)
	}
	if base[0].Runs[0].Relay.Name != "khatru-badger" {
		t.Error("relabelling the charts changed the input file")
	}
}

func mustFailOn(t *testing.T, s string) threshold.FailOn {
	t.Helper()
	f, err := threshold.ParseFailOn(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestCompareHeadline checks the headline of each relay: the main
// figure's ratio, and counts of better, worse and unchanged figures that
// are those of its table's rows; with runs too few for the test to ever
// reach α (2+2), no change is judged, and the headline says so in every
// format, names escaped in Markdown and HTML.
func TestCompareHeadline(t *testing.T) {
	base, faster := []*results.File{compareFile(5, 1)}, []*results.File{compareFile(5, 1.5)}
	ab, err := abTables(base, faster)
	if err != nil {
		t.Fatal(err)
	}
	for i, tb := range ab.tables {
		var better, worse, same int
		for _, r := range tb.rows {
			switch {
			case strings.HasSuffix(r[5], " better"):
				better++
			case strings.HasSuffix(r[5], " worse"):
				worse++
			default:
				same++
			}
		}
		want := fmt.Sprintf("of %d figures, %d better, %d worse beyond noise, %d unchanged within noise", len(tb.rows), better, worse, same)
		if !strings.Contains(ab.heads[i], want) || better == 0 {
			t.Errorf("%s: headline %q, want %q (and some better)", tb.title, ab.heads[i], want)
		}
	}
	if want := "Relay khatru-badger: publish events/s of the candidate is 1.50× the baseline's"; !strings.HasPrefix(ab.heads[0], want) {
		t.Errorf("headline %q, want it to start %q", ab.heads[0], want)
	}
	few := compareFile(2, 1)
	few.Runs[0].Relay.Name = "<b>x</b>"
	few.Runs[1].Relay.Name = "<b>x</b>"
	for _, format := range []string{"text", "md", "html"} {
		s := compareIn(t, format, []*results.File{few}, []*results.File{few})
		if !strings.Contains(s, "can be told from noise with 2+2 runs") || format != "text" && strings.Contains(s, "<b>x</b>") {
			t.Errorf("%s: 2+2 runs: no headline saying no change can be judged, or a relay name unescaped:\n%.600s", format, s)
		}
	}
}

// With runs too few to judge any row (2+2), the comparison says so once
// above each relay's table, naming both sides' runs and how many it takes,
// and leaves the Significance column and the "~" legend out, in text,
// Markdown and HTML; with runs enough (5+5) every row keeps its own.
func TestCompareSignificanceOnce(t *testing.T) {
	few, enough := compareFile(2, 1), compareFile(5, 1)
	for _, format := range []string{"text", "md", "html"} {
		for _, f := range []*results.File{few, enough} {
			s := compareIn(t, format, []*results.File{f}, []*results.File{f})
			note := "Significance not judged (n=2+2): the baseline has 2 runs and the candidate 2, too few for Mann-Whitney U to ever reach α=0.05; it takes 4 runs on each side (--repeat 4 or more)."
			ab, err := abTables([]*results.File{f}, []*results.File{f})
			if err != nil {
				t.Fatal(err)
			}
			relays := len(ab.tables)
			if f == few {
				if strings.Count(s, note) != relays || relays == 0 || strings.Contains(s, "too few runs") || strings.Contains(s, "Significance<") ||
					strings.Contains(s, "| Significance |") || strings.Contains(s, "Delta  Significance") || strings.Contains(s, "not significant") {
					t.Errorf("%s 2+2: want the note once per relay and no Significance column:\n%s", format, s)
				}
				continue
			}
			if strings.Contains(s, "Significance not judged") || !strings.Contains(s, "n=5+5") || !strings.Contains(s, "not significant") {
				t.Errorf("%s 5+5: want significance per row:\n%.3000s", format, s)
			}
		}
	}
}

// A side of several files states what they share (tool, machine, corpus,
// parameters) once and each file's own lines (command, time, relay) under
// "File N", in text, Markdown and HTML.
func TestCompareSideSharedOnce(t *testing.T) {
	side := func(cmd string) []*results.File {
		a, b := compareFile(0, 1), compareFile(0, 1)
		a.Args, b.Args = append(strings.Fields(cmd), "a"), append(strings.Fields(cmd), "b")
		b.StartedAt = b.StartedAt.Add(time.Hour)
		return []*results.File{a, b}
	}
	base, cand := side("run base"), side("run cand")
	for _, format := range []string{"text", "md", "html"} {
		s := compareIn(t, format, base, cand)
		machine := map[string]string{"text": "Machine:", "md": "**Machine**", "html": "<dt>Machine</dt>"}[format]
		file2 := map[string]string{"text": "  File 2:\n", "md": "- **File 2**\n", "html": "<h4>File 2</h4>"}[format]
		if strings.Count(s, machine) != 2 || strings.Count(s, file2) != 2 || format != "html" && !strings.Contains(s, "relaybench run cand b") {
			t.Errorf("%s: want the shared lines once a side and each file's own under File N:\n%.4000s", format, s)
		}
	}
}

// compareIn is the comparison of base and cand in format (text, md or
// html).
func compareIn(t *testing.T, format string, base, cand []*results.File) string {
	t.Helper()
	var b bytes.Buffer
	var err error
	if format == "html" {
		err = CompareHTML(&b, base, cand, Options{}, nil)
	} else {
		err = Compare(&b, base, cand, format)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
