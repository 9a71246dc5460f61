package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/relaybench/relaybench/results"
)

// maxPoints is the most points a time-series line is drawn with; longer
// series are downsampled (bucket means, bucket maxima for maxima).
const maxPoints = 400

// Chart sizes.
var (
	chartW = vg.Points(520)
	chartH = vg.Points(270)
)

// headroom raises the top of p's y axis above the data so that the legend
// (top corner) does not cover the lines.
func headroom(p *plot.Plot) {
	if p.Y.Max > p.Y.Min {
		p.Y.Max += (p.Y.Max - p.Y.Min) * 0.15
	}
}

// chart is one figure of a report.
type chart struct {
	name  string // file name without extension, unique in a report
	title string
	plot  *plot.Plot
}

// Charts writes every chart of files to dir as PNG and SVG (dir is created
// when missing) and returns the paths written.
func Charts(dir string, files []*results.File, o Options) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("charts: %w", err)
	}
	cs, err := charts(files)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, c := range cs {
		svg, err := c.svg()
		if err != nil {
			return paths, err
		}
		p := filepath.Join(dir, c.name+".svg")
		if err := os.WriteFile(p, svg, 0o644); err != nil {
			return paths, fmt.Errorf("charts: %w", err)
		}
		paths = append(paths, p)
		png, err := c.png()
		if err != nil {
			return paths, err
		}
		p = filepath.Join(dir, c.name+".png")
		if err := os.WriteFile(p, png, 0o644); err != nil {
			return paths, fmt.Errorf("charts: %w", err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

func (c *chart) svg() ([]byte, error) {
	cv := vgsvg.New(chartW, chartH)
	c.plot.Draw(draw.New(cv))
	var b bytes.Buffer
	if _, err := cv.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("chart %s: %w", c.name, err)
	}
	return b.Bytes(), nil
}

func (c *chart) png() ([]byte, error) {
	cv := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(chartW, chartH), vgimg.UseDPI(144))}
	c.plot.Draw(draw.New(cv))
	var b bytes.Buffer
	if _, err := cv.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("chart %s: %w", c.name, err)
	}
	return b.Bytes(), nil
}

var (
	svgStart = regexp.MustCompile(`(?s)^.*?<svg `)
	svgSize  = regexp.MustCompile(`width="[^"]*" height="[^"]*"`)
	svgNS    = regexp.MustCompile(`\s+xmlns(:xlink)?="[^"]*"`)
)

// inlineSVG returns the chart as an <svg> element for an HTML page: no XML
// prolog, no namespace declarations (HTML does not need them), scaled to the
// width of its container.
func (c *chart) inlineSVG() (string, error) {
	b, err := c.svg()
	if err != nil {
		return "", err
	}
	s := svgStart.ReplaceAllString(string(b), "<svg ")
	s = svgSize.ReplaceAllLiteralString(s, `width="100%" role="img"`)
	s = svgNS.ReplaceAllString(s, "")
	return s, nil
}

// newPlot returns a plot with the report's common style.
func newPlot(titleText, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = titleText
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Legend.Left = false
	sans := func(size float64) font.Font {
		return font.Font{Typeface: "Liberation", Variant: "Sans", Size: vg.Points(size)}
	}
	p.Title.TextStyle.Font = sans(12)
	p.Title.TextStyle.Font.Weight = xfont.WeightBold
	p.Title.Padding = vg.Points(6)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sans(10)
		a.Tick.Label.Font = sans(9)
	}
	p.Legend.TextStyle.Font = sans(9)
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 225}
	g.Horizontal.Color = color.Gray{Y: 225}
	p.Add(g)
	return p
}

// addLine adds a coloured line with a legend entry.
func addLine(p *plot.Plot, i int, label string, xys plotter.XYs, dashed bool) error {
	if len(xys) == 0 {
		return nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("chart line %s: %w", label, err)
	}
	l.Color = plotutil.Color(i)
	l.Width = vg.Points(1.5)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	p.Add(l)
	if label != "" {
		p.Legend.Add(label, l)
	}
	return nil
}

