package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// burstPhase is a burst run's phase: two bursts with their recovery, and
// groups whose cancelled, failed and refused columns are all zero.
func burstPhase() results.Phase {
	grp := func(name string, n int64, lat float64) results.Group {
		return results.Group{Name: name, Counts: map[string]int64{"requested": n, "sent": n, "accepted": n, "cancelled": 0, "failed": 0, "refused": 0},
			Latency: map[string]*results.Histogram{"ok": hist(uint64(n), int(n), lat, 0.4)}}
	}
	return results.Phase{Name: "burst", Workload: "burst", Duration: 99e7,
		Counts: map[string]int64{"sent": 200, "accepted": 200, "burst_events": 100, "background_events": 100,
			"burst_1_recovery_ns": 400_000_000, "burst_2_recovery_ns": 310_123_456},
		Rates:   map[string]float64{"events_per_sec": 201.94},
		Latency: map[string]*results.Histogram{"ok": hist(7, 200, 2.26e6, 0.5), "recovery": hist(8, 2, 3.5e8, 0.1)},
		Groups:  []results.Group{grp("burst", 100, 4e6), grp("background-during-burst", 2, 2.5e6), grp("background-between-bursts", 98, 3.2e5)},
		Notes:   []string{"burst duration (start → its last OK): 4.66ms, 6.05ms"}}
}

// The brief summary shows burst's recovery times as a headline figure, in
// human units, and its group table without the columns where nothing
// happened or that restate another.
func TestSummaryBriefBurst(t *testing.T) {
	s := summaryText(t, oneRun("burst", nil, burstPhase()), SummaryOptions{Brief: true})
	if !strings.Contains(s, "  Recovery: burst 1 400ms, burst 2 310ms\n") {
		t.Errorf("brief lacks the recovery line:\n%s", s)
	}
	head := regexp.MustCompile(`(?m)^    Group +Accepted +OK p50 +OK p99$`)
	if !head.MatchString(s) {
		t.Errorf("brief group table keeps zero or restating columns:\n%s", s)
	}
	full := summaryText(t, oneRun("burst", nil, burstPhase()), SummaryOptions{})
	for _, want := range []string{"Burst 1 recovery: 400ms", "Cancelled", "Requested", "Recovery Time: p50"} {
		if !strings.Contains(full, want) {
			t.Errorf("full summary lacks %q:\n%s", want, full)
		}
	}
}

// mixedPhase is a mixed run's phase: per-part counters, which its group
// table holds, and ratios its notes state with their context. Querying
// fell to half its rate alone.
func mixedPhase() results.Phase {
	return results.Phase{Name: "mixed", Workload: "mixed", Duration: 9e9,
		Counts: map[string]int64{"publish_alone_sent": 600, "publish_alone_accepted": 600, "publish_alone_bytes_sent": 848529,
			"query_together_queries": 60, "read_back_events": 1200},
		Rates: map[string]float64{"events_per_sec": 200.31, "events_per_sec_alone": 200.2, "queries_per_sec": 10, "queries_per_sec_alone": 20,
			"publish_throughput_ratio": 1.0, "query_throughput_ratio": 0.5, "ok_p99_ratio": 0.81, "eose_p99_ratio": 2.5},
		Latency: map[string]*results.Histogram{"ok": hist(1, 600, 1.15e6, 0), "ok_alone": hist(2, 600, 1.42e6, 0),
			"eose": hist(3, 60, 5e6, 0), "eose_alone": hist(4, 60, 2e6, 0)},
		Groups: []results.Group{{Name: "publish/alone", Counts: map[string]int64{"sent": 600, "accepted": 600}},
			{Name: "query/together", Counts: map[string]int64{"queries": 60}}},
		Notes: []string{"publish throughput ratio together/alone: 1.00× (200 events/s alone, 200 together)",
			"query throughput ratio together/alone: 0.50× (20.00 queries/s alone, 10.00 together)",
			"OK p99 ratio together/alone: 0.81× (1.42ms alone, 1.15ms together)",
			"EOSE p99 ratio together/alone: 2.50× (2ms alone, 5ms together)", "three parts of 3s each"}}
}

