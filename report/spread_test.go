package report

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/plotter"

	"github.com/relaybench/relaybench/results"
)

// The spread fixture is a comparison whose relays' phases last very
// different times, as a real compare of fast and slow relays does: strfry
// publishes in 0.05 s, khatru-native in 0.3 s, wisp in 4.4 s and orly in
// 30 s; orly has no query phase. Series are laid out as metrics.Series
// writes them: 0.1 s intervals for a phase under 3 s, else one second.

// spreadRelays are the relays of the spread fixture, in run order.
var spreadRelays = []string{"strfry", "khatru-native", "wisp", "orly"}

// spreadSeries is the series of a phase of dur seconds: counter k at perSec
// per second, latencies around latNs.
func spreadSeries(seed uint64, dur, perSec, latNs float64, k string) ([]results.Second, int64) {
	r := rand.New(rand.NewPCG(seed, 13))
	step := 1.0
	if dur < 3 {
		step = 0.1
	}
	var out []results.Second
	var total int64
	for i := 0; float64(i)*step < dur-1e-9; i++ {
		at := float64(i) * step
		cover := math.Min(step, dur-at)
		n := int64(math.Round(perSec * cover * (0.85 + 0.3*r.Float64())))
		total += n
		s := results.Second{T: int(at), Counts: map[string]int64{k: n},
			LatP50Ns: int64(latNs * (0.9 + 0.2*r.Float64())), LatP99Ns: int64(3 * latNs * (0.9 + 0.3*r.Float64())),
			LatMaxNs: int64(8 * latNs * (0.8 + r.Float64()))}
		if step < 1 {
			s.AtMs, s.WidthMs = int64(math.Round(at*1e3)), 100
		}
		out = append(out, s)
	}
	return out, total
}

// spreadResources samples the relay every 0.2 s, as the harness does: a
// phase shorter than that has no sample, only its totals.
func spreadResources(seed uint64, dur, cpu float64, rss int64) *results.Resources {
	r := rand.New(rand.NewPCG(seed, 17))
	res := &results.Resources{RelayCPUSecs: cpu * dur, RelayPeakRSS: rss, ClientCPUSecs: 0.3 * dur, ClientCPUUtil: 0.15}
	for i := 1; float64(i)*0.2 <= dur+1e-9; i++ {
		res.Series = append(res.Series, results.ResourceSample{T: float64(i) * 0.2, RelayCPU: cpu * (0.8 + 0.4*r.Float64()),
			RelayRSS: rss/2 + int64(float64(rss/2)*float64(i)*0.2/dur), ClientCPU: 0.3 * (0.9 + 0.2*r.Float64())})
	}
	return res
}

func spreadPublish(seed uint64, dur, perSec, latNs float64, rss int64) results.Phase {
	s, acc := spreadSeries(seed, dur, perSec, latNs, "accepted")
	return results.Phase{Name: "publish", Workload: "publish", Start: t0.Add(5 * time.Second), Duration: int64(dur * 1e9),
		Counts:    map[string]int64{"sent": acc, "accepted": acc, "refused": 0, "timed_out": 0, "failed": 0, "bytes_sent": acc * 1303},
		Rates:     map[string]float64{"events_per_sec": float64(acc) / dur, "mb_per_sec": float64(acc*1303) / 1e6 / dur},
		Latency:   map[string]*results.Histogram{"ok": hist(seed, int(min(acc, 3000)), latNs, 0.5)},
		Series:    s,
		Resources: spreadResources(seed, dur, 1.1, rss),
	}
}

func spreadQuery(seed uint64, dur, qps, latNs float64, rss int64) results.Phase {
	s, n := spreadSeries(seed+50, dur, qps, latNs, "queries")
	return results.Phase{Name: "query", Workload: "query", Start: t0.Add(40 * time.Second), Duration: int64(dur * 1e9),
		Counts:       map[string]int64{"queries": n, "events_returned": n * 40, "failed": 0, "timed_out": 0},
		Rates:        map[string]float64{"queries_per_sec": float64(n) / dur},
		Latency:      map[string]*results.Histogram{"eose": hist(seed+60, int(n), latNs, 0.6)},
		Series:       s,
		Resources:    spreadResources(seed+70, dur, 0.6, rss),
		Verification: &results.Verification{Verified: true, Checked: n, Expected: n * 40, Returned: n * 40, Passed: true},
	}
}

