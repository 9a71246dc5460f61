package report

import (
	"bytes"
	"encoding/xml"
	"html"
	"slices"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/threshold"
)

// gateRun is a run of relay with a publish rate and a query phase whose
// verification passed or not.
func gateRun(relay string, rate float64, passed bool) results.Run {
	return results.Run{
		Relay:  results.Relay{Name: relay},
		Corpus: results.Corpus{Seed: 1, Events: 100, Authors: 10, AvgSize: 64},
		Params: map[string]any{"events": 100, "relays": []any{relay + "=cmd " + relay}, "repeat": 4},
		Phases: []results.Phase{
			{Name: "publish", Rates: map[string]float64{"events_per_sec": rate}, Latency: map[string]*results.Histogram{"ok": {Count: 1, Percentiles: map[string]int64{"99": int64(1e9 / rate)}}}},
			{Name: "query", Verification: &results.Verification{Verified: true, Passed: passed, Checked: 3, Missing: map[bool]int64{false: 2}[passed]}},
		},
	}
}

func gateFile(relay string, rates ...float64) *results.File {
	f := &results.File{Machine: results.Machine{CPUModel: "cpu", Cores: 2, OS: "linux", Arch: "amd64"}}
	for i, r := range rates {
		run := gateRun(relay, r, true)
		run.Repeat = i + 1
		f.Runs = append(f.Runs, run)
	}
	return f
}

// parsedJUnit mirrors the JUnit schema for reading a report back.
type parsedJUnit struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			Skipped *struct{} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestJUnitParsesBack(t *testing.T) {
	f := &results.File{Runs: []results.Run{gateRun("a\x1b[31m<&>", 1000, true), gateRun("b", 10, false)}}
	f.Runs = append(f.Runs, results.Run{Relay: results.Relay{Name: "c"}, Skipped: "no binary"})
	var ts []threshold.Threshold
	for _, s := range []string{"publish.rate>100", "publish.okk.p99<1s"} {
		th, err := threshold.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, th)
	}
	f.Thresholds = threshold.Evaluate(f, ts)
	f.Verdict = &results.Verdict{Status: 3, Outcome: "wrong answers", Reasons: []string{"b query: verification failed (2 missing)"}}
	var buf bytes.Buffer
	if err := JUnit(&buf, f); err != nil {
		t.Fatal(err)
	}
	var got parsedJUnit
	if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("not valid XML: %v\n%s", err, buf.String())
	}
	if len(got.Suites) != 3 || got.Suites[0].Name != "thresholds" || got.Suites[1].Name != "verification" || got.Suites[2].Name != "verdict" {
		t.Fatalf("suites: %+v", got.Suites)
	}
	th := got.Suites[0]
	// 2 thresholds × 2 relays measured: rate passes for a, fails for b; okk.p99 is an error for both.
	if th.Tests != 4 || th.Failures != 1 || th.Errors != 2 {
		t.Errorf("thresholds suite: %d tests, %d failures, %d errors", th.Tests, th.Failures, th.Errors)
	}
	if c := th.Cases[1]; c.Failure == nil || !strings.Contains(c.Failure.Message, "publish.rate = 10/s, limit > 100/s") {
		t.Errorf("failed threshold case: %+v", c)
	}
	ver := got.Suites[1]
	if ver.Tests != 3 || ver.Failures != 1 || ver.Skipped != 1 {
		t.Errorf("verification suite: %+v", ver)
	}
	if got.Tests != 8 || got.Failures != 3 || got.Errors != 2 {
		t.Errorf("totals: %d tests, %d failures, %d errors", got.Tests, got.Failures, got.Errors)
	}
	if strings.Contains(buf.String(), "\x1b") {
		t.Error("escape character from a relay name reached the XML")
	}
}

