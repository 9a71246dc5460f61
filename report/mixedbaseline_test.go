package report

import (
	"bytes"
	"html"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/results"
)

// A mixed run's "faster together" is a finding only against an alone
// baseline the client kept: a walk on a shared 2-core machine read "OK p99
// 0.13× (faster together)" three runs running, the publish/alone part's
// events sent 7-73 ms late at p99 while publish/together's went within
// 1-2 ms (other processes busier during the alone part). When the
// publishing groups' send lateness says the alone part was late by as much
// as the OK p99 it measured, or several times later than together, the
// headline, the side's row and the reports' table say the ratio is no
// finding and why. A slowdown stays a finding (a baseline inflated by
// lateness only hides one), and so does a speed-up the lateness does not
// explain. Constructed phases: no timing.
func TestMixedFasterTogetherNeedsAFairBaseline(t *testing.T) {
	const ms = 1e6
	for _, c := range []struct {
		name                  string
		okAlone, okTog, ratio float64 // ns, ns, together/alone
		lateAlone, lateTog    float64 // send lateness p99, ns
		want, not             string  // in the headline; not in it
		why                   string  // in the headline, the Markdown and the HTML ("": no doubt)
	}{
		{"client could not keep its schedule", 34.4 * ms, 3.97 * ms, 0.12, 40 * ms, 30 * ms,
			"OK p99 0.12× together/alone is not a finding: ", "(faster together)", "it could not keep its schedule"},
		{"busier during the alone part", 25.8 * ms, 3.81 * ms, 0.15, 7.04 * ms, 0.89 * ms,
			"OK p99 0.15× together/alone is not a finding: ", "(faster together)", "the machine was busier during the alone part"},
		{"on schedule alone", 25.8 * ms, 3.81 * ms, 0.15, 0.3 * ms, 0.2 * ms, "OK p99 0.15× (faster together)", "not a finding", ""},
		{"as late together", 25.8 * ms, 3.81 * ms, 0.15, 5 * ms, 4 * ms, "OK p99 0.15× (faster together)", "not a finding", ""},
		{"slower together", 2 * ms, 5 * ms, 2.5, 7.04 * ms, 0.89 * ms, "OK p99 2.50× slower together", "not a finding", ""},
	} {
		p := mixedPhase()
		p.Rates["ok_p99_ratio"] = c.ratio
		p.Latency["ok_alone"], p.Latency["ok"] = hist(2, 600, c.okAlone, 0), hist(1, 600, c.okTog, 0)
		p.Groups = []results.Group{
			{Name: "publish/alone", Latency: map[string]*results.Histogram{"ok": p.Latency["ok_alone"], mixedLateKey: hist(5, 600, c.lateAlone, 0)}},
			{Name: "publish/together", Latency: map[string]*results.Histogram{"ok": p.Latency["ok"], mixedLateKey: hist(6, 600, c.lateTog, 0)}},
		}
		f := oneRun("mixed", nil, p)
		s := summaryText(t, f, SummaryOptions{Brief: true})
		i := strings.Index(s, "Together vs alone: ")
		if i < 0 {
			t.Fatalf("%s: no headline:\n%s", c.name, s)
		}
		head, _, _ := strings.Cut(s[i:], "\n")
		if !strings.Contains(head, c.want) || strings.Contains(head, c.not) || !strings.Contains(head, c.why) {
			t.Errorf("%s: headline %q, want %q and %q, not %q", c.name, head, c.want, c.why, c.not)
		}
		doubted := c.why != ""
		if row := "(" + fmtTimes(c.ratio) + ", not a finding)"; doubted != strings.Contains(s, row) {
			t.Errorf("%s: the publish row has %q: %v, want %v:\n%s", c.name, row, !doubted, doubted, s)
		}
		var md, h bytes.Buffer
		if err := Markdown(&md, []*results.File{f}, Options{}); err != nil {
			t.Fatal(err)
		}
		if err := HTML(&h, []*results.File{f}, Options{}); err != nil {
			t.Fatal(err)
		}
		for kind, out := range map[string]string{"Markdown": md.String(), "HTML": html.UnescapeString(h.String())} {
			if !doubted {
				if strings.Contains(out, "not a finding") {
					t.Errorf("%s: the %s says 'not a finding' of a fair baseline", c.name, kind)
				}
				continue
			}
			for _, want := range []string{fmtTimes(c.ratio) + " (not a finding: see below)", "publish: OK p99 " + fmtTimes(c.ratio) + " together/alone is not a finding: ", c.why} {
				if !strings.Contains(out, want) {
					t.Errorf("%s: the %s lacks %q", c.name, kind, want)
				}
			}
		}
	}
}