// addLinePoints adds a line with a marker at each point (for few points).
func addLinePoints(p *plot.Plot, i int, label string, xys plotter.XYs, dashed bool) error {
	if len(xys) == 0 {
		return nil
	}
	l, s, err := plotter.NewLinePoints(xys)
	if err != nil {
		return fmt.Errorf("chart line %s: %w", label, err)
	}
	l.Color, s.Color = plotutil.Color(i), plotutil.Color(i)
	l.Width = vg.Points(1.5)
	s.Shape = plotutil.Shape(i)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	p.Add(l, s)
	if label != "" {
		p.Legend.Add(label, l, s)
	}
	return nil
}

// downsample reduces xys to at most maxPoints by averaging buckets of
// consecutive points (or keeping the bucket maximum when keepMax).
func downsample(xys plotter.XYs, keepMax bool) plotter.XYs {
	if len(xys) <= maxPoints {
		return xys
	}
	out := make(plotter.XYs, 0, maxPoints)
	per := float64(len(xys)) / maxPoints
	for b := range maxPoints {
		lo, hi := int(float64(b)*per), int(float64(b+1)*per)
		if hi > len(xys) {
			hi = len(xys)
		}
		if lo >= hi {
			continue
		}
		var x, y float64
		m := math.Inf(-1)
		for _, pt := range xys[lo:hi] {
			x += pt.X
			y += pt.Y
			m = math.Max(m, pt.Y)
		}
		n := float64(hi - lo)
		if keepMax {
			out = append(out, plotter.XY{X: x / n, Y: m})
		} else {
			out = append(out, plotter.XY{X: x / n, Y: y / n})
		}
	}
	return out
}