// The brief summary gives a mixed run's verdict and each side's
// throughput and p99 alone and together in one block, and does not list a
// figure again that the block, its group table or a note already shows
// (the ratio notes are -v's); the full one lists them all.
func TestSummaryBriefMixed(t *testing.T) {
	s := summaryText(t, oneRun("mixed", nil, mixedPhase()), SummaryOptions{Brief: true})
	for _, not := range []string{"Publish alone", "Query together queries", "Publish throughput ratio:", "Ok p99 ratio:", "OK p99 ratio:",
		"ratio together/alone", "Events Rate", "Queries Rate", "per sec alone", "Events/s alone", "Queries/s alone"} {
		if strings.Contains(s, not) {
			t.Errorf("brief shows %q:\n%s", not, s)
		}
	}
	for _, want := range []string{"Read back events: 1,200", "Note: three parts of 3s each",
		"Together vs alone: EOSE p99 2.50× slower together; querying fell to 50% of its throughput alone; publishing kept its throughput; OK p99 0.81× (faster together)",
		"    publish  200 → 200 events/s (1.00×)", "    query    20.00 → 10.00 queries/s (0.50×)  EOSE 2.00ms → 5.00ms (2.50×)"} {
		if !strings.Contains(s, want) {
			t.Errorf("brief lacks %q:\n%s", want, s)
		}
	}
	full := summaryText(t, oneRun("mixed", nil, mixedPhase()), SummaryOptions{})
	for _, want := range []string{"Publish alone accepted: 600", "Publish throughput ratio: 1.00", "OK p99 ratio: 0.81", "Events/s alone: 200.20", "Queries/s alone: 20.00",
		"Note: query throughput ratio together/alone: 0.50×", "Together vs alone: "} {
		if !strings.Contains(full, want) {
			t.Errorf("full summary lacks %q:\n%s", want, full)
		}
	}
}

// durDigits finds a duration printed with more than three significant
// digits: 1.70079s, 257.163ms, 1.250303ms, 668.36µs.
var durDigits = regexp.MustCompile(`\b(\d{4,}|\d\.\d{3,}|\d{2}\.\d{2,}|\d{3}\.\d+)(ns|µs|ms|s)\b`)

// No duration in a brief summary has more than three significant digits.
func TestSummaryBriefDurationDigits(t *testing.T) {
	for _, f := range []*results.File{singleFile(), compareFile(1, 1), oneRun("burst", nil, burstPhase()), oneRun("load", nil, loadPhase())} {
		s := summaryText(t, f, SummaryOptions{Brief: true})
		if m := durDigits.FindAllString(s, -1); len(m) > 0 {
			t.Errorf("durations at raw precision %q in:\n%s", m, s)
		}
	}
}

// A relay compare skipped has one header line saying why, not a software
// "unknown (no NIP-11)" and a corpus of 0 events; the relays table counts
// it as skipped, not as a run.
func TestSummarySkippedRelay(t *testing.T) {
	f := compareFile(0, 1)
	f.Runs = append(f.Runs, results.Run{Relay: results.Relay{Name: "orly"},
		Skipped: "orly: skipped: no binary; pass --bin orly=PATH"})
	for _, o := range []SummaryOptions{{}, {Brief: true}} {
		s := summaryText(t, f, o)
		if !strings.Contains(s, "  Relay:    orly: skipped: no binary; pass --bin orly=PATH\n") ||
			strings.Contains(s, "no NIP-11") || strings.Contains(s, "0 events, 0 authors") {
			t.Errorf("brief %v: skipped relay's header:\n%s", o.Brief, s)
		}
		if strings.Count(s, "no binary; pass --bin orly=PATH") != 1 || // the Relay line only (no verdict here)
			!strings.Contains(s, "SKIPPED (the Relay line at the top says why)\n") || !regexp.MustCompile(`(?m)^  orly .* 0  +1$`).MatchString(s) { // Runs 0, Skipped 1
			t.Errorf("brief %v: skipped relay's run or relays row:\n%s", o.Brief, s)
		}
	}
}

