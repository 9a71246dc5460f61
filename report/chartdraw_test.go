package report

import (
	"cmp"
	"html"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// svgText is one <text> element of a chart's SVG, in plot coordinates (y
// up from the bottom of the chart).
type svgText struct {
	x, y  float64
	size  float64
	width float64 // textLength: the width the layout measured, which a browser keeps in any font
	s     string
}

var svgTextAtRE = regexp.MustCompile(`(?s)<text textLength="([0-9.]+)" lengthAdjust="spacingAndGlyphs" x="([-0-9.]+)" y="([-0-9.]+)"[^>]*?font-size:([0-9.]+)px">([^<]*)</text>`)

func svgTexts(t *testing.T, c *chart) []svgText {
	t.Helper()
	b, err := c.svg()
	if err != nil {
		t.Fatal(err)
	}
	var out []svgText
	for _, m := range svgTextAtRE.FindAllStringSubmatch(string(b), -1) {
		w, _ := strconv.ParseFloat(m[1], 64)
		x, _ := strconv.ParseFloat(m[2], 64)
		y, _ := strconv.ParseFloat(m[3], 64)
		sz, _ := strconv.ParseFloat(m[4], 64)
		out = append(out, svgText{x: x, y: -y, size: sz, width: w, s: html.UnescapeString(m[5])}) // text is drawn under scale(1, -1)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no text found in the SVG", c.name)
	}
	if n := strings.Count(string(b), "<text "); n != len(out) {
		t.Fatalf("%s: %d of %d <text> elements have a textLength: in a browser's font the others may be wider than laid out", c.name, len(out), n)
	}
	return out
}

func allCharts(t *testing.T) []*chart {
	t.Helper()
	var cs []*chart
	deep := singleFile() // a spectrum out to 99.99 %: its tick at the right edge
	deep.Runs[0].Phases[0].Latency["ok"] = hist(5, 20000, 1e6, 0.5)
	long := compareFile(3, 1) // names long enough to fill more than a legend row each
	for i := range long.Runs {
		long.Runs[i].Relay.Name += "-with-a-name-as-long-as-a-relay-url-ws://127.0.0.1:7447/some/path/to/it"
	}
	ab := append(relabel([]*results.File{long}, "baseline"), relabel([]*results.File{compareFile(3, 1.2)}, "candidate")...)
	load := loadPhase() // titles that say from when OK latency is timed
	load.Name, load.Series = "load/staircase-step-10", series(3, 3, 200, 6e5)
	for _, fs := range [][]*results.File{{deep}, {compareFile(0, 1)}, {compareFile(3, 1)}, ab, {oneRun("load", nil, load)}} {
		c, err := charts(fs)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c...)
	}
	return cs
}

// TestChartTextInsideFrame checks that no text of any chart (tick labels
// such as "99.99%" at the right edge, legend entries) runs past the frame,
// and that every legend entry is drawn in the strip below the axes, not
// over the data.
func TestChartTextInsideFrame(t *testing.T) {
	seen99 := false
	for _, c := range allCharts(t) {
		w := float64(chartW.Points())
		lh := float64(c.plot.legendHeight().Points())
		if got, want := c.plot.height(), chartH+c.plot.legendHeight(); got != want {
			t.Errorf("%s: height %v, want the plot's and the legend's %v", c.name, got, want)
		}
		labels := map[string]bool{}
		for _, e := range c.plot.entries(chartW) {
			labels[e.text] = true
		}
		if len(labels) > 0 && lh == 0 {
			t.Errorf("%s: a legend of %d entries has no strip", c.name, len(labels))
		}
		texts := svgTexts(t, c)
		legendOverlaps(t, c.name, texts, labels)
		for _, tx := range texts {
			if right := tx.x + tx.width; tx.x < 0 || right > w || tx.width <= 0 && tx.s != "" {
				t.Errorf("%s: text %q spans x %.1f–%.1f, outside the 0–%.0f frame", c.name, tx.s, tx.x, right, w)
			}
			if tx.s == "99.99%" {
				seen99 = true
			}
			if labels[tx.s] && tx.y > lh {
				t.Errorf("%s: legend entry %q drawn at y %.1f, above the legend strip (0–%.1f): over the plot", c.name, tx.s, tx.y, lh)
			}
		}
	}
	if !seen99 {
		t.Error("no chart has a 99.99% tick: the right-edge case is not tested")
	}
}