// spreadFile is the comparison of relays with very different phase lengths.
func spreadFile() *results.File {
	f := baseFile("compare")
	f.Args = []string{"compare", "--relays", strings.Join(spreadRelays, ","), "--events", "3000", "--queries", "60"}
	for i, rl := range []struct {
		name, sw       string
		pub, q         float64 // phase durations in seconds (q 0: no query phase)
		latPub, latQ   float64 // ns
		rss            int64
		pubSeed, qSeed uint64
	}{
		{"strfry", "strfry", 0.05, 0.02, 0.9e6, 0.6e6, 28 << 20, 1, 2},
		{"khatru-native", "khatru", 0.3, 0.3, 1.4e6, 2.5e6, 110 << 20, 3, 4},
		{"wisp", "wisp", 4.4, 4.4, 6e6, 40e6, 27 << 20, 5, 6},
		{"orly", "orly", 30, 0, 20e6, 0, 230 << 20, 7, 8},
	} {
		run := results.Run{Relay: results.Relay{Name: rl.name, URL: fmt.Sprintf("ws://127.0.0.1:%d", 7700+i), Managed: true, Software: rl.sw, Version: "1.0"},
			Corpus: corpusOf(3000), Params: map[string]any{"connections": 10, "queries": 60}}
		run.Phases = append(run.Phases, spreadPublish(rl.pubSeed, rl.pub, 3000/rl.pub, rl.latPub, rl.rss))
		if rl.q > 0 {
			run.Phases = append(run.Phases, spreadQuery(rl.qSeed, rl.q, 60/rl.q, rl.latQ, rl.rss))
		}
		f.Runs = append(f.Runs, run)
	}
	return f
}

var (
	figureRE  = regexp.MustCompile(`(?s)<figure id="([^"]+)"[^>]*>(.*?)</figure>`)
	captionRE = regexp.MustCompile(`(?s)<figcaption>(.*?)</figcaption>`)
	svgTextRE = regexp.MustCompile(`<text [^>]*>([^<]*)</text>`)
)

// TestHTMLSpreadGolden renders the spread comparison and compares the page
// with testdata/compare_spread.html.golden (go test ./report -update
// rewrites it). Every chart is a comparison chart, so every relay's name
// must be in every chart's SVG text (its legend or, for bars, its axis); a
// relay drawn as one point, or not at all, is named in the caption with why.
func TestHTMLSpreadGolden(t *testing.T) {
	render := func() []byte {
		var b bytes.Buffer
		if err := HTML(&b, []*results.File{roundTrip(t, spreadFile())}, Options{}); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	page := render()
	if again := render(); !bytes.Equal(page, again) {
		t.Fatal("two renderings of one file differ")
	}
	checkSelfContained(t, string(page))

	figs := figureRE.FindAllStringSubmatch(string(page), -1)
	byID := map[string]string{}
	var ids []string
	for _, m := range figs {
		byID[m[1]] = m[2]
		ids = append(ids, m[1])
	}
	want := []string{
		"throughput-publish", "latency-time-publish", "spectrum-publish", "cpu-publish", "rss-publish",
		"throughput-query", "latency-time-query", "spectrum-query", "cpu-query", "rss-query",
		"bars-publish-events-per-sec", "bars-publish-ok-latency", "bars-query-queries-per-sec", "bars-query-eose-latency",
	}
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Fatalf("charts:\n got %v\nwant %v", ids, want)
	}
	for _, id := range ids {
		var texts []string
		for _, m := range svgTextRE.FindAllStringSubmatch(byID[id], -1) {
			texts = append(texts, m[1])
		}
		svgText := strings.Join(texts, "\n")
		for _, relay := range spreadRelays {
			if !strings.Contains(svgText, relay) {
				t.Errorf("%s: relay %s is not in the chart (texts: %q)", id, relay, texts)
			}
		}
	}
	caption := func(id string) string {
		m := captionRE.FindStringSubmatch(byID[id])
		if m == nil {
			return ""
		}
		return m[1]
	}
	for id, wants := range map[string][]string{
		"throughput-publish": {
			"Intervals: 0.1 s for strfry, khatru-native; 1 s for wisp, orly",
			"strfry: its 0.05 s phase is shorter than two 0.1 s intervals: one point, accepted per second over the whole phase.",
		},
		"latency-time-publish": {"strfry: its 0.05 s phase is shorter than two 0.1 s intervals: one point, the p99 of the whole phase."},
		"throughput-query": {
			"strfry: its 0.02 s phase is shorter than two 0.1 s intervals: one point",
			"orly: not drawn: its run has no query phase.",
		},
		"latency-time-query":         {"orly: not drawn: its run has no query phase."},
		"spectrum-query":             {"orly: not drawn: its run has no query phase."},
		"cpu-publish":                {"strfry: no resource sample in its 0.05 s phase (shorter than the sampling interval): one point", "khatru-native: one resource sample in its 0.3 s phase: one point."},
		"rss-query":                  {"strfry: no resource sample", "orly: not drawn: its run has no query phase."},
		"bars-query-queries-per-sec": {"orly: no bar: its run has no query phase."},
	} {
		c := caption(id)
		for _, w := range wants {
			if !strings.Contains(c, w) {
				t.Errorf("%s: caption lacks %q:\n%s", id, w, c)
			}
		}
	}
	// The long phases are lines, not lone points: no caption line for them.
	for _, id := range []string{"throughput-publish", "latency-time-publish", "cpu-publish", "rss-publish"} {
		if c := caption(id); strings.Contains(c, "orly:") || strings.Contains(c, "wisp:") {
			t.Errorf("%s: a long phase is captioned as not drawn as a line:\n%s", id, c)
		}
	}
	golden(t, "compare_spread.html.golden", page)
}

