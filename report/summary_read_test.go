package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
)

// The terminal summary is for reading: these tests pin each thing a reader
// met that said one thing twice, in the wrong units or in Markdown.

func summaryText(t *testing.T, f *results.File, o SummaryOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteSummary(&b, f, o); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// oneRun is a results file of one run with phases ps.
func oneRun(cmd string, params map[string]any, ps ...results.Phase) *results.File {
	f := baseFile(cmd)
	f.Runs = []results.Run{{Relay: results.Relay{Name: "khatru-native", URL: "ws://127.0.0.1:7447", Software: "khatru", Version: "0.19.1"},
		Corpus: corpusOf(200), Params: params, Phases: ps}}
	f.Runs[0].Corpus.AvgSize = 64
	f.Verdict = &results.Verdict{Status: 0, Outcome: "passed"}
	return f
}

// loadPhase is a constant-rate load phase publishing fresh 1 KB events,
// every op accepted (so accepted, sent and intended rates are equal).
func loadPhase() results.Phase {
	return results.Phase{Name: "load", Workload: "load", Duration: 3e9,
		Params: map[string]any{"kind": "publish", "size": 1024, "events_signed": 600, "pattern": "constant 200/s for 3s"},
		Counts: map[string]int64{"intended": 600, "sent": 600, "accepted": 600, "canceled": 2, "bytes_sent": 832930, "client_sched_p99_ns": 98304},
		Rates:  map[string]float64{"intended_per_sec": 199.96, "sent_per_sec": 199.96, "accepted_per_sec": 199.96},
		Latency: map[string]*results.Histogram{"ok": hist(1, 600, 569e3, 0.5), "lateness": hist(2, 600, 63e3, 0.5),
			"ok_uncorrected": hist(3, 600, 496e3, 0.5)},
		Resources: &results.Resources{RelayCPUSecs: 0.3, ClientCPUSecs: 0.21, ClientCPUUtil: 0.04},
	}
}

// Sent Rate is not printed beside Rate when it is the same figure (every
// EVENT accepted); it is when refusals make them differ.
func TestSummaryNoSentRateTwice(t *testing.T) {
	p := publishPhase(0, 1000, 500, 1e6) // seed 0: nothing refused
	p.Rates["sent_per_sec"] = p.Rates["events_per_sec"]
	for _, o := range []SummaryOptions{{}, {Brief: true}} {
		s := summaryText(t, oneRun("run", nil, p), o)
		if !strings.Contains(s, "Rate: 500.00 events/second") || strings.Contains(s, "Sent rate") {
			t.Errorf("brief %v: want Rate alone:\n%s", o.Brief, s)
		}
	}
	s := summaryText(t, singleFile(), SummaryOptions{}) // 2 of 100,000 refused
	if !strings.Contains(s, "Sent rate: 7,731.00 events/second") {
		t.Errorf("a sent rate that differs from the rate is not shown:\n%s", s)
	}
}

// find-max's step table, kept in its notes as Markdown rows, is an aligned
// text table on the terminal: no "|" rows, no "|---:|" rule.
func TestSummaryNoMarkdownTable(t *testing.T) {
	p := results.Phase{Name: "find-max", Workload: "find-max", Duration: 2e9,
		Counts: map[string]int64{"steps": 2},
		Notes: []string{"find-max: ≥ 500 events/s",
			"| offered/s | achieved/s | p99 | verdict |",
			"|---:|---:|---:|---|",
			"| 500 | 499 | 8.85ms | pass |",
			"| 1,000 | 947 | 112.07ms | FAIL: p99 112.07ms > 50ms |",
			"the event account sums every step's"}}
	p.Groups = []results.Group{{Name: "500/s", Counts: map[string]int64{"accepted": 500}}, {Name: "1,000/s", Counts: map[string]int64{"accepted": 1000}}}
	for _, o := range []SummaryOptions{{}, {Brief: true}} {
		s := summaryText(t, oneRun("find-max", nil, p), o)
		// The steps once in the brief summary: the notes' table, not also
		// the groups' (the full one has both).
		if groups := strings.Contains(s, "Find-max by group:"); groups == o.Brief {
			t.Errorf("brief %v: groups table shown %v:\n%s", o.Brief, groups, s)
		}
		if strings.Contains(s, "|") {
			t.Errorf("brief %v: Markdown in the terminal summary:\n%s", o.Brief, s)
		}
		for _, want := range []string{
			"    offered/s  achieved/s       p99  verdict\n",
			"    500               499    8.85ms  pass\n",
			"    1,000             947  112.07ms  FAIL: p99 112.07ms > 50ms\n",
			"  Note: find-max: ≥ 500 events/s\n", "  Note: the event account sums every step's\n",
		} {
			if !strings.Contains(s, want) {
				t.Errorf("brief %v: lacks %q:\n%s", o.Brief, want, s)
			}
		}
	}
}

// A sweep's points that note the same thing with other figures give, in
// the brief summary, one line under one heading naming the sizes, one
// heading form for every group, one note or several (in
// payload sizes, not phase names; results keys in words); the full one
// gives each distinct text once, with its sizes.
func TestSummarySweepNotesCollapsed(t *testing.T) {
	ps := sweepNotePhases()
	s := summaryText(t, oneRun("sweep", nil, ps...), SummaryOptions{Brief: true})
	want := "  Notes for every size (numbers shown for 256 B; -v shows each size's):\n" +
		"    neither side saturated its CPU (client 0.0, relay 0.0 cores)\n" +
		"    payload sweep at 256 content bytes: throughput (msg/s) counts accepted events\n" +
		"    closed loop: 4 connections\n" +
		"  Note for 2 KiB and 2560 B:\n    the relay closed the connection once\n"
	if !strings.Contains(s, want) || strings.Contains(s, "  Note (") || strings.Contains(s, "sweep/") || strings.Contains(s, "msgs_per_sec") {
		t.Errorf("brief: want the notes once, under the sizes that have them, in words:\n%s\nin:\n%s", want, s)
	}
	full := summaryText(t, oneRun("sweep", nil, ps...), SummaryOptions{})
	if n := strings.Count(full, "  Note (every size): closed loop: 4 connections\n"); n != 1 {
		t.Errorf("full: a note of every size printed %d times, want once:\n%s", n, full)
	}
	for _, want := range []string{"  Note (256 B): payload sweep at 256 content bytes: throughput (msg/s) counts accepted events\n",
		"  Note (1 KiB): neither side saturated its CPU (client 0.3, relay 0.3 cores)\n",
		"  Note (2 KiB and 2560 B): the relay closed the connection once\n"} {
		if !strings.Contains(full, want) {
			t.Errorf("full: lacks %q:\n%s", want, full)
		}
	}
}

// sweepNotePhases are 42 sweep points (256 B to 10752 B) whose notes say
// the same with other figures, one with the same figures, and one note two
// points have.
func sweepNotePhases() []results.Phase {
	var ps []results.Phase
	for i := range 42 {
		size := 256 * (i + 1)
		ps = append(ps, results.Phase{Name: fmt.Sprintf("sweep/%d", size), Workload: "publish", Size: size, Duration: 1e9,
			Counts: map[string]int64{"sent": 100, "accepted": 100},
			Rates:  map[string]float64{"events_per_sec": 100, "msgs_per_sec": 100},
			Notes: []string{fmt.Sprintf("neither side saturated its CPU (client 0.%d, relay %d.%d cores)", i, i/10, i),
				fmt.Sprintf("payload sweep at %d content bytes: msgs_per_sec counts accepted events", size), "closed loop: 4 connections"}})
	}
	ps[7].Notes = append(ps[7].Notes, "the relay closed the connection once")
	ps[9].Notes = append(ps[9].Notes, "the relay closed the connection once")
	return ps
}

// Markdown and HTML list a sweep's note that every size has once, and a
// note of some sizes once, naming them.
func TestReportSweepNotesOnce(t *testing.T) {
	f := oneRun("sweep", nil, sweepNotePhases()...)
	var md, page bytes.Buffer
	if err := Markdown(&md, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"markdown": md.String(), "html": page.String()} {
		if strings.Count(s, "closed loop: 4 connections") != 1 || !strings.Contains(s, "khatru-native, sweep at every size: closed loop: 4 connections") ||
			strings.Count(s, "the relay closed the connection once") != 1 || !strings.Contains(s, "sweep at 2 KiB and 2560 B: the relay closed") ||
			!strings.Contains(s, "khatru-native, sweep at 1 KiB: neither side saturated its CPU (client 0.3, relay 0.3 cores)") {
			t.Errorf("%s: want each sweep note once with its sizes:\n%s", name, s)
		}
	}
}

// A run that published fresh events (load, find-max) shows them, not the
// corpus it took the keys from; its params leave out what does not apply.
func TestSummaryLoadHeader(t *testing.T) {
	params := map[string]any{"base": 200, "connections": 0, "constraints": "", "duration": "3s", "kind": "publish",
		"mix": "4:1", "pattern": "constant", "peak": 200, "pool": 10, "size": 1024, "suite": "", "warmup": "0s"}
	s := summaryText(t, oneRun("load", params, loadPhase()), SummaryOptions{})
	if !strings.Contains(s, "Events:   fresh events signed before the clock, average content 1,024 B, keys of seed 42 (100 authors)") ||
		strings.Contains(s, "Corpus:") || strings.Contains(s, "64 B") {
		t.Errorf("the header does not show what was published:\n%s", s)
	}
	if !strings.Contains(s, "Params:   base 200, duration 3.00s, kind publish, pattern constant, pool 10, size 1,024\n") {
		t.Errorf("params that do not apply are shown:\n%s", s)
	}
	// A run that publishes the corpus keeps its corpus line.
	s = summaryText(t, singleFile(), SummaryOptions{})
	if !strings.Contains(s, "Corpus:   100,000 events") || strings.Contains(s, "Events:   fresh") {
		t.Errorf("the corpus line of a run publishing it is gone:\n%s", s)
	}
	// A mixed load's mix applies.
	if got := paramsLine(map[string]any{"kind": "mixed", "mix": "4:1"}); got != "kind mixed, mix 4:1" {
		t.Errorf("paramsLine of a mixed load = %q", got)
	}
	// In words, one rule for every format: numbers grouped, a switch named
	// when on and left out when off, a list as its flag takes it.
	if got := paramsLine(map[string]any{"publish_rate": 1000.0, "skip_preload": false, "workloads": []any{"subscribe", "lifecycle"}, "ratio": 0.5}); got != "publish rate 1,000, ratio 0.5, workloads subscribe,lifecycle" {
		t.Errorf("paramsLine in words = %q", got)
	}
	if got := paramsLine(map[string]any{"force": false, "no_req": true, "events": 200}); got != "events 200, no req" {
		t.Errorf("paramsLine of switches = %q", got)
	}
	// A rate of 0 (subscribe's, sweep's) is their closed loop, not a raw 0.
	if got := paramsLine(map[string]any{"rate": 0.0, "mode": "pipeline", "events": 300}); got != "events 300, mode pipeline, closed loop" {
		t.Errorf("paramsLine of a closed loop = %q", got)
	}
	// A zero that is a setting stays.
	if got := paramsLine(map[string]any{"max_drops": 0, "connections": 0, "pattern": "spike", "peak": 800}); got != "max drops 0, pattern spike, peak 800" {
		t.Errorf("paramsLine = %q", got)
	}
}

// One spelling printed: "cancelled", in counters and in group tables
// (load's results key stays "canceled").
func TestSummaryCancelledSpelling(t *testing.T) {
	p := loadPhase()
	p.Groups = []results.Group{{Name: "500/s", Counts: map[string]int64{"accepted": 500, "canceled": 1}}}
	for _, o := range []SummaryOptions{{}, {Brief: true}} {
		s := summaryText(t, oneRun("load", nil, p), o)
		if strings.Contains(strings.ToLower(s), "canceled") || !strings.Contains(s, "Cancelled: 2") {
			t.Errorf("brief %v: 'canceled' printed or Cancelled missing:\n%s", o.Brief, s)
		}
	}
}

// The brief summary (the CLI's without -v) leads with the verdict and
// shows the headline figures; the tool, machine, params, byte counts,
// client timings, other latencies, equal rates and resources are -v away.
func TestSummaryBrief(t *testing.T) {
	params := map[string]any{"base": 200, "pattern": "constant"}
	f := oneRun("load", params, loadPhase())
	s := summaryText(t, f, SummaryOptions{Brief: true})
	if !strings.HasPrefix(s, "=== Benchmark Results: PASSED (exit 0) ===\n") {
		t.Errorf("the brief summary does not lead with the verdict:\n%s", s)
	}
	if !strings.HasSuffix(s, "Verdict: PASSED (exit 0): all requested work ran and every check passed\n") {
		t.Errorf("the brief summary does not end with the verdict:\n%s", s)
	}
	for _, want := range []string{"Command:", "Relay:", "Events:", "Accepted: 600", "Accepted rate: 199.96 events/second (as intended)",
		"OK Latency (from intended send time): p50", "-v shows every counter"} {
		if !strings.Contains(s, want) {
			t.Errorf("brief lacks %q:\n%s", want, s)
		}
	}
	for _, not := range []string{"Tool:", "Machine:", "Params:", "When:", "Bytes sent", "Client scheduling", "Lateness (",
		"from actual send", "Sent rate", "Intended rate", "Client CPU", "Relay Resources"} {
		if strings.Contains(s, not) {
			t.Errorf("brief shows %q:\n%s", not, s)
		}
	}
	// The full summary has them all.
	full := summaryText(t, f, SummaryOptions{})
	for _, want := range []string{"=== Benchmark Results: ", "Tool:", "Machine:", "Params:", "Bytes sent: 813 KiB",
		"Client scheduling wait p99: 98.3µs", "Lateness (actual − intended send time)", "Sent rate", "Client CPU"} {
		if !strings.Contains(full, want) {
			t.Errorf("full summary lacks %q:\n%s", want, full)
		}
	}
	// Headline counters that did not happen are left out of the brief
	// one; verification says its counts in one line, faults only.
	q := queryPhase(1, 600, 28, 30e6, 3)
	s = summaryText(t, oneRun("run", nil, publishPhase(0, 1000, 500, 1e6), q), SummaryOptions{Brief: true})
	for _, not := range []string{"Refused: 0", "Timed Out: 0", "Failed: 0", "Total Data", "Bandwidth", "Outcomes"} {
		if strings.Contains(s, not) {
			t.Errorf("brief shows %q:\n%s", not, s)
		}
	}
	if !strings.Contains(s, "Verification: FAILED (600 answers checked: missing 3)\n") {
		t.Errorf("brief verification line:\n%s", s)
	}
}

// A short run's header gives its length in a human unit in the summary,
// Markdown and HTML: "(420ms)", never "(0s)" for a run that took time.
func TestHeaderShortRunLength(t *testing.T) {
	f := oneRun("run", nil, publishPhase(0, 100, 500, 1e6))
	f.FinishedAt = f.StartedAt.Add(420 * time.Millisecond)
	var md, page bytes.Buffer
	if err := Markdown(&md, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"summary": summaryText(t, f, SummaryOptions{}), "markdown": md.String(), "html": page.String()} {
		if !strings.Contains(s, "(420ms)") || strings.Contains(s, "(0s)") {
			t.Errorf("%s: want the run's length as (420ms):\n%s", name, s)
		}
	}
}

// A table a phase's notes hold (find-max's steps) is a table in Markdown
// and HTML, titled with its phase and relay, not list items of pipes; in
// HTML a long text cell (a step's verdict) wraps instead of running past
// the page.
func TestReportNoteTable(t *testing.T) {
	p := results.Phase{Name: "find-max", Workload: "find-max", Duration: 2e9, Counts: map[string]int64{"steps": 2},
		Notes: []string{"find-max: ≥ 500 events/s", "| offered/s | p99 | verdict |", "|---:|---:|---|", "| 500 | 23.1ms | pass |", "| 1,000 | 57.8ms | <b>fail</b> |",
			"| 2,000 | 99.0ms | client-limited: p99 99.0ms > 50ms (client-limited: the dispatcher handed ops out late) |", "stopped at 1,000/s"}}
	f := oneRun("find-max", nil, p)
	var md, page bytes.Buffer
	if err := Markdown(&md, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	if s := md.String(); !strings.Contains(s, "### Find-max — khatru-native\n\n| offered/s | p99 | verdict |\n|---|---:|---|\n| 500 | 23.1ms | pass |\n") ||
		strings.Contains(s, "- khatru-native, find-max: |") || !strings.Contains(s, "- khatru-native, find-max: stopped at 1,000/s") {
		t.Errorf("markdown: want the steps as a table and the other notes listed:\n%s", s)
	}
	if s := page.String(); !strings.Contains(s, "<h3>Find-max — khatru-native</h3>") || !strings.Contains(s, `<td>1,000</td><td class="num">57.8ms</td><td>&lt;b&gt;fail&lt;/b&gt;</td>`) ||
		strings.Contains(s, "<li>khatru-native, find-max: |") || !strings.Contains(s, `<td class="warn long">client-limited: p99 99.0ms`) {
		t.Errorf("html: want the steps as a table, escaped, a long verdict wrapping (class long):\n%s", s)
	}
}
