package threshold

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in, figure, relay, op string
		limit                 float64
		unit                  string
	}{
		{"publish.ok.p99<20ms", "publish.ok.p99", "", "<", 20e6, UnitNs},
		{" query.eose.p99 <= 50ms ", "query.eose.p99", "", "<=", 50e6, UnitNs},
		{"publish.rate>5000", "publish.rate", "", ">", 5000, UnitCount},
		{"publish.rate>=5k", "publish.rate", "", ">=", 5000, UnitCount},
		{"verification==passed", "verification", "", "==", 1, UnitVerdict},
		{"query.verification!=failed", "query.verification", "", "!=", 0, UnitVerdict},
		{"publish.ok.p99.9<1.5s", "publish.ok.p99.9", "", "<", 1.5e9, UnitNs},
		{"publish.p99<800us", "publish.p99", "", "<", 800e3, UnitNs},
		{"publish.ok.count>=1000", "publish.ok.count", "", ">=", 1000, UnitCount},
		{"query/author.eose.p50{relay=strfry}<10ms", "query/author.eose.p50", "strfry", "<", 10e6, UnitNs},
		{"publish.rate{relay=ws://127.0.0.1:7777}>1M", "publish.rate", "ws://127.0.0.1:7777", ">", 1e6, UnitCount},
		{"sweep/1024.deliver.max<2s", "sweep/1024.deliver.max", "", "<", 2e9, UnitNs},
		{"publish.refused==0", "publish.refused", "", "==", 0, UnitCount},
	} {
		th, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if th.Figure != c.figure || th.Relay != c.relay || th.Op != c.op || th.Limit != c.limit || th.Unit != c.unit {
			t.Errorf("Parse(%q) = %+v, want %s %s %s %g %s", c.in, th, c.figure, c.relay, c.op, c.limit, c.unit)
		}
	}
	for _, bad := range []string{
		"", "publish.ok.p99", "publish.ok.p99<", "publish.ok.p99<20", "publish.ok.p99<fast",
		"publish.rate>fast", "publish.rate>5ms", "verification<passed", "verification==maybe",
		"publish<5", "publish..rate>1", ".rate>1", "publish.ok.p99=<20ms", "publish.ok.p99<-5ms",
	} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
}

func TestParseFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.toml")
	os.WriteFile(p, []byte("thresholds = [\"publish.ok.p99<20ms\", \"verification==passed\"]\nfail_on = [\"publish.rate:-10%\"]\n"), 0o644)
	ts, err := ParseAll([]string{"publish.rate>1"}, p)
	if err != nil || len(ts) != 3 || ts[0].Figure != "publish.rate" || ts[2].Figure != "verification" {
		t.Fatalf("ParseAll = %+v, %v", ts, err)
	}
	fos, err := ParseFailOns([]string{"query.eose.p99:+20%"}, p)
	if err != nil || len(fos) != 2 || fos[0].Percent != 20 || fos[1].Percent != -10 {
		t.Fatalf("ParseFailOns = %+v, %v", fos, err)
	}
	os.WriteFile(p, []byte("threshold = [\"x\"]\n"), 0o644)
	if _, err := ParseFile(p); err == nil || !strings.Contains(err.Error(), "thresholds =") {
		t.Errorf("unknown key: %v", err)
	}
	os.WriteFile(p, []byte("thresholds = [\"publish.ok.p99<20\"]\n"), 0o644)
	if _, err := ParseFile(p); err == nil {
		t.Error("bad threshold in file: no error")
	}
}

func TestFailOn(t *testing.T) {
	f, err := ParseFailOn("publish.rate:-10%")
	if err != nil {
		t.Fatal(err)
	}
	if !f.Crossed(1000, 850) || f.Crossed(1000, 950) || f.Crossed(1000, 2000) {
		t.Error("-10%: wrong crossings")
	}
	g, _ := ParseFailOn("query.eose.p99{relay=strfry}:+20%")
	if g.Relay != "strfry" || !g.Crossed(10, 12.5) || g.Crossed(10, 11) || g.Crossed(10, 5) {
		t.Errorf("+20%%: %+v", g)
	}
	for _, bad := range []string{"publish.rate:10%", "publish.rate-10%", "publish.rate:-10", "verification:-1%"} {
		if _, err := ParseFailOn(bad); err == nil {
			t.Errorf("ParseFailOn(%q): no error", bad)
		}
	}
}