// legendOverlaps fails the test when two legend texts on one row overlap
// (with their thumbnails): "(2 runs)khatru-native" in a browser whose
// font was wider than the one measured.
func legendOverlaps(t *testing.T, name string, texts []svgText, labels map[string]bool) {
	t.Helper()
	rows := map[float64][]svgText{}
	for _, tx := range texts {
		if labels[tx.s] {
			rows[tx.y] = append(rows[tx.y], tx)
		}
	}
	for _, row := range rows {
		slices.SortFunc(row, func(a, b svgText) int { return cmp.Compare(a.x, b.x) })
		for i := 1; i < len(row); i++ {
			if end := row[i-1].x + row[i-1].width + float64((thumbW + thumbGap).Points()); row[i].x < end {
				t.Errorf("%s: legend %q (ends at x %.1f) overlaps %q (from x %.1f)", name, row[i-1].s, end, row[i].s, row[i].x)
			}
		}
	}
}

// TestBarNamesApart checks that the relay names under the bars of a bar
// chart do not run into each other: a name without spaces (a relay named
// by its URL) wider than its share of the axis is cut into lines that fit.
func TestBarNamesApart(t *testing.T) {
	f := compareFile(0, 1)
	for i := range f.Runs {
		f.Runs[i].Relay.Name = "wss://relay-number-" + strconv.Itoa(i) + ".nostr.example.org:7777/a/long/path/to/the/websocket"
	}
	cs, err := charts([]*results.File{f})
	if err != nil {
		t.Fatal(err)
	}
	bars := 0
	for _, c := range cs {
		if !strings.HasPrefix(c.name, "bars-") {
			continue
		}
		bars++
		names := map[string]bool{}
		for _, tk := range c.plot.X.Tick.Marker.Ticks(c.plot.X.Min, c.plot.X.Max) {
			for _, l := range strings.Split(tk.Label, "\n") {
				names[l] = true
			}
		}
		rows := map[float64][]svgText{}
		for _, tx := range svgTexts(t, c) {
			if names[tx.s] {
				rows[tx.y] = append(rows[tx.y], tx)
			}
		}
		if len(rows) < 2 {
			t.Errorf("%s: the relay names are drawn on %d line(s), want them broken onto several", c.name, len(rows))
		}
		for _, row := range rows {
			slices.SortFunc(row, func(a, b svgText) int { return cmp.Compare(a.x, b.x) })
			for i := 1; i < len(row); i++ {
				if end := row[i-1].x + row[i-1].width; row[i].x < end {
					t.Errorf("%s: bar name %q (ends at x %.1f) runs into %q (from x %.1f)", c.name, row[i-1].s, end, row[i].s, row[i].x)
				}
			}
		}
	}
	if bars == 0 {
		t.Fatal("no bar chart drawn: nothing tested")
	}
}

// TestWithRuns checks the legend name of a relay drawn with several runs.
func TestWithRuns(t *testing.T) {
	for key, want := range map[string]string{
		"strfry":                    "strfry (3 runs)",
		"strfry (baseline)":         "strfry (baseline, 3 runs)",
		"ws://127.0.0.1:7777/(x)":   "ws://127.0.0.1:7777/(x) (3 runs)",
		"khatru-memory (candidate)": "khatru-memory (candidate, 3 runs)",
	} {
		if got := withRuns(key, 3); got != want {
			t.Errorf("withRuns(%q, 3) = %q, want %q", key, got, want)
		}
	}
}

// TestLegendDashedRepeats checks that a chart drawing a relay's later runs
// dashed says so in its legend, and that one without repeats does not.
func TestLegendDashedRepeats(t *testing.T) {
	has := func(fs ...*results.File) map[string]bool {
		cs, err := charts(fs)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, c := range cs {
			for _, e := range c.plot.entries(chartW) {
				if e.text == repeatsEntry().text {
					out[c.name] = true
				}
			}
		}
		return out
	}
	if got := has(compareFile(3, 1)); !got["spectrum-publish"] || !got["throughput-publish"] {
		t.Errorf("3 runs a relay: no chart explains its dashed lines (charts with the entry: %v)", got)
	}
	if got := has(compareFile(0, 1)); len(got) > 0 {
		t.Errorf("one run a relay: %v explain dashed lines none of them draw", got)
	}
}

// TestValueTicks checks the value axis: at least four labelled ticks, at
// most eight, the top (raised by niceY) labelled.
func TestValueTicks(t *testing.T) {
	for _, hi := range []float64{1, 1.04, 3, 5.5, 7.9, 12, 99, 100, 101, 830, 8000, 9200, 12345, 2.5e6} {
		p := newPlot("t", "x", "y")
		p.Y.Min, p.Y.Max = 0, hi
		niceY(p)
		if p.Y.Max < hi*1.04-1e-9 {
			t.Errorf("hi %v: top %v leaves the data no headroom", hi, p.Y.Max)
		}
		var labelled []string
		last := 0.0
		for _, tk := range (valueTicks{}).Ticks(p.Y.Min, p.Y.Max) {
			if tk.Label != "" {
				labelled = append(labelled, tk.Label)
				last = tk.Value
			}
		}
		if n := len(labelled); n < 4 || n > 8 {
			t.Errorf("hi %v (top %v): %d labelled ticks %v, want 4–8", hi, p.Y.Max, n, labelled)
		}
		if last != p.Y.Max {
			t.Errorf("hi %v: top %v is not labelled (last label at %v)", hi, p.Y.Max, last)
		}
	}
	if got := fmtTick(12000, 0); got != "12,000" {
		t.Errorf("fmtTick(12000) = %q, want 12,000", got)
	}
}