func TestCheckFailOn(t *testing.T) {
	fo := func(s string) []threshold.FailOn {
		f, err := threshold.ParseFailOn(s)
		if err != nil {
			t.Fatal(err)
		}
		return []threshold.FailOn{f}
	}
	base := []*results.File{gateFile("r", 1000, 1010, 990, 1005, 995)}
	slower := []*results.File{gateFile("r", 800, 810, 790, 805, 795)}  // -20 %, every run below every baseline run
	noisy := []*results.File{gateFile("r", 500, 1300, 650, 1200, 800)} // median -20 %, spread over the baseline's
	faster := []*results.File{gateFile("r", 1500, 1510, 1490, 1505, 1495)}

	rs := CheckFailOn(base, slower, fo("publish.rate:-10%"))
	if len(rs) != 1 || !rs[0].Significant || !rs[0].Crossed || !rs[0].Failed || rs[0].N1 != 5 {
		t.Errorf("significant drop: %+v", rs)
	}
	rs = CheckFailOn(base, slower, fo("publish.rate:-30%"))
	if rs[0].Failed || !rs[0].Significant || rs[0].Crossed {
		t.Errorf("significant drop within the limit: %+v", rs)
	}
	noisyBase := []*results.File{gateFile("r", 1000, 1400, 600, 1100, 900)}
	rs = CheckFailOn(noisyBase, noisy, fo("publish.rate:-10%"))
	if rs[0].Failed || rs[0].Significant || !rs[0].Crossed {
		t.Errorf("not significant (~) failed: %+v", rs)
	}
	rs = CheckFailOn(base, faster, fo("publish.rate:-10%"))
	if rs[0].Failed {
		t.Errorf("a faster candidate failed -10%%: %+v", rs)
	}
	rs = CheckFailOn(base, faster, fo("publish.ok.p99:-10%"))
	if !rs[0].Failed {
		t.Errorf("latency dropped 33 %% significantly, limit -10%%: %+v", rs)
	}
	// Too few runs to ever be significant: an error, not a silent pass.
	rs = CheckFailOn([]*results.File{gateFile("r", 1000, 1000, 1000)}, []*results.File{gateFile("r", 1, 1, 1)}, fo("publish.rate:-10%"))
	if rs[0].Error == "" || !strings.Contains(rs[0].Error, "at least 4 runs") {
		t.Errorf("3+3 runs: %+v", rs)
	}
	rs = CheckFailOn(base, slower, fo("publish.nosuch:-10%"))
	if rs[0].Error == "" || !strings.Contains(rs[0].Error, "publish has latencies ok") || !strings.Contains(rs[0].Error, "keys events_per_sec") {
		t.Errorf("unknown figure: %+v", rs)
	}
	rs = CheckFailOn(base, slower, fo("publish.rate{relay=x}:-10%"))
	if rs[0].Error == "" {
		t.Errorf("unknown relay: %+v", rs)
	}
	var buf bytes.Buffer
	WriteFailOn(&buf, CheckFailOn(base, slower, fo("publish.rate:-10%")), true)
	if !strings.Contains(buf.String(), "| publish.rate:-10% | r | 1,000/s | 800/s | -20.0% | p=0.008 n=5+5 | FAIL |") {
		t.Errorf("markdown:\n%s", buf.String())
	}
	var x bytes.Buffer
	if err := WriteJUnit(&x, "relaybench", FailOnJUnit(CheckFailOn(base, slower, fo("publish.rate:-10%")))); err != nil {
		t.Fatal(err)
	}
	var got parsedJUnit
	if err := xml.Unmarshal(x.Bytes(), &got); err != nil || got.Failures != 1 || got.Suites[0].Name != "fail-on" {
		t.Errorf("fail-on JUnit: %+v, %v", got, err)
	}
}

func TestComparable(t *testing.T) {
	a, b := gateFile("r", 1, 2), gateFile("r", 3, 4)
	b.Runs[0].Params["relays"] = []any{"r=other command"} // the relay command is what is compared
	if err := Comparable([]*results.File{a}, []*results.File{b}); err != nil {
		t.Errorf("same corpus, parameters and machine: %v", err)
	}
	c := gateFile("r", 1, 2)
	c.Runs[1].Corpus.Events, c.Runs[1].Corpus.AvgSize = 2000, 1024
	if err := Comparable([]*results.File{a}, []*results.File{c}); err == nil || !strings.Contains(err.Error(), "differ in corpus") || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "2,000 events, 10 authors, average content 1,024 B") {
		t.Errorf("different corpus (counts grouped): %v", err)
	}
	d := gateFile("r", 1, 2)
	d.Runs[0].Params["concurrency"] = 10
	if err := Comparable([]*results.File{a}, []*results.File{d}); err == nil || !strings.Contains(err.Error(), "differ in parameter concurrency") {
		t.Errorf("different parameters: %v", err)
	}
	// Two dumps of the same size and name but other events: the fingerprint decides.
	fa, fb := gateFile("r", 1, 2), gateFile("r", 1, 2)
	for i := range fa.Runs {
		fa.Runs[i].Corpus.Source, fa.Runs[i].Corpus.Fingerprint = "d.ndjson", "aa11"
		fb.Runs[i].Corpus.Source, fb.Runs[i].Corpus.Fingerprint = "d.ndjson", "bb22"
	}
	if err := Comparable([]*results.File{fa}, []*results.File{fa}); err != nil {
		t.Errorf("same dump: %v", err)
	}
	if err := Comparable([]*results.File{fa}, []*results.File{fb}); err == nil || !strings.Contains(err.Error(), "fingerprint") {
		t.Errorf("dumps with different fingerprints: %v", err)
	}
	e := gateFile("r", 1, 2)
	e.Machine.Cores = 64
	if err := Comparable([]*results.File{a}, []*results.File{e}); err == nil || !strings.Contains(err.Error(), "differ in machine") || !strings.Contains(err.Error(), "--force") {
		t.Errorf("different machine: %v", err)
	}
}