// A side whose alone part ran while other processes kept at least half a
// core more busy than during together (each part's
// machine_others_cores) has no "faster together" finding either, on the
// query side too (which has no lateness figure); a figure missing on one
// side, or a machine as busy in both parts, doubts nothing.
func TestMixedBusierAloneIsNotAFinding(t *testing.T) {
	for _, c := range []struct {
		name            string
		alone, together []float64 // publish, query: cores busy with others
		want, not       string
	}{
		{"query alone busier", []float64{0.2, 1.4}, []float64{0.2, 0.3}, "EOSE p99 0.40× together/alone is not a finding: other processes kept 1.40 cores busy during query/alone, 0.30 during together", "EOSE p99 0.40× (faster together)"},
		{"publish alone busier", []float64{1.1, 0.3}, []float64{0.2, 0.3}, "OK p99 0.81× together/alone is not a finding: other processes kept 1.10 cores busy during publish/alone, 0.20 during together", "OK p99 0.81× (faster together)"},
		{"as busy", []float64{1.2, 1.2}, []float64{1.0, 1.0}, "OK p99 0.81× (faster together)", "not a finding"},
		{"unknown together", []float64{1.2, 1.2}, nil, "EOSE p99 0.40× (faster together)", "not a finding"},
	} {
		p := mixedPhase()
		p.Rates["eose_p99_ratio"] = 0.4
		p.Groups = nil
		for i, side := range []string{"publish", "query"} {
			for part, v := range map[string][]float64{"alone": c.alone, "together": c.together} {
				g := results.Group{Name: side + "/" + part, Rates: map[string]float64{}}
				if v != nil {
					g.Rates[results.RateOthersCores] = v[i]
				}
				p.Groups = append(p.Groups, g)
			}
		}
		wantHeadline(t, c.name, p, c.want, c.not)
	}
}

// The querying side's alone baseline is doubted by its late REQ starts: a
// walk at load average 15 read "EOSE p99 0.0659× (faster together)" with
// 29 of 100 REQs started late alone, 1 together. Constructed phases.
func TestMixedLateQueriesAreNotAFinding(t *testing.T) {
	for _, c := range []struct {
		name               string
		lateAlone, lateTog int64
		want, not          string
		n                  int64 // REQs in each part
	}{
		{"late alone", 29, 1, "EOSE p99 0.40× together/alone is not a finding: the client started 29 of query/alone's 100 REQs late (more than 1 ms after their schedule; more than the 1% a p99 reads), against 1 of 100 together", "EOSE p99 0.40× (faster together)", 100},
		{"as late together", 29, 29, "EOSE p99 0.40× (faster together)", "EOSE p99 0.40× together/alone is not a finding", 100},
		{"later alone, also late together (a walk's, at load 3.8)", 65, 24, "EOSE p99 0.40× together/alone is not a finding: the client started 65 of query/alone's 500 REQs late", "EOSE p99 0.40× (faster together)", 500},
		{"few late alone (1 %: the p99 is not a late REQ's)", 1, 0, "EOSE p99 0.40× (faster together)", "EOSE p99 0.40× together/alone is not a finding", 100},
		{"2 of 300 alone (under 1 %)", 2, 0, "EOSE p99 0.40× (faster together)", "EOSE p99 0.40× together/alone is not a finding", 300},
		{"4.7% late alone, 0.7% together (a walk's, at load 17)", 7, 1, "EOSE p99 0.40× together/alone is not a finding: the client started 7 of query/alone's 150 REQs late", "EOSE p99 0.40× (faster together)", 150},
		{"6.4% late alone, 1.6% together (a walk's)", 16, 4, "EOSE p99 0.40× together/alone is not a finding: the client started 16 of query/alone's 250 REQs late", "EOSE p99 0.40× (faster together)", 250},
	} {
		p := mixedPhase()
		p.Rates["eose_p99_ratio"] = 0.4
		p.Groups = []results.Group{
			{Name: "query/alone", Counts: map[string]int64{"requested": c.n, "late_start": c.lateAlone}},
			{Name: "query/together", Counts: map[string]int64{"requested": c.n, "late_start": c.lateTog}},
		}
		wantHeadline(t, c.name, p, c.want, c.not)
	}
}