// TestThroughputAxisUnit checks that throughput charts name their unit.
func TestThroughputAxisUnit(t *testing.T) {
	n := 0
	for _, c := range allCharts(t) {
		if !strings.HasPrefix(c.name, "throughput-") {
			continue
		}
		n++
		if y := c.plot.Y.Label.Text; y != "events per second" && y != "queries per second" && !strings.Contains(y, " or ") {
			t.Errorf("%s: y axis %q names no unit", c.name, y)
		}
	}
	if n == 0 {
		t.Fatal("no throughput chart")
	}
	if got := rateAxis(results.CountAccepted, results.CountSent); got != "events per second" {
		t.Errorf("rateAxis(accepted, sent) = %q", got)
	}
	if got := rateAxis(results.CountQueries, results.CountEventsReturned); got != "queries or events per second" {
		t.Errorf("rateAxis(queries, events_returned) = %q", got)
	}
}

var svgStrokeRE = regexp.MustCompile(`<path d="M[^"]*" style="fill:none;stroke:(#[0-9A-F]{6})(;stroke-opacity:[0-9.]+)?;stroke-width:([0-9.]+)`)

// TestLatencyMaxUnderP99 checks that a run's max latency line is drawn
// before (under) its p99 line, wider and translucent, so that a p99 equal
// to the max stays visible; the legend still reads p50, p99, max.
func TestLatencyMaxUnderP99(t *testing.T) {
	cs, err := charts([]*results.File{singleFile()})
	if err != nil {
		t.Fatal(err)
	}
	var c *chart
	for _, x := range cs {
		if x.name == "latency-time-publish" {
			c = x
		}
	}
	if c == nil {
		t.Fatal("no latency-time-publish chart")
	}
	var order []string
	for _, e := range c.plot.legend {
		order = append(order, e.text)
	}
	if strings.Join(order, ",") != "p50,p99,max" {
		t.Errorf("legend %v, want p50, p99, max", order)
	}
	b, err := c.svg()
	if err != nil {
		t.Fatal(err)
	}
	maxAt, p99At := -1, -1
	for i, m := range svgStrokeRE.FindAllStringSubmatch(string(b), -1) {
		switch {
		case m[2] != "" && m[3] == "5" && maxAt < 0:
			maxAt = i
		case m[1] == "#7AC36A" && m[2] == "" && p99At < 0:
			p99At = i
		}
	}
	if maxAt < 0 || p99At < 0 || maxAt > p99At {
		t.Errorf("max band drawn at path %d, p99 line at %d: want the max (wide, translucent) first", maxAt, p99At)
	}
}

// A sweep whose points hold no latency (every event refused) draws its
// throughput plots and leaves the latency plot out; its log axis had no
// range and the page's rendering panicked.
func TestSweepChartsWithoutLatency(t *testing.T) {
	f := oneRun("sweep", nil, sweepNotePhases()...)
	cs, err := charts([]*results.File{f})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.name)
		if _, err := c.svg(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	if !slices.Contains(names, "sweep-throughput") || slices.Contains(names, "sweep-latency") {
		t.Errorf("charts %v: want the throughput plot and no latency plot", names)
	}
}

// Counters that are the same second by second (a load's intended, sent
// and accepted when the relay keeps up) are one line on the throughput
// chart, named after all of them; a counter that differs keeps its own.
func TestThroughputSameLinesOnce(t *testing.T) {
	p := loadPhase()
	for s := range 3 {
		n := int64(200)
		p.Series = append(p.Series, results.Second{T: s, Counts: map[string]int64{"intended": n, "sent": n, "accepted": n - int64(s)}})
	}
	cs, err := charts([]*results.File{oneRun("load", nil, p)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.name != "throughput-load" {
			continue
		}
		var labels []string
		for _, e := range c.plot.entries(chartW) {
			labels = append(labels, e.text)
		}
		if !slices.Equal(labels, []string{"accepted", "intended = sent"}) {
			t.Errorf("legend %q, want accepted and 'intended = sent'", labels)
		}
		return
	}
	t.Fatal("no load throughput chart")
}