// slug makes a chart file name part from a phase name.
func slug(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b.WriteRune(c)
		default:
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

// runLine is one run of a phase. Runs of one relay share a colour; repeats
// after the first are dashed and left out of the legend, whose entry then
// says how many runs the colour stands for.
type runLine struct {
	label  string // "" for repeats after the first
	color  int
	repeat bool
	p      *results.Phase
}

// phaseRuns returns the phases named name of every run.
func phaseRuns(groups []*relayRuns, name string) []runLine {
	var out []runLine
	for gi, g := range groups {
		ps := g.phases(name)
		for i, p := range ps {
			l := runLine{color: gi, repeat: i > 0, p: p}
			if i == 0 {
				l.label = g.key
				if len(ps) > 1 {
					l.label = fmt.Sprintf("%s (%d runs)", g.key, len(ps))
				}
			}
			out = append(out, l)
		}
	}
	return out
}

// suffix appends s to a non-empty legend label.
func suffix(label, s string) string {
	if label == "" {
		return ""
	}
	return label + s
}

// charts builds every chart of files, in a stable order: per phase the
// throughput and latency over time, the latency percentile spectrum and the
// resource use over time; then relay-vs-relay bars, then the payload sweep.
func charts(files []*results.File) ([]*chart, error) {
	groups := groupRuns(files)
	var cs []*chart
	for _, name := range phaseNames(groups) {
		if isSweepPhase(name) {
			continue
		}
		rl := phaseRuns(groups, name)
		for _, mk := range []func(string, []runLine) (*chart, error){throughputChart, latencyTimeChart, spectrumChart, cpuChart, rssChart} {
			c, err := mk(name, rl)
			if err != nil {
				return nil, err
			}
			if c != nil {
				cs = append(cs, c)
			}
		}
	}
	if len(groups) > 1 {
		bs, err := barCharts(groups)
		if err != nil {
			return nil, err
		}
		cs = append(cs, bs...)
	}
	ss, err := sweepCharts(groups)
	if err != nil {
		return nil, err
	}
	return append(cs, ss...), nil
}

// mainCounter is the counter a throughput line shows when several runs share
// a chart.
func mainCounter(ps []runLine) string {
	names := map[string]bool{}
	for _, r := range ps {
		for _, s := range r.p.Series {
			for k := range s.Counts {
				names[k] = true
			}
		}
	}
	for _, k := range []string{"accepted", "deliveries", "queries", "sent"} {
		if names[k] {
			return k
		}
	}
	if ks := sortedKeys(names); len(ks) > 0 {
		return ks[0]
	}
	return ""
}

// complete returns the seconds of p's series that lie wholly inside the
// phase: the last bucket of a phase that did not last a whole number of
// seconds covers less than a second, and its count is not a per-second rate.
func complete(p *results.Phase) []results.Second {
	var out []results.Second
	for _, s := range p.Series {
		if p.Duration <= 0 || int64(s.T+1)*1e9 <= p.Duration {
			out = append(out, s)
		}
	}
	return out
}

func throughputChart(name string, rl []runLine) (*chart, error) {
	var with []runLine
	for _, r := range rl {
		if len(complete(r.p)) >= 2 {
			with = append(with, r)
		}
	}
	if len(with) == 0 {
		return nil, nil // under two whole seconds: nothing to draw over time
	}
	p := newPlot(title(name)+": throughput over time", "seconds since phase start", "per second")
	if len(with) == 1 {
		names := map[string]bool{}
		for _, s := range complete(with[0].p) {
			for k := range s.Counts {
				names[k] = true
			}
		}
		for i, k := range sortedKeys(names) {
			var xys plotter.XYs
			for _, s := range complete(with[0].p) {
				xys = append(xys, plotter.XY{X: float64(s.T), Y: float64(s.Counts[k])})
			}
			if err := addLine(p, i, humanName(k), downsample(xys, false), false); err != nil {
				return nil, err
			}
		}
	} else {
		k := mainCounter(with)
		p.Title.Text = title(name) + ": " + humanName(k) + " per second over time"
		for _, r := range with {
			var xys plotter.XYs
			for _, s := range complete(r.p) {
				xys = append(xys, plotter.XY{X: float64(s.T), Y: float64(s.Counts[k])})
			}
			if err := addLine(p, r.color, r.label, downsample(xys, false), r.repeat); err != nil {
				return nil, err
			}
		}
	}
	p.Y.Min = 0
	headroom(p)
	return &chart{name: "throughput-" + slug(name), title: p.Title.Text, plot: p}, nil
}

func latencyTimeChart(name string, rl []runLine) (*chart, error) {
	var with []runLine
	for _, r := range rl {
		n := 0
		for _, s := range r.p.Series {
			if s.LatP50Ns > 0 || s.LatP99Ns > 0 {
				n++
			}
		}
		if n >= 2 {
			with = append(with, r)
		}
	}
	if len(with) == 0 {
		return nil, nil
	}
	lb := latencyLabel(primaryLatency(with[0].p.Latency))
	p := newPlot(title(name)+": "+lb+" latency over time", "seconds since phase start", "milliseconds")
	line := func(r runLine, get func(results.Second) int64, keepMax bool) plotter.XYs {
		var xys plotter.XYs
		for _, s := range r.p.Series {
			if v := get(s); v > 0 {
				xys = append(xys, plotter.XY{X: float64(s.T), Y: float64(v) / 1e6})
			}
		}
		return downsample(xys, keepMax)
	}
	p50 := func(s results.Second) int64 { return s.LatP50Ns }
	p99 := func(s results.Second) int64 { return s.LatP99Ns }
	pmax := func(s results.Second) int64 { return s.LatMaxNs }
	if len(with) == 1 {
		for i, l := range []struct {
			label string
			get   func(results.Second) int64
		}{{"p50", p50}, {"p99", p99}, {"max", pmax}} {
			if err := addLine(p, i, l.label, line(with[0], l.get, l.label == "max"), false); err != nil {
				return nil, err
			}
		}
	} else {
		for _, r := range with {
			if err := addLine(p, r.color, suffix(r.label, " p99"), line(r, p99, false), r.repeat); err != nil {
				return nil, err
			}
		}
	}
	p.Y.Min = 0
	headroom(p)
	return &chart{name: "latency-time-" + slug(name), title: p.Title.Text, plot: p}, nil
}

// spectrumQuantiles are the percentiles a spectrum line is drawn through,
// evenly spaced on the 1/(1-q) axis up to 99.999%.
func spectrumQuantiles() []float64 {
	var qs []float64
	for e := 0.0; e <= 5.0001; e += 0.05 {
		qs = append(qs, 100*(1-math.Pow(10, -e)))
	}
	return qs
}

// spectrum returns the (1/(1-q), ms) points of a histogram from the embedded
// HDR encoding, or from its summary percentiles when it cannot be decoded.
// Points beyond the resolution of the sample count are left out.
func spectrum(h *results.Histogram) plotter.XYs {
	var xys plotter.XYs
	if h == nil || h.Count == 0 {
		return nil
	}
	if d, err := decode(h); err == nil && d.Count() > 0 {
		for _, q := range spectrumQuantiles() {
			x := 1 / (1 - q/100)
			if x > float64(d.Count()) {
				break
			}
			xys = append(xys, plotter.XY{X: x, Y: float64(d.Quantile(q)) / 1e6})
		}
		return append(xys, plotter.XY{X: math.Max(float64(d.Count()), xys[len(xys)-1].X*1.0001), Y: float64(d.Max()) / 1e6})
	}
	keys := sortedKeys(h.Percentiles)
	var qs []float64
	for _, k := range keys {
		var q float64
		if _, err := fmt.Sscan(k, &q); err == nil && q < 100 {
			qs = append(qs, q)
		}
	}
	sort.Float64s(qs)
	for _, q := range qs {
		xys = append(xys, plotter.XY{X: 1 / (1 - q/100), Y: float64(h.Percentiles[fmt.Sprint(q)]) / 1e6})
	}
	return xys
}

// percentileTicks label the 1/(1-q) axis in percentiles.
type percentileTicks struct{}

func (percentileTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for _, t := range []struct {
		x     float64
		label string
	}{{1, "0%"}, {2, "50%"}, {10, "90%"}, {100, "99%"}, {1e3, "99.9%"}, {1e4, "99.99%"}, {1e5, "99.999%"}, {1e6, "99.9999%"}} {
		if t.x >= min && t.x <= max*1.0001 {
			ts = append(ts, plot.Tick{Value: t.x, Label: t.label})
		}
	}
	return ts
}

func spectrumChart(name string, rl []runLine) (*chart, error) {
	lname := ""
	for _, r := range rl {
		if lname = primaryLatency(r.p.Latency); lname != "" {
			break
		}
	}
	if lname == "" {
		return nil, nil
	}
	p := newPlot(title(name)+": "+latencyLabel(lname)+" latency by percentile", "percentile", "milliseconds")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = percentileTicks{}
	p.Legend.Left = true
	n := 0
	for _, r := range rl {
		xys := spectrum(r.p.Latency[lname])
		if len(xys) == 0 {
			continue
		}
		if err := addLine(p, r.color, r.label, xys, r.repeat); err != nil {
			return nil, err
		}
		n++
	}
	if n == 0 {
		return nil, nil
	}
	p.X.Min = 1
	p.Y.Min = 0
	headroom(p)
	return &chart{name: "spectrum-" + slug(name), title: p.Title.Text, plot: p}, nil
}

func resourceRuns(rl []runLine) []runLine {
	var with []runLine
	for _, r := range rl {
		if r.p.Resources != nil && len(r.p.Resources.Series) >= 2 {
			with = append(with, r)
		}
	}
	return with
}

func resLine(r runLine, get func(results.ResourceSample) float64) plotter.XYs {
	var xys plotter.XYs
	for _, s := range r.p.Resources.Series {
		xys = append(xys, plotter.XY{X: s.T, Y: get(s)})
	}
	return downsample(xys, false)
}

func cpuChart(name string, rl []runLine) (*chart, error) {
	with := resourceRuns(rl)
	if len(with) == 0 {
		return nil, nil
	}
	p := newPlot(title(name)+": CPU use over time", "seconds since phase start", "cores busy")
	relay := func(s results.ResourceSample) float64 { return s.RelayCPU }
	client := func(s results.ResourceSample) float64 { return s.ClientCPU }
	if len(with) == 1 {
		if err := addLine(p, 0, "relay", resLine(with[0], relay), false); err != nil {
			return nil, err
		}
		if err := addLine(p, 1, "client (relaybench)", resLine(with[0], client), true); err != nil {
			return nil, err
		}
	} else {
		for _, r := range with {
			if err := addLine(p, r.color, suffix(r.label, " relay"), resLine(r, relay), r.repeat); err != nil {
				return nil, err
			}
		}
	}
	p.Y.Min = 0
	headroom(p)
	return &chart{name: "cpu-" + slug(name), title: p.Title.Text, plot: p}, nil
}

func rssChart(name string, rl []runLine) (*chart, error) {
	with := resourceRuns(rl)
	if len(with) == 0 {
		return nil, nil
	}
	p := newPlot(title(name)+": relay memory (RSS) over time", "seconds since phase start", "MB")
	for _, r := range with {
		if err := addLine(p, r.color, r.label, resLine(r, func(s results.ResourceSample) float64 { return float64(s.RelayRSS) / 1e6 }), r.repeat); err != nil {
			return nil, err
		}
	}
	p.Y.Min = 0
	headroom(p)
	return &chart{name: "rss-" + slug(name), title: p.Title.Text, plot: p}, nil
}

// primaryRate is the rate a phase's bar chart shows.
func primaryRate(ps []*results.Phase) string {
	names := map[string]bool{}
	for _, p := range ps {
		for k := range p.Rates {
			names[k] = true
		}
	}
	for _, k := range []string{"events_per_sec", "queries_per_sec", "deliveries_per_sec"} {
		if names[k] {
			return k
		}
	}
	if ks := sortedKeys(names); len(ks) > 0 {
		return ks[0]
	}
	return ""
}

// barCharts compare relays per phase: the phase's main rate, and the
// primary latency's p50 and p99 side by side (medians over repeats).
func barCharts(groups []*relayRuns) ([]*chart, error) {
	var cs []*chart
	for _, name := range phaseNames(groups) {
		if isSweepPhase(name) {
			continue
		}
		var all []*results.Phase
		for _, g := range groups {
			all = append(all, g.phases(name)...)
		}
		if k := primaryRate(all); k != "" {
			c, err := bars(name+"-"+slug(k), title(name)+": "+rateName(k)+" by relay (median of runs)", rateName(k), groups, name,
				[]string{""}, func(p *results.Phase, _ int) (float64, bool) { return rate(p.Rates, k) })
			if err != nil {
				return nil, err
			}
			if c != nil {
				cs = append(cs, c)
			}
		}
		if l := primaryLatency(all[0].Latency); l != "" {
			qs := []float64{50, 99}
			c, err := bars(name+"-"+l+"-latency", title(name)+": "+latencyLabel(l)+" latency by relay (median of runs)", "milliseconds", groups, name,
				[]string{"p50", "p99"}, func(p *results.Phase, s int) (float64, bool) {
					v, ok := latQ(p.Latency[l], qs[s])
					return float64(v) / 1e6, ok
				})
			if err != nil {
				return nil, err
			}
			if c != nil {
				cs = append(cs, c)
			}
		}
	}
	return cs, nil
}

// bars draws one group of bars per relay, one bar per series.
func bars(file, titleText, y string, groups []*relayRuns, name string, series []string, get func(*results.Phase, int) (float64, bool)) (*chart, error) {
	p := newPlot(titleText, "", y)
	var names []string
	var rows []*relayRuns
	for _, g := range groups {
		if len(g.phases(name)) > 0 {
			names = append(names, g.key)
			rows = append(rows, g)
		}
	}
	if len(rows) < 2 {
		return nil, nil
	}
	w := vg.Points(float64(48) / float64(len(series)))
	any := false
	top := 0.0
	for s, label := range series {
		vals := make(plotter.Values, len(rows))
		for i, g := range rows {
			var vs []float64
			for _, ph := range g.phases(name) {
				if v, ok := get(ph, s); ok {
					vs = append(vs, v)
				}
			}
			if len(vs) > 0 {
				vals[i] = median(vs)
				top = math.Max(top, vals[i])
				any = true
			}
		}
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", file, err)
		}
		b.Color = plotutil.Color(s)
		b.LineStyle.Width = 0
		b.Offset = w * vg.Length(float64(s)-float64(len(series)-1)/2)
		p.Add(b)
		if label != "" {
			p.Legend.Add(label, b)
		}
	}
	if !any {
		return nil, nil
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	p.Y.Min, p.Y.Max = 0, top*1.18 // room for the legend
	p.Legend.Left = true
	return &chart{name: "bars-" + slug(file), title: titleText, plot: p}, nil
}

// payloadTicks label a payload-size axis.
type payloadTicks []float64

func (t payloadTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for _, v := range t {
		ts = append(ts, plot.Tick{Value: v, Label: fmtPayload(v)})
	}
	return ts
}

// sweepCharts draw narwhal's three payload-sweep plots: msg/s, MB/s and
// latency (mean solid, p99 dashed) against payload size, one line per run.
func sweepCharts(groups []*relayRuns) ([]*chart, error) {
	type line struct {
		label  string
		color  int
		repeat bool
		pts    []sweepPoint
	}
	var lines []line
	sizes := map[float64]bool{}
	for gi, g := range groups {
		n := 0
		for _, r := range g.runs {
			if len(sweep(r)) > 0 {
				n++
			}
		}
		k := 0
		for _, r := range g.runs {
			if pts := sweep(r); len(pts) > 0 {
				l := line{color: gi, repeat: k > 0, pts: pts}
				if k == 0 {
					l.label = g.key
					if n > 1 {
						l.label = fmt.Sprintf("%s (%d runs)", g.key, n)
					}
				}
				k++
				lines = append(lines, l)
				for _, pt := range pts {
					sizes[pt.size] = true
				}
			}
		}
	}
	if len(lines) == 0 {
		return nil, nil
	}
	var ticks payloadTicks
	for s := range sizes {
		ticks = append(ticks, s)
	}
	sort.Float64s(ticks)
	mk := func(file, titleText, y string) *plot.Plot {
		p := newPlot(titleText, "payload size", y)
		if len(ticks) > 1 {
			p.X.Scale = plot.LogScale{}
		}
		p.X.Tick.Marker = ticks
		return p
	}
	xy := func(pts []sweepPoint, get func(sweepPoint) (float64, bool)) plotter.XYs {
		var xys plotter.XYs
		for _, pt := range pts {
			if v, ok := get(pt); ok {
				xys = append(xys, plotter.XY{X: pt.size, Y: v})
			}
		}
		return xys
	}
	msgs := mk("sweep-throughput", "Payload sweep: message throughput", "messages per second")
	mbs := mk("sweep-data", "Payload sweep: data throughput", "MB per second")
	lat := mk("sweep-latency", "Payload sweep: latency (mean solid, p99 dashed)", "milliseconds")
	mean := func(pt sweepPoint) (float64, bool) {
		h := pt.latency()[primaryLatency(pt.latency())]
		if h == nil || h.Count == 0 {
			return 0, false
		}
		return h.Mean / 1e6, true
	}
	p99 := func(pt sweepPoint) (float64, bool) {
		v, ok := latQ(pt.latency()[primaryLatency(pt.latency())], 99)
		return float64(v) / 1e6, ok
	}
	for _, l := range lines {
		if err := addLinePoints(msgs, l.color, l.label, xy(l.pts, sweepRate), l.repeat); err != nil {
			return nil, err
		}
		if err := addLinePoints(mbs, l.color, l.label, xy(l.pts, sweepMB), l.repeat); err != nil {
			return nil, err
		}
		if err := addLinePoints(lat, l.color, suffix(l.label, " mean"), xy(l.pts, mean), false); err != nil {
			return nil, err
		}
		if err := addLinePoints(lat, l.color, suffix(l.label, " p99"), xy(l.pts, p99), true); err != nil {
			return nil, err
		}
	}
	var cs []*chart
	for _, c := range []struct {
		name string
		p    *plot.Plot
	}{{"sweep-throughput", msgs}, {"sweep-data", mbs}, {"sweep-latency", lat}} {
		c.p.Y.Min = 0
		headroom(c.p)
		cs = append(cs, &chart{name: c.name, title: c.p.Title.Text, plot: c.p})
	}
	return cs, nil
}