// TestSpans checks where series points land on the time axis: sub-second
// intervals at their own offsets, a phase's last partial interval counted
// at its real width (and left out of rates when under half an interval).
func TestSpans(t *testing.T) {
	p := &results.Phase{Duration: 250e6, Series: []results.Second{
		{T: 0, WidthMs: 100, Counts: map[string]int64{"accepted": 10}, LatP99Ns: 2e6},
		{T: 0, AtMs: 100, WidthMs: 100, Counts: map[string]int64{"accepted": 20}, LatP99Ns: 3e6},
		{T: 0, AtMs: 200, WidthMs: 100, Counts: map[string]int64{"accepted": 4}, LatP99Ns: 4e6},
	}}
	near := func(xys plotter.XYs, want ...float64) bool {
		if len(xys) != len(want)/2 {
			return false
		}
		for i, xy := range xys {
			if math.Abs(xy.X-want[2*i]) > 1e-6 || math.Abs(xy.Y-want[2*i+1]) > 1e-6 {
				return false
			}
		}
		return true
	}
	// The last interval lies half inside the phase: 4 in 0.05 s is 80/s.
	if rates := rateXY(p, "accepted"); !near(rates, 0.05, 100, 0.15, 200, 0.225, 80) {
		t.Errorf("rates %v", rates)
	}
	lat := latXY(p, func(s results.Second) int64 { return s.LatP99Ns })
	if !near(lat, 0.05, 2, 0.15, 3, 0.225, 4) {
		t.Errorf("latencies %v", lat)
	}
	if iv := interval(p); iv != 0.1 {
		t.Errorf("interval %v", iv)
	}
	// A sliver of an interval at the end gives no rate point.
	p.Duration = 220e6
	if rates := rateXY(p, "accepted"); len(rates) != 2 {
		t.Errorf("rates with a 20 ms last interval: %v", rates)
	}
	// Nor a latency point: the two charts of a phase draw the same points.
	if lat := latXY(p, func(s results.Second) int64 { return s.LatP99Ns }); !near(lat, 0.05, 2, 0.15, 3) {
		t.Errorf("latencies with a 20 ms last interval: %v", lat)
	}
	// One-second points of a long phase.
	q := &results.Phase{Duration: 2500e6, Series: []results.Second{{T: 0, Counts: map[string]int64{"queries": 5}}, {T: 1, Counts: map[string]int64{"queries": 7}}, {T: 2, Counts: map[string]int64{"queries": 1}}}}
	if r := rateXY(q, "queries"); !near(r, 0.5, 5, 1.5, 7, 2.25, 2) {
		t.Errorf("second rates %v", r)
	}
	for _, tc := range []struct {
		s    float64
		want string
	}{{0.0417, "0.042 s"}, {0.05, "0.05 s"}, {0.69, "0.7 s"}, {1, "1 s"}, {2.61, "2.6 s"}, {30.4, "30 s"}} {
		if got := fmtSecs(tc.s); got != tc.want {
			t.Errorf("fmtSecs(%v) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

func TestTimeTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 3.4, "0 1 2 3"},
		{0, 1.55, "0.0 0.5 1.0 1.5"},
		{0, 0.3, "0.0 0.1 0.2 0.3"},
		{0, 30, "0 10 20 30"},
		{-1e-12, 2, "0.0 0.5 1.0 1.5 2.0"},
	} {
		var labels []string
		for _, tk := range (timeTicks{}).Ticks(tc.lo, tc.hi) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if got := strings.Join(labels, " "); got != tc.want {
			t.Errorf("ticks %v–%v: %q, want %q", tc.lo, tc.hi, got, tc.want)
		}
	}
}