func hist(p50, p99 int64) *results.Histogram {
	return &results.Histogram{Count: 100, Min: p50 / 2, Max: p99 * 2, Mean: float64(p50), Percentiles: map[string]int64{"50": p50, "99": p99, "99.9": p99 + 1}}
}

func run(relay string, rate float64, p99 int64, passed bool) results.Run {
	return results.Run{
		Relay: results.Relay{Name: relay},
		Phases: []results.Phase{
			{Name: "publish", Counts: map[string]int64{"sent": 100, "refused": 0}, Rates: map[string]float64{"events_per_sec": rate, "mb_per_sec": rate / 1000}, Latency: map[string]*results.Histogram{"ok": hist(p99/4, p99)}},
			{Name: "query", Counts: map[string]int64{"queries": 10}, Rates: map[string]float64{"queries_per_sec": rate / 10}, Latency: map[string]*results.Histogram{"eose": hist(1e6, 3e6)},
				Verification: &results.Verification{Verified: true, Passed: passed, Checked: 10},
				Groups:       []results.Group{{Name: "author", Latency: map[string]*results.Histogram{"eose": hist(2e6, 4e6)}, Verification: &results.Verification{Verified: true, Passed: true, Checked: 5}}}},
		},
	}
}

func TestFigures(t *testing.T) {
	r := run("a", 5000, 8e6, true)
	fs := Figures(&r)
	for name, want := range map[string]float64{
		"publish.ok.p99": 8e6, "publish.p99": 8e6, "publish.latency.ok.p99": 8e6, "publish.ok.p99.9": 8e6 + 1,
		"publish.rate": 5000, "publish.events_per_sec": 5000, "publish.rates.mb_per_sec": 5,
		"publish.sent": 100, "publish.counts.refused": 0, "publish.ok.count": 100, "publish.ok.max": 16e6,
		"query.rate": 500, "query.eose.p99": 3e6, "query.verification": 1, "verification": 1,
		"query/author.eose.p50": 2e6, "query/author.p99": 4e6, "query/author.verification": 1,
	} {
		f, ok := fs[name]
		if !ok || f.Value != want {
			t.Errorf("%s = %+v (%v), want %g", name, f, ok, want)
		}
	}
	if fs["publish.rate"].Unit != UnitRate || fs["publish.ok.p99"].Unit != UnitNs || fs["verification"].Unit != UnitVerdict {
		t.Error("wrong units")
	}
	if !fs["publish.rate"].Alias || fs["publish.ok.p99"].Alias {
		t.Error("aliases not marked")
	}
	bad := run("a", 1, 1, false)
	if v := Figures(&bad)["verification"].Value; v != 0 {
		t.Errorf("failed verification = %g", v)
	}
}

// TestNotVerified: a phase whose every REQ was refused checked no answer.
// Its verification is "not verified": verification==passed fails on it,
// verification==not_verified passes, and over repeated runs the worst state
// wins (failed, then not verified).
func TestNotVerified(t *testing.T) {
	refused := func(relay string) results.Run {
		r := run(relay, 5000, 8e6, true)
		r.Phases[1].Verification = &results.Verification{Verified: true, Passed: true} // as an older build wrote it
		r.Phases[1].Groups = nil
		return r
	}
	f := &results.File{Runs: []results.Run{refused("none"), run("mixed", 1, 1, true), refused("mixed"), run("bad", 1, 1, false), refused("bad")}}
	var ts []Threshold
	for _, s := range []string{"query.verification==passed", "verification==passed", "verification==not_verified", "verification!=passed", "query.verification==failed"} {
		th, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, th)
	}
	rs := Evaluate(f, ts)
	got := map[string]string{}
	for _, r := range rs {
		if r.Error != "" {
			t.Fatalf("%s for %s: %s", r.Threshold, r.Relay, r.Error)
		}
		got[r.Threshold+" "+r.Relay] = fmt.Sprintf("%s %v", Format(r.Value, r.Unit), r.Passed)
	}
	for k, want := range map[string]string{
		"query.verification==passed none": "not verified false", "verification==passed none": "not verified false",
		"verification==not_verified none": "not verified true", "verification!=passed none": "not verified true",
		"query.verification==failed none": "not verified false",
		"verification==passed mixed":      "not verified false", "verification==not_verified mixed": "not verified true",
		"verification==passed bad": "failed false", "query.verification==failed bad": "failed true",
	} {
		if got[k] != want {
			t.Errorf("%s: %q, want %q", k, got[k], want)
		}
	}
	if _, err := Parse("verification==maybe"); err == nil || !strings.Contains(err.Error(), "not_verified") {
		t.Errorf("bad verification limit: %v", err)
	}
}

