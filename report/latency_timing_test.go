package report

import (
	"bytes"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// mixedLoadPhase is a load mixing publishes and queries: its publishes'
// OK and its queries' EOSE, each kept from the intended send time and
// from the actual send, in the phase and in its two groups.
func mixedLoadPhase() results.Phase {
	lat := func(seed uint64, n string, med float64) map[string]*results.Histogram {
		return map[string]*results.Histogram{n: hist(seed, 75, med, 0.4), n + "_uncorrected": hist(seed+1, 75, med*0.9, 0.4)}
	}
	pub, qry := lat(1, "ok", 640e3), lat(3, "eose", 2.5e6)
	all := map[string]*results.Histogram{"lateness": hist(5, 150, 70e3, 0.5), "op": hist(6, 150, 1e6, 0.5), "op_uncorrected": hist(7, 150, 9e5, 0.5)}
	for _, m := range []map[string]*results.Histogram{pub, qry} {
		for k, h := range m {
			all[k] = h
		}
	}
	return results.Phase{Name: "load", Workload: "load", Duration: 3e9,
		Params: map[string]any{"kind": "mixed", "mix": "1:1", "size": 1024, "pattern": "constant 50/s for 3s"},
		Counts: map[string]int64{"accepted": 75, "queries": 75, "events_returned": 1441, "ops_accepted": 150, "intended": 150},
		Rates:  map[string]float64{"accepted_per_sec": 24.99, "queries_per_sec": 24.99, "intended_per_sec": 49.99},
		Groups: []results.Group{
			{Name: "publish", Counts: map[string]int64{"accepted": 75}, Rates: map[string]float64{"accepted_per_sec": 24.99}, Latency: pub},
			{Name: "query", Counts: map[string]int64{"queries": 75}, Rates: map[string]float64{"queries_per_sec": 24.99}, Latency: qry}},
		Latency: all}
}

// A load mixing publishes and queries shows its queries' EOSE latency
// beside its publishes' OK latency: a line each in the brief summary and
// columns each in the group table, where the table had OK columns alone
// and the query row was all dashes.
func TestMixedLoadQueryLatency(t *testing.T) {
	f := oneRun("load", nil, mixedLoadPhase())
	s := summaryText(t, f, SummaryOptions{Brief: true})
	for _, re := range []string{`(?m)^  Events accepted: 75$`, `(?m)^  Corpus: .*\n  Events:   the load's publishes: fresh events signed before the clock, average content 1,024 B; its queries ask for the corpus$`, `(?m)^  OK Latency \(from intended send time\): p50 `, `(?m)^  EOSE Latency \(from intended send time\): p50 `,
		`(?m)^    Group +.*OK p50 +OK p99 +EOSE p50 +EOSE p99$`,
		`(?m)^    publish .*\d(µs|ms) +\S*\d(µs|ms) +– +–$`, `(?m)^    query .* – +– +\S*\d(µs|ms) +\S*\d(µs|ms)$`} {
		if !regexp.MustCompile(re).MatchString(s) {
			t.Errorf("brief lacks %s:\n%s", re, s)
		}
	}
	// Its per-second series times every operation, publishes and queries.
	lp := mixedLoadPhase()
	lp.Series = series(3, 3, 50, 1e6)
	cs, err := charts([]*results.File{oneRun("load", nil, lp)})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(cs, func(c *chart) bool { return c.title == "Load: operation latency (from intended send time) over time" }) {
		t.Errorf("no latency-over-time chart of the operations among %d charts", len(cs))
	}
	var md bytes.Buffer
	if err := Markdown(&md, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^\| Relay \| Group \|.* OK p50 \| OK p99 \| EOSE p50 \| EOSE p99 \|`).MatchString(md.String()) ||
		!strings.Contains(md.String(), "OK and EOSE latency (from intended send time): ") {
		t.Errorf("Markdown group table:\n%s", md.String())
	}
}

// Load's OK latency, timed from each event's intended send time, says so
// wherever it is labelled: the summaries' lines, the tables of Markdown
// and HTML; the latency from the actual send is labelled as such (-v),
// never "Ok Uncorrected". Find-max, whose steps are groups, says it over
// its group table.
func TestLoadLatencyFromIntended(t *testing.T) {
	f := oneRun("load", nil, loadPhase())
	brief := summaryText(t, f, SummaryOptions{Brief: true})
	if !strings.Contains(brief, "\n  OK Latency (from intended send time): p50 ") {
		t.Errorf("brief:\n%s", brief)
	}
	full := summaryText(t, f, SummaryOptions{})
	for _, want := range []string{"\n  OK Latency (from intended send time): p50 ", "\n  OK Latency (from actual send time): p50 ",
		"\n  Lateness (actual − intended send time): p50 "} {
		if !strings.Contains(full, want) {
			t.Errorf("full lacks %q:\n%s", want, full)
		}
	}
	if strings.Contains(strings.ToLower(full), "uncorrected") || strings.Contains(full, "Lateness Latency") {
		t.Errorf("full summary names a results key:\n%s", full)
	}
	lead := "OK latency (from intended send time): "
	for format, render := range map[string]func(io.Writer, []*results.File, Options) error{"md": Markdown, "html": HTML} {
		var b bytes.Buffer
		if err := render(&b, []*results.File{f}, Options{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), lead) {
			t.Errorf("%s lacks %q", format, lead)
		}
	}
	cs, err := charts([]*results.File{f})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(cs, func(c *chart) bool { return c.title == "Load: OK latency (from intended send time) by percentile" }) {
		t.Errorf("no spectrum chart titled with the timing among %d charts", len(cs))
	}
	step := func(name string) results.Group {
		return results.Group{Name: name, Counts: map[string]int64{"accepted": 200},
			Latency: map[string]*results.Histogram{"ok": hist(1, 200, 5e5, 0.4), "ok_uncorrected": hist(2, 200, 4e5, 0.4)}}
	}
	fm := results.Phase{Name: "find-max", Workload: "find-max", Duration: 2e9, Counts: map[string]int64{"steps": 2},
		Groups: []results.Group{step("200/s"), step("400/s")}}
	full = summaryText(t, oneRun("find-max", nil, fm), SummaryOptions{})
	if !regexp.MustCompile(`(?m)^    OK latency \(from intended send time\): .*\n    Group .*OK p50  OK p99`).MatchString(full) {
		t.Errorf("find-max's group table does not say how OK is timed:\n%s", full)
	}
	// The brief summary shows the steps' table its notes hold instead.
	fm.Notes = []string{"find-max: ≥ 400 events/s", "| offered/s | p50 | p99 |", "|---:|---:|---:|", "| 200 | 500µs | 1ms |"}
	brief = summaryText(t, oneRun("find-max", nil, fm), SummaryOptions{Brief: true})
	if !regexp.MustCompile(`(?m)^    OK latency \(from intended send time\): .*\n    offered/s +p50 +p99$`).MatchString(brief) {
		t.Errorf("find-max's steps table does not say how OK is timed:\n%s", brief)
	}
	var md bytes.Buffer
	if err := Markdown(&md, []*results.File{oneRun("find-max", nil, fm)}, Options{}); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^### Find-max — .*\n\nOK latency \(from intended send time\): .*\n\n\| offered/s \|`).MatchString(md.String()) {
		t.Errorf("Markdown steps table:\n%s", md.String())
	}
}

// Burst keeps OK latency both ways ("ok" from the actual send,
// "ok_from_intended"): the full summary labels each; the brief one names
// the key its notes give in words.
func TestBurstLatencyTimingWords(t *testing.T) {
	p := burstPhase()
	p.Latency["ok_from_intended"] = hist(9, 200, 3e6, 0.5)
	p.Notes = append(p.Notes, "events went out late: p99 6.84ms behind the schedule; ok_from_intended counts from the scheduled time")
	brief := summaryText(t, oneRun("burst", nil, p), SummaryOptions{Brief: true})
	if !strings.Contains(brief, "\n  OK Latency (from actual send time): p50 ") ||
		!strings.Contains(brief, "behind the schedule; OK latency (from intended send time) counts from the scheduled time\n") {
		t.Errorf("brief:\n%s", brief)
	}
	full := summaryText(t, oneRun("burst", nil, p), SummaryOptions{})
	if !strings.Contains(full, "\n  OK Latency (from intended send time): p50 ") || !strings.Contains(full, "; ok_from_intended counts") {
		t.Errorf("full: want both timings labelled and the note as the results file has it:\n%s", full)
	}
}