// A phase's heading names its workload once: "Publish (query corpus)",
// "Load/constant", but "Warm-up (publish)"; every one ends in
// "Performance:" (a clients phase's was "Clients (query):").
func TestSummaryPhaseHeading(t *testing.T) {
	pub := publishPhase(0, 100, 50, 1e6)
	pub.Name = "publish (query corpus)"
	warm := publishPhase(0, 100, 50, 1e6)
	warm.Name = "warm-up"
	load := loadPhase()
	load.Name = "load/constant"
	under := loadPhase()
	under.Name = "under-load" // conformance --under-load's: names its workload already
	clients := queryPhase(0, 10, 5, 1e6, 0)
	clients.Name = "clients"
	s := summaryText(t, oneRun("run", nil, pub, warm, load, under, clients), SummaryOptions{Brief: true})
	if strings.Contains(s, "(load)") {
		t.Errorf("a heading names the load twice:\n%s", s)
	}
	for _, want := range []string{"\nPublish (query corpus) Performance:\n", "\nWarm-up (publish) Performance:\n", "\nLoad/constant Performance:\n", "\nUnder-load Performance:\n", "\nClients (query) Performance:\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("lacks heading %q:\n%s", want, s)
		}
	}
}

// The comparison's Burst table shows recovery as durations (p50, max), not
// one raw _ns counter per burst; the brief one leaves out the columns
// where nothing happened.
func TestCompareBurstTable(t *testing.T) {
	f := compareFile(0, 1)
	for i := range f.Runs {
		f.Runs[i].Phases = append(f.Runs[i].Phases, burstPhase())
	}
	full := summaryText(t, f, SummaryOptions{})
	if strings.Contains(full, "recovery ns") || strings.Contains(full, "400,000,000") ||
		!regexp.MustCompile(`(?m)^  Relay .*Recovery p50  Recovery max  Status$`).MatchString(full) {
		t.Errorf("Burst table:\n%s", full)
	}
	brief := summaryText(t, f, SummaryOptions{Brief: true})
	if regexp.MustCompile(`(?m)^  Relay .*(cancelled|failed|refused|requested)`).MatchString(brief) {
		t.Errorf("brief Burst table keeps zero or restating columns:\n%s", brief)
	}
}

// The brief summary does not list sent, intended or planned beside
// accepted when they are the same count; it does when some were lost.
func TestSummaryBriefRestatedCounts(t *testing.T) {
	p := loadPhase()
	p.Counts["planned"] = 600
	s := summaryText(t, oneRun("load", nil, p), SummaryOptions{Brief: true})
	for _, not := range []string{"Sent: 600", "Intended: 600", "Planned: 600"} {
		if strings.Contains(s, not) {
			t.Errorf("brief shows %q:\n%s", not, s)
		}
	}
	p.Counts["accepted"] = 590
	s = summaryText(t, oneRun("load", nil, p), SummaryOptions{Brief: true})
	if !strings.Contains(s, "Sent: 600") || !strings.Contains(s, "Accepted: 590") {
		t.Errorf("brief hides a sent count that differs from accepted:\n%s", s)
	}
}

// A brief summary of several runs gives each group table (query shapes)
// once, in the comparison with every run's rows, not again in each run's
// block; the full summary keeps both.
func TestSummaryBriefGroupsOnceCompared(t *testing.T) {
	f := compareFile(0, 1)
	if n := strings.Count(summaryText(t, f, SummaryOptions{Brief: true}), "Query shapes:"); n != 1 {
		t.Errorf("brief: %d query shape tables, want the comparison's alone", n)
	}
	if n := strings.Count(summaryText(t, f, SummaryOptions{}), "Query shapes:"); n != len(f.Runs)+1 {
		t.Errorf("full: %d query shape tables, want one per run and the comparison's", n)
	}
}