// The Markdown and HTML reports show the thresholds table the terminal
// summary shows: each threshold, relay, value, limit and result.
func TestThresholdsInMarkdownAndHTML(t *testing.T) {
	f := gateFile("strfry", 5000, 6000, 7000)
	ts, err := threshold.ParseAll([]string{"publish.rate>6500", "query.verification==passed"})
	if err != nil {
		t.Fatal(err)
	}
	f.Thresholds = threshold.Evaluate(f, ts)
	var md, page bytes.Buffer
	if err := Markdown(&md, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Thresholds", "publish.rate>6500", "FAIL", "query.verification==passed", "pass"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q", want)
		}
		if !strings.Contains(page.String(), html.EscapeString(want)) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if !strings.Contains(md.String(), "| publish.rate>6500 | strfry | 6,000/s (median of 3) |") {
		t.Errorf("Markdown row:\n%s", md.String())
	}
}

// Two baselines that differ from each other are said to, with the parameter
// that differs; the candidate is not named.
func TestComparableBaselinesDiffer(t *testing.T) {
	a, b, c := gateFile("r", 1), gateFile("r", 1), gateFile("r", 1)
	b.Runs[0].Params["workloads"] = []string{"subscribe", "lifecycle"}
	err := Comparable([]*results.File{a, b}, []*results.File{c})
	if err == nil {
		t.Fatal("baselines with different workloads: no error")
	}
	msg := err.Error()
	for _, want := range []string{"the baselines differ among themselves in parameter workloads", "baseline 1: workloads not set", "baseline 2: workloads subscribe,lifecycle"} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in %q", want, msg)
		}
	}
	if strings.Contains(msg, "candidate") || strings.Contains(msg, "concurrency") {
		t.Errorf("names the candidate or an equal parameter: %q", msg)
	}
	d := gateFile("r", 1)
	d.Runs[0].Params["concurrency"] = 10
	if err := Comparable([]*results.File{a}, []*results.File{d}); err == nil || !strings.Contains(err.Error(), "baseline and candidate differ in parameter concurrency (baseline 1: concurrency ") {
		t.Errorf("candidate differing: %v", err)
	}
}

// A skipped relay's count is a column of its own: Runs stays a column of
// numbers, each right-aligned under the header.
func TestRelayTableSkippedColumn(t *testing.T) {
	f := gateFile("a", 1)
	f.Runs = append(f.Runs, results.Run{Relay: results.Relay{Name: "strfry"}, Skipped: "no binary"})
	rt := relayTable(groupRuns([]*results.File{f}))
	if got := rt.head[len(rt.head)-2:]; got[0] != "Runs" || got[1] != "Skipped" {
		t.Fatalf("head %q: want Runs, Skipped last", rt.head)
	}
	var buf bytes.Buffer
	rt.text(&buf, "")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	runsEnd := strings.Index(lines[0], "Runs") + len("Runs") // the header is ASCII
	for _, l := range lines[1:] {
		r := []rune(l) // the dash cells are not
		if strings.Contains(l, "skipped") || len(r) < runsEnd || !strings.ContainsRune("01", r[runsEnd-1]) {
			t.Errorf("Runs not a right-aligned number in %q (table:\n%s)", l, buf.String())
		}
	}
	if one := relayTable(groupRuns([]*results.File{gateFile("a", 1)})); slices.Contains(one.head, "Skipped") {
		t.Errorf("no relay skipped, yet a Skipped column: %q", one.head)
	}
}

// TestSummaryThresholdsOneBlankLine: the terminal summary's Thresholds block
// follows the runs after one blank line, not two, and shows a measured
// duration with the summary's three significant digits.
func TestSummaryThresholdsOneBlankLine(t *testing.T) {
	for _, runs := range []int{1, 2} {
		f := gateFile("strfry", 5000, 6000)
		f.Runs = f.Runs[:runs]
		f.Runs[0].Phases[0].Latency["ok"].Percentiles["99"] = 2_894_321
		ts, err := threshold.ParseAll([]string{"publish.ok.p99<1s", "publish.rate>6500"})
		if err != nil {
			t.Fatal(err)
		}
		f.Thresholds = threshold.Evaluate(f, ts)
		var b bytes.Buffer
		if err := WriteSummary(&b, f, SummaryOptions{Brief: true}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, "\nThresholds:") || strings.Contains(out, "\n\n\nThresholds:") {
			t.Errorf("%d runs: want one blank line before Thresholds:\n%s", runs, out)
		}
		if runs == 1 && (!strings.Contains(out, "2.89ms") || strings.Contains(out, "2.894ms")) {
			t.Errorf("the threshold's value not in three significant digits:\n%s", out)
		}
	}
}