// wantHeadline checks the "Together vs alone" headline of mixed phase p's
// summary: it holds want and not not.
func wantHeadline(t *testing.T, name string, p results.Phase, want, not string) {
	t.Helper()
	s := summaryText(t, oneRun("mixed", nil, p), SummaryOptions{Brief: true})
	i := strings.Index(s, "Together vs alone: ")
	if i < 0 {
		t.Fatalf("%s: no headline:\n%s", name, s)
	}
	head, _, _ := strings.Cut(s[i:], "\n")
	if !strings.Contains(head, want) || strings.Contains(head, not) {
		t.Errorf("%s: headline %q, want %q, not %q", name, head, want, not)
	}
}

// A p99 ratio inside the two p99s' sampling noise is no change either
// way: walks read "EOSE p99 0.98× (faster together)" on a quiet machine
// from 250 REQs a part. Two samples of one distribution overlap; samples
// of distributions twice apart, or of identical values, do not; an empty
// or missing histogram judges nothing.
func TestP99Apart(t *testing.T) {
	for _, c := range []struct {
		name      string
		a, b      *results.Histogram
		apart, ok bool
	}{
		{"one distribution, 250 each", hist(11, 250, 3e6, 0.3), hist(12, 250, 3e6, 0.3), false, true},
		{"3% apart, 250 each (a walk's 0.98×)", hist(13, 250, 3.12e6, 0.3), hist(14, 250, 3.03e6, 0.3), false, true},
		{"twice apart, 250 each", hist(15, 250, 3e6, 0.3), hist(16, 250, 6e6, 0.3), true, true},
		{"identical values, apart", hist(1, 600, 1.42e6, 0), hist(2, 600, 1.15e6, 0), true, true},
		{"missing", nil, hist(2, 600, 1.15e6, 0), false, false},
		{"empty", &results.Histogram{}, hist(2, 600, 1.15e6, 0), false, false},
	} {
		apart, ok := p99Apart(c.a, c.b)
		if apart != c.apart || ok != c.ok {
			t.Errorf("%s: apart %v ok %v, want %v %v", c.name, apart, ok, c.apart, c.ok)
		}
	}
	p := mixedPhase()
	p.Rates["eose_p99_ratio"] = 0.98
	p.Latency["eose_alone"], p.Latency["eose"] = hist(13, 250, 3.12e6, 0.3), hist(14, 250, 3.03e6, 0.3)
	wantHeadline(t, "within noise", p, "EOSE p99 0.98× (within noise)", "EOSE p99 0.98× (faster together)")
	p.Rates["eose_p99_ratio"] = 1.04
	wantHeadline(t, "within noise, slower", p, "EOSE p99 1.04× (within noise)", "EOSE p99 1.04× slower together")
	var md strings.Builder
	if err := Markdown(&md, []*results.File{oneRun("mixed", nil, p)}, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "1.04× (within noise)") {
		t.Errorf("Markdown's together-vs-alone table does not say within noise:\n%s", md.String())
	}
}

// A p99 lower together whose p90s are within each other's noise is the
// alone part's tail only, no finding: a walk against a relay filled by
// earlier runs read "EOSE p99 0.47× (faster together)" when 5 of
// query/alone's 100 REQs took 5.1-10.8 ms and none together passed 5.3
// ms. A whole answer-time distribution lower together is still said.
func TestMixedTailOnlyIsNotAFinding(t *testing.T) {
	mk := func(seed uint64, n int, med float64, slow ...float64) *results.Histogram {
		h := metrics.NewHistogram()
		r := rand.New(rand.NewPCG(seed, 3))
		for range n - len(slow) {
			h.Record(int64(med * math.Exp(0.2*r.NormFloat64())))
		}
		for _, v := range slow {
			h.Record(int64(v))
		}
		return h.Result()
	}
	p := mixedPhase()
	p.Latency["eose_alone"] = mk(21, 100, 2e6, 5.1e6, 6e6, 7.4e6, 9e6, 10.8e6)
	p.Latency["eose"] = mk(22, 100, 2e6)
	a99, _ := latQ(p.Latency["eose_alone"], 99)
	t99, _ := latQ(p.Latency["eose"], 99)
	p.Rates["eose_p99_ratio"] = float64(t99) / float64(a99)
	r := fmtTimes(p.Rates["eose_p99_ratio"])
	wantHeadline(t, "a tail alone", p, "EOSE p99 "+r+" together/alone is not a finding: query/alone's EOSE p90", "EOSE p99 "+r+" (faster together)")
	p.Latency["eose_alone"], p.Latency["eose"] = mk(23, 250, 4e6), mk(24, 250, 2e6)
	p.Rates["eose_p99_ratio"] = 0.5
	wantHeadline(t, "the whole distribution lower", p, "EOSE p99 0.50× (faster together)", "not a finding")
}