// Markdown and HTML give a mixed phase's together-vs-alone table, one row
// per side, and leave the figures it and the group table show out of the
// phase's own table (a 43-column table in a real run).
func TestMixedTables(t *testing.T) {
	f := oneRun("mixed", nil, mixedPhase())
	var md bytes.Buffer
	if err := Markdown(&md, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	s := md.String()
	for _, want := range []string{"### Mixed: together vs alone",
		"| khatru-native | publish | 200 events/s | 200 events/s | 1.00× | OK | 1.42ms | 1.15ms | 0.81× |",
		"| khatru-native | query | 20.00 queries/s | 10.00 queries/s | 0.50× | EOSE | 2.00ms | 5.00ms | 2.50× |"} {
		if !strings.Contains(s, want) {
			t.Errorf("lacks %q:\n%s", want, s)
		}
	}
	i := strings.Index(s, "### Mixed\n")
	if i < 0 {
		t.Fatalf("no table of the phase:\n%s", s)
	}
	own := s[i+1:]
	own = s[i : i+1+strings.Index(own, "###")]
	for _, not := range []string{"publish alone", "query together", " ratio |", "per sec"} {
		if strings.Contains(strings.ToLower(own), not) {
			t.Errorf("the phase's table repeats %q:\n%s", not, own)
		}
	}
	if !strings.Contains(own, "Read back events") {
		t.Errorf("the phase's table lost its own figures:\n%s", own)
	}
}

// A share of successes is a percentage with two decimals (one failure in
// 2,000 is 99.95%, not 100% or 1.00), in the summary and the group table;
// find-max's rates are events per second, not bare numbers.
func TestSummaryShareAndOfferedRates(t *testing.T) {
	p := burstPhase()
	p.Rates["between_success_rate"] = 0.9995
	p.Groups[0].Rates = map[string]float64{"success_rate": 1}
	fm := results.Phase{Name: "find-max", Workload: "find-max", Duration: 2e9, Counts: map[string]int64{"steps": 2},
		Rates: map[string]float64{"max_rate": 500, "first_failing_rate": 1000}}
	for _, o := range []SummaryOptions{{}, {Brief: true}} {
		s := summaryText(t, oneRun("burst", nil, p, fm), o)
		share := "Success between bursts: 99.95%\n" // its label in both summaries
		for _, want := range []string{share, "Max rate: 500 events/second\n", "First failing rate: 1,000 events/second\n"} {
			if !strings.Contains(s, want) {
				t.Errorf("brief %v: lacks %q:\n%s", o.Brief, want, s)
			}
		}
		if !regexp.MustCompile(`(?m)^    burst .* 100\.00% `).MatchString(s) {
			t.Errorf("brief %v: the group's success rate is not a percentage:\n%s", o.Brief, s)
		}
	}
}

// A burst the background never slowed (the workload stores 1 ns: its first
// background event after the burst's start was within bounds) reads "at
// once" in the brief summary, not "1ns".
func TestSummaryBriefRecoveryAtOnce(t *testing.T) {
	p := burstPhase()
	p.Counts["burst_1_recovery_ns"] = 1
	s := summaryText(t, oneRun("burst", nil, p), SummaryOptions{Brief: true})
	if !strings.Contains(s, "  Recovery: burst 1 at once, burst 2 310ms\n") {
		t.Errorf("brief recovery line:\n%s", s)
	}
}

// A find-max search where no rate passed says so, not "Max rate: 0.00
// events/second" beside a verdict that says the capacity is unknown.
func TestSummaryFindMaxNoRatePassed(t *testing.T) {
	fm := results.Phase{Name: "find-max", Workload: "find-max", Duration: 2e9, Counts: map[string]int64{"steps": 1},
		Rates: map[string]float64{"max_rate": 0, "first_failing_rate": 1000}}
	for _, o := range []SummaryOptions{{}, {Brief: true}} {
		s := summaryText(t, oneRun("find-max", nil, fm), o)
		if strings.Contains(s, "0.00 events/second") || !strings.Contains(s, "Max rate: none passed\n") {
			t.Errorf("brief %v: a search with no passing rate reads:\n%s", o.Brief, s)
		}
	}
}