func TestEvaluate(t *testing.T) {
	f := &results.File{Runs: []results.Run{
		run("fast", 9000, 5e6, true), run("fast", 11000, 6e6, true), run("fast", 10000, 7e6, true),
		run("slow", 2000, 40e6, false),
	}}
	parse := func(ss ...string) []Threshold {
		var ts []Threshold
		for _, s := range ss {
			th, err := Parse(s)
			if err != nil {
				t.Fatal(err)
			}
			ts = append(ts, th)
		}
		return ts
	}
	rs := Evaluate(f, parse("publish.ok.p99<20ms", "publish.rate>5000", "verification==passed"))
	if len(rs) != 6 {
		t.Fatalf("%d results, want 6 (3 thresholds × 2 relays): %+v", len(rs), rs)
	}
	want := []struct {
		relay  string
		value  float64
		runs   int
		passed bool
	}{{"fast", 6e6, 3, true}, {"slow", 40e6, 1, false}, {"fast", 10000, 3, true}, {"slow", 2000, 1, false}, {"fast", 1, 3, true}, {"slow", 0, 1, false}}
	for i, w := range want {
		r := rs[i]
		if r.Relay != w.relay || r.Value != w.value || r.Runs != w.runs || r.Passed != w.passed || r.Error != "" {
			t.Errorf("result %d = %+v, want %+v", i, r, w)
		}
	}
	if rs[2].Unit != UnitRate {
		t.Errorf("rate unit %q", rs[2].Unit)
	}
	if failed, errs := Failed(rs); failed != 3 || errs != 0 {
		t.Errorf("Failed = %d, %d", failed, errs)
	}
	// A relay selector, an unknown figure, an unknown relay.
	rs = Evaluate(f, parse("publish.rate{relay=slow}>1000", "publish.okk.p99<1s", "nosuch.rate>1", "publish.rate{relay=other}>1"))
	if len(rs) != 1+2+2+1 || rs[0].Relay != "slow" || !rs[0].Passed {
		t.Fatalf("selector: %+v", rs)
	}
	if e := rs[1].Error; !strings.Contains(e, "no figure publish.okk.p99") || !strings.Contains(e, "latencies ok (each publish.ok.STAT") ||
		strings.Count(e, "p99.99") != 1 || !strings.Contains(e, "sent") {
		t.Errorf("unknown figure: want the latencies named once and the keys: %q", e)
	}
	if e := rs[3].Error; !strings.Contains(e, `no phase or group "nosuch"`) || !strings.Contains(e, "publish, query, query/author") {
		t.Errorf("unknown scope: %q", e)
	}
	if e := rs[5].Error; !strings.Contains(e, `no relay "other"`) || !strings.Contains(e, "fast, slow") {
		t.Errorf("unknown relay: %q", e)
	}
	if _, errs := Failed(rs); errs != 5 {
		t.Errorf("errors = %d, want 5", errs)
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{{20e6, UnitNs, "20ms"}, {1234567, UnitNs, "1.235ms"}, {5446.3, UnitRate, "5,446/s"}, {1.5, UnitRate, "1.50/s"}, {1234567, UnitCount, "1,234,567"}, {1, UnitVerdict, "passed"}, {0, UnitVerdict, "failed"}, {42, UnitCount, "42"}} {
		if got := Format(c.v, c.unit); got != c.want {
			t.Errorf("Format(%g, %s) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}

// TestParseRefusesImpossibleFigures checks that a figure no results file
// can hold is refused when parsed (before any work), in one line naming
// it, and that every form of the grammar is still accepted.
func TestParseRefusesImpossibleFigures(t *testing.T) {
	for s, want := range map[string]string{
		"publish.ok.p99.5<5ms":        "p99.5 is not a stored statistic",
		"publish.p75<5ms":             "p75 is not a stored statistic",
		"query/author.eose.p98<5ms":   "p98 is not a stored statistic",
		"publish.latency.ok.p999<5ms": "p999 is not a stored statistic",
		"publish.ok.p99ms<5":          "a figure is PHASE.LATENCY.STAT",
		"publish.latency.p99<5ms":     "a figure is PHASE.LATENCY.STAT",
		"publish.ok.p99.latency<5":    "a figure is PHASE.LATENCY.STAT",
		"publish.rates.a.b>5":         "a figure is PHASE.LATENCY.STAT",
	} {
		_, err := Parse(s)
		if err == nil {
			t.Errorf("%s: accepted", s)
			continue
		}
		e := err.Error()
		fig, _, _ := strings.Cut(strings.SplitN(s, "<", 2)[0], ">")
		if !strings.Contains(e, want) || !strings.Contains(e, "no figure "+fig+":") || strings.Contains(e, "\n") {
			t.Errorf("%s: %q, want one line naming %s and %q", s, e, fig, want)
		}
		if strings.Count(e, "p99.99") > 1 {
			t.Errorf("%s: the statistics are listed more than once: %q", s, e)
		}
	}
	for _, s := range []string{
		"publish.ok.p99<20ms", "publish.ok.p99.99<20ms", "publish.ok.p99.9<20ms", "publish.p99<20ms", "publish.ok.max<1s",
		"publish.latency.ok.p50<1s", "publish.latency.first_event.mean<1s", "publish.rate>5000", "publish.mb_per_sec>1",
		"publish.rates.events_per_sec>1", "publish.counts.refused==0", "publish.refused==0", "publish.count>10",
		"publish.ok.count>10", "query/author.eose.p99<10ms", "sweep/1024.rate>1", "query.verification==passed",
		"verification==passed", "conformance.req.limit-zero==pass", "conformance.failed==0", "count.counts>1",
		"publish.ok.stddev<1s", "query/author.eose.p99{relay=strfry}<10ms",
	} {
		if _, err := Parse(s); err != nil {
			t.Errorf("%s: refused: %v", s, err)
		}
	}
}

// A phase whose name has brackets and spaces (load's corpus publish) is
// named by its slug, the one rule: a threshold can judge it, a command's
// plan accepts it before any work and a missing figure lists it so. A
// group name with spaces keeps its written form as an alias.
func TestSlugNamesAnyPhase(t *testing.T) {
	for name, want := range map[string]string{
		"publish (query corpus)": "publish_query_corpus", "publish": "publish", "load/constant": "load/constant",
		"negentropy/delta/read-back of needed events": "negentropy/delta/read-back_of_needed_events",
		"sweep/1.5k": "sweep/1_5k", "query/kind_1": "query/kind_1", " (x) ": "x",
	} {
		if got := Slug(name); got != want {
			t.Errorf("Slug(%q) = %q, want %q", name, got, want)
		}
	}
	r := run("a", 5000, 8e6, true)
	r.Phases[0].Name = "publish (query corpus)"
	r.Phases = append(r.Phases, results.Phase{Name: "negentropy", Groups: []results.Group{{Name: "read-back of needed events", Counts: map[string]int64{"returned": 7}}}})
	var ts []Threshold
	for _, s := range []string{"publish_query_corpus.ok.p99<10ms", "publish_query_corpus.rate>4000",
		"negentropy/read-back_of_needed_events.returned==7", "negentropy/read-back of needed events.returned==7"} {
		th, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, th)
	}
	for _, res := range Evaluate(&results.File{Runs: []results.Run{r}}, ts) {
		if res.Error != "" || !res.Passed {
			t.Errorf("%s: passed %v, error %q", res.Threshold, res.Passed, res.Error)
		}
	}
	if msg := Missing([]*results.Run{&r}, "publish.ok.p99"); !strings.Contains(msg, "publish_query_corpus") || strings.Contains(msg, "(query corpus)") {
		t.Errorf("missing figure lists the phases as: %s", msg)
	}
	plan := Plan{Command: "load", Phases: map[string][]string{"load": nil, "publish (query corpus)": {"ok"}}}
	if err := plan.Check(ts[:1]); err != nil {
		t.Errorf("the plan refused the corpus's publish phase: %v", err)
	}
	bad, _ := Parse("publish.ok.p99<10ms")
	if err := plan.Check([]Threshold{bad}); err == nil || !strings.Contains(err.Error(), "its phases are load, publish_query_corpus") {
		t.Errorf("plan error: %v", err)
	}
	okk, _ := Parse("publish_query_corpus.okk.p99<10ms")
	if err := plan.Check([]Threshold{okk}); err == nil || !strings.Contains(err.Error(), "phase publish_query_corpus writes no latency okk") {
		t.Errorf("plan error: %v", err)
	}
}

// TestFormatValueThreeSignificantDigits: a measured duration is shown as the
// summary shows figures, three significant digits, unless the rounding
// would hide which side of the limit it fell on.
func TestFormatValueThreeSignificantDigits(t *testing.T) {
	for _, c := range []struct {
		value, limit float64
		op, want     string
	}{
		{2.894e6, 1e9, "<", "2.89ms"},
		{1_250_303, 5e6, "<", "1.25ms"},
		{1.6444e6, 1.644e6, "<", "1.6444ms"}, // 1.64ms would seem under the limit it missed
		{1.6436e6, 1.64e6, ">", "1.6436ms"},  // 1.64ms would seem not over the limit it passed
		{987, 1e6, "<", "987ns"},
	} {
		r := results.ThresholdResult{Unit: UnitNs, Value: c.value, Op: c.op, Limit: c.limit}
		if got := FormatValue(r); got != c.want {
			t.Errorf("FormatValue(%v %s %v) = %q, want %q", c.value, c.op, c.limit, got, c.want)
		}
	}
	// rates and MB/s too (a walk read "13.38 MB/s" in the thresholds table),
	// unless the rounding would seem to flip the comparison
	for _, c := range []struct {
		unit         string
		value, limit float64
		op, want     string
	}{
		{UnitRate, 3773.4, 10, ">", "3,773/s"},
		{UnitMBps, 13.38, 9, ">", "13.4 MB/s"},
		{UnitRate, 47.26, 10, ">", "47.3/s"},
		{UnitRate, 99.96, 100, "<", "99.96/s"}, // 100/s would seem not under the limit it met
	} {
		r := results.ThresholdResult{Unit: c.unit, Value: c.value, Op: c.op, Limit: c.limit}
		if got := FormatValue(r); got != c.want {
			t.Errorf("FormatValue(%v %s %v %s) = %q, want %q", c.value, c.op, c.limit, c.unit, got, c.want)
		}
	}
	if got := FormatFigure(3.617e6, UnitNs); got != "3.62ms" {
		t.Errorf("FormatFigure of 3.617ms: %q (the A/B fail-on table's figures)", got)
	}
}

// TestMBPerSecShowsItsUnit: publish.mb_per_sec holds decimal MB/s (the
// summary shows MiB/s), so its threshold row says "9.06 MB/s" and "> 9
// MB/s", not "9.06/s" beside a "Bandwidth: 8.64 MiB/second"; the key and
// its comparison are unchanged.
func TestMBPerSecShowsItsUnit(t *testing.T) {
	f := &results.File{Runs: []results.Run{run("a", 9060, 5e6, true)}}
	th, err := Parse("publish.mb_per_sec>9")
	if err != nil {
		t.Fatal(err)
	}
	rs := Evaluate(f, []Threshold{th})
	if len(rs) != 1 || rs[0].Error != "" || !rs[0].Passed || rs[0].Unit != UnitMBps {
		t.Fatalf("%+v", rs)
	}
	if v, lim := FormatValue(rs[0]), Format(rs[0].Limit, rs[0].Unit); v != "9.06 MB/s" || lim != "9 MB/s" {
		t.Errorf("value %q limit %q, want \"9.06 MB/s\" and \"9 MB/s\"", v, lim)
	}
	if rs := Evaluate(f, []Threshold{mustParse(t, "publish.rate>9000")}); len(rs) != 1 || rs[0].Unit != UnitRate || FormatValue(rs[0]) != "9,060/s" {
		t.Errorf("events/s: %+v", rs)
	}
}

func mustParse(t *testing.T, s string) Threshold {
	t.Helper()
	th, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return th
}
