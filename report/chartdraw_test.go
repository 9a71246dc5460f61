package report

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// svgText is one <text> element of a chart's SVG, in plot coordinates (y
// up from the bottom of the chart).
type svgText struct {
	x, y float64
	size float64
	s    string
}

var svgTextAtRE = regexp.MustCompile(`(?s)<text x="([-0-9.]+)" y="([-0-9.]+)"[^>]*?font-size:([0-9.]+)px">([^<]*)</text>`)

func svgTexts(t *testing.T, c *chart) []svgText {
	t.Helper()
	b, err := c.svg()
	if err != nil {
		t.Fatal(err)
	}
	var out []svgText
	for _, m := range svgTextAtRE.FindAllStringSubmatch(string(b), -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		y, _ := strconv.ParseFloat(m[2], 64)
		sz, _ := strconv.ParseFloat(m[3], 64)
		out = append(out, svgText{x: x, y: -y, size: sz, s: m[4]}) // text is drawn under scale(1, -1)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no text found in the SVG", c.name)
	}
	return out
}

func allCharts(t *testing.T) []*chart {
	t.Helper()
	var cs []*chart
	deep := singleFile() // a spectrum out to 99.99 %: its tick at the right edge
	deep.Runs[0].Phases[0].Latency["ok"] = hist(5, 20000, 1e6, 0.5)
	for _, fs := range [][]*results.File{{deep}, {compareFile(0, 1)}, {compareFile(3, 1)}} {
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
		for _, e := range c.plot.legend {
			labels[e.text] = true
		}
		if len(labels) > 0 && lh == 0 {
			t.Errorf("%s: a legend of %d entries has no strip", c.name, len(labels))
		}
		for _, tx := range svgTexts(t, c) {
			// Liberation Sans averages under 0.6 em a character.
			if right := tx.x + 0.6*tx.size*float64(len([]rune(tx.s))); tx.x < 0 || right > w {
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
