package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
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

// shape is the marker of colour i: filled, so that a lone point shows.
func shape(i int) draw.GlyphDrawer {
	switch i % 3 {
	case 1:
		return draw.BoxGlyph{}
	case 2:
		return draw.PyramidGlyph{}
	}
	return draw.CircleGlyph{}
}

// chart is one figure of a report.
type chart struct {
	name  string // file name without extension, unique in a report
	title string
	plot  *fig
	notes []string // caption lines: what the chart could not draw as usual, and why
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
	cv := &textWidths{CanvasSizer: vgsvg.New(chartW, c.plot.height())}
	c.plot.draw(draw.New(cv))
	var b bytes.Buffer
	if _, err := cv.CanvasSizer.(*vgsvg.Canvas).WriteTo(&b); err != nil {
		return nil, fmt.Errorf("chart %s: %w", c.name, err)
	}
	return cv.fix(b.Bytes()), nil
}

func (c *chart) png() ([]byte, error) {
	cv := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(chartW, c.plot.height()), vgimg.UseDPI(144))}
	c.plot.draw(draw.New(cv))
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
func newPlot(titleText, x, y string) *fig {
	p := &fig{Plot: plot.New()}
	p.Title.Text = titleText
	p.X.Label.Text = x
	p.Y.Label.Text = y
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
func addLine(p *fig, i int, label string, xys plotter.XYs, dashed bool) error {
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
		p.addLegend(label, l)
	}
	p.repeats = p.repeats || dashed && label == ""
	return nil
}

// addLinePoints adds a line with a marker at each point (for few points).
func addLinePoints(p *fig, i int, label string, xys plotter.XYs, dashed bool) error {
	if len(xys) == 0 {
		return nil
	}
	l, s, err := plotter.NewLinePoints(xys)
	if err != nil {
		return fmt.Errorf("chart line %s: %w", label, err)
	}
	l.Color, s.Color = plotutil.Color(i), plotutil.Color(i)
	l.Width = vg.Points(1.5)
	s.Shape = shape(i)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	p.Add(l, s)
	if label != "" {
		p.addLegend(label, l, s)
	}
	p.repeats = p.repeats || dashed && label == ""
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
	relay  string // the relay's name (its group key)
	run    int    // 1-based among the relay's runs holding the phase
	runs   int    // how many of the relay's runs hold the phase
	p      *results.Phase
}

// who names a run in a caption: the relay, and the run when it has several.
func (r runLine) who() string {
	if r.runs > 1 {
		return fmt.Sprintf("%s (run %d)", r.relay, r.run)
	}
	return r.relay
}

// phaseRuns returns the phases named name of every run.
func phaseRuns(groups []*relayRuns, name string) []runLine {
	var out []runLine
	for gi, g := range groups {
		ps := g.phases(name)
		for i, p := range ps {
			l := runLine{color: gi, repeat: i > 0, relay: g.key, run: i + 1, runs: len(ps), p: p}
			if i == 0 {
				l.label = g.key
				if len(ps) > 1 {
					l.label = withRuns(g.key, len(ps))
				}
			}
			out = append(out, l)
		}
	}
	return out
}

// phaseSet is one phase of every run of a report: what each per-phase chart
// draws.
type phaseSet struct {
	name    string
	runs    []runLine
	missing []string // relays of the report none of whose runs has the phase
	// compare is set when the report has several relays or runs: a chart
	// then draws one line per run named by its relay, and every relay
	// appears in it, drawn or with a caption saying why not.
	compare bool
}

func phaseSetOf(groups []*relayRuns, name string) phaseSet {
	ps := phaseSet{name: name, runs: phaseRuns(groups, name)}
	for _, g := range groups {
		if len(g.phases(name)) == 0 {
			ps.missing = append(ps.missing, g.key)
		}
	}
	ps.compare = len(groups) > 1 || len(ps.runs) > 1
	return ps
}

// notDrawn adds a text-only legend entry for a relay or run the chart does
// not draw (so that its name is still in the chart), and the caption line
// saying why.
func notDrawn(p *fig, notes *[]string, label, who, why string) {
	if label != "" {
		p.addLegend(label + ": not drawn")
	}
	*notes = append(*notes, who+": not drawn: "+why+".")
}

// addMissing lists the relays without the phase in the legend and caption.
func (ps phaseSet) addMissing(p *fig, notes *[]string) {
	for _, m := range ps.missing {
		p.addLegend(m + ": no " + ps.name + " phase")
		*notes = append(*notes, m+": not drawn: its run has no "+ps.name+" phase.")
	}
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
		ps := phaseSetOf(groups, name)
		for _, mk := range []func(phaseSet) (*chart, error){throughputChart, latencyTimeChart, spectrumChart, cpuChart, rssChart} {
			c, err := mk(ps)
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
	for _, k := range []string{results.CountAccepted, results.CountDeliveries, results.CountQueries, results.CountSent} {
		if names[k] {
			return k
		}
	}
	if ks := sortedKeys(names); len(ks) > 0 {
		return ks[0]
	}
	return ""
}

// span is one point of a phase's series placed on the time axis: its
// interval starts at `at` seconds after the phase start and is `width` wide,
// of which `cover` lies inside the phase (less for a phase's last interval).
type span struct {
	at, width, cover float64
	s                results.Second
}

// mid is the middle of the part of the interval inside the phase: where a
// figure of the interval is drawn.
func (b span) mid() float64 { return b.at + b.cover/2 }

// drawn reports whether the interval lies at least half inside the phase:
// every chart over time draws only those, so the rate and latency charts of
// a phase agree on its points (a sliver of an interval at the phase's end
// gave a latency point where its count, scaled up to a rate, is noise).
func (b span) drawn() bool { return b.cover >= b.width/2-1e-9 }

// secs is a duration in ns as seconds.
func secs(ns int64) float64 { return float64(ns) / 1e9 }

// spans places p's series on the time axis: one-second points, or the
// sub-second points of a short phase (results.Second.WidthMs). Intervals
// that begin after the phase ended are left out.
func spans(p *results.Phase) []span {
	dur := secs(p.Duration)
	var out []span
	for _, s := range p.Series {
		b := span{at: float64(s.T), width: 1, s: s}
		if s.WidthMs > 0 {
			b.at, b.width = float64(s.AtMs)/1e3, float64(s.WidthMs)/1e3
		}
		b.cover = b.width
		if p.Duration > 0 {
			b.cover = math.Min(b.width, dur-b.at)
		}
		if b.cover > 0 {
			out = append(out, b)
		}
	}
	return out
}

// interval is the width in seconds of p's series points (1 when it has none).
func interval(p *results.Phase) float64 {
	for _, s := range p.Series {
		if s.WidthMs > 0 {
			return float64(s.WidthMs) / 1e3
		}
	}
	return 1
}

// fmtSecs formats seconds for captions and legends: "0.04 s", "2.6 s", "31 s".
func fmtSecs(s float64) string {
	prec := 0
	switch {
	case s < 0.1:
		prec = 3
	case s < 10:
		prec = 1
	}
	v := strconv.FormatFloat(s, 'f', prec, 64)
	if strings.Contains(v, ".") {
		v = strings.TrimRight(strings.TrimRight(v, "0"), ".")
	}
	return v + " s"
}

// rateXY is counter k per second over p: one point per interval that lies at
// least half inside the phase (span.drawn: the count of a sliver of an
// interval at the phase's end would be noise when scaled up to a rate).
func rateXY(p *results.Phase, k string) plotter.XYs {
	var xys plotter.XYs
	for _, b := range spans(p) {
		if b.drawn() {
			xys = append(xys, plotter.XY{X: b.mid(), Y: float64(b.s.Counts[k]) / b.cover})
		}
	}
	return xys
}

// latXY is one latency figure of p's intervals in milliseconds, over the
// intervals that recorded one and lie at least half inside the phase (those
// rateXY draws).
func latXY(p *results.Phase, get func(results.Second) int64) plotter.XYs {
	var xys plotter.XYs
	for _, b := range spans(p) {
		if v := get(b.s); v > 0 && b.drawn() {
			xys = append(xys, plotter.XY{X: b.mid(), Y: float64(v) / 1e6})
		}
	}
	return xys
}

// counterTotal is counter k over the whole phase: the sum of its series, or
// the phase's count when the series does not hold it.
func counterTotal(p *results.Phase, k string) (float64, bool) {
	var n int64
	found := false
	for _, s := range p.Series {
		if v, ok := s.Counts[k]; ok {
			n += v
			found = true
		}
	}
	if found {
		return float64(n), true
	}
	v, ok := p.Counts[k]
	return float64(v), ok
}

// tooShort says why p's series has fewer than two points to draw.
func tooShort(p *results.Phase) string {
	iv := interval(p)
	switch {
	case len(p.Series) == 0:
		return "no time series recorded"
	case secs(p.Duration) < 2*iv:
		return fmt.Sprintf("its %s phase is shorter than two %s intervals", fmtSecs(secs(p.Duration)), fmtSecs(iv))
	}
	return fmt.Sprintf("fewer than two %s intervals with data", fmtSecs(iv))
}

// intervalNote says which intervals the lines of a comparison use when they
// differ (short phases have finer ones), "" when they are all alike.
func intervalNote(rl []runLine) string {
	var order []float64
	by := map[float64][]string{}
	for _, r := range rl {
		if len(r.p.Series) == 0 {
			continue
		}
		iv := interval(r.p)
		if _, ok := by[iv]; !ok {
			order = append(order, iv)
		}
		if r.run == 1 {
			by[iv] = append(by[iv], r.relay)
		} else {
			by[iv] = append(by[iv], r.who())
		}
	}
	if len(order) < 2 {
		return ""
	}
	sort.Float64s(order)
	var parts []string
	for _, iv := range order {
		parts = append(parts, fmt.Sprintf("%s for %s", fmtSecs(iv), strings.Join(by[iv], ", ")))
	}
	return "Intervals: " + strings.Join(parts, "; ") + " (phases under 3 s are recorded in 0.1 s intervals)."
}

// addSeries adds a run's line, with a marker at each point when there are
// few of them (a short phase's handful of points stays visible).
func addSeries(p *fig, i int, label string, xys plotter.XYs, dashed bool) error {
	if len(xys) <= 12 {
		return addLinePoints(p, i, label, xys, dashed)
	}
	return addLine(p, i, label, downsample(xys, false), dashed)
}

// addPoint adds one marked point with a legend entry: a run whose phase
// was too short for a line.
func addPoint(p *fig, i int, label string, xy plotter.XY) error {
	s, err := plotter.NewScatter(plotter.XYs{xy})
	if err != nil {
		return fmt.Errorf("chart point %s: %w", label, err)
	}
	s.Color = plotutil.Color(i)
	s.Shape = shape(i)
	s.Radius = vg.Points(4)
	p.Add(s)
	if label != "" {
		p.addLegend(label, s)
	}
	return nil
}

// hasSeries reports whether any run's series holds a point get accepts.
func hasSeries(rl []runLine, ok func(results.Second) bool) bool {
	for _, r := range rl {
		for _, b := range spans(r.p) {
			if ok(b.s) {
				return true
			}
		}
	}
	return false
}

func throughputChart(ps phaseSet) (*chart, error) {
	p := newPlot(title(ps.name)+": throughput over time", "seconds since phase start", "per second")
	var notes []string
	if !ps.compare {
		r := ps.runs[0]
		names := map[string]bool{}
		for _, s := range r.p.Series {
			for k := range s.Counts {
				names[k] = true
			}
		}
		var drawn []string
		for i, l := range sameLines(r.p, sortedKeys(names)) {
			if err := addSeries(p, i, l.label, l.xys, false); err != nil {
				return nil, err
			}
			drawn = append(drawn, l.keys...)
		}
		if len(drawn) == 0 {
			return nil, nil
		}
		p.Y.Label.Text = rateAxis(drawn...)
	} else {
		k := mainCounter(ps.runs)
		if k == "" || !hasSeries(ps.runs, func(s results.Second) bool { _, ok := s.Counts[k]; return ok }) {
			return nil, nil
		}
		p.Title.Text = title(ps.name) + ": " + humanName(k) + " per second over time"
		p.Y.Label.Text = rateAxis(k)
		if n := intervalNote(ps.runs); n != "" {
			notes = append(notes, n)
		}
		for _, r := range ps.runs {
			if xys := rateXY(r.p, k); len(xys) >= 2 {
				if err := addSeries(p, r.color, r.label, xys, r.repeat); err != nil {
					return nil, err
				}
				continue
			}
			total, ok := counterTotal(r.p, k)
			switch {
			case r.p.Duration <= 0:
				notDrawn(p, &notes, r.label, r.who(), "its phase has no duration")
			case !ok:
				notDrawn(p, &notes, r.label, r.who(), "nothing "+humanName(k)+" in its phase")
			default:
				d := secs(r.p.Duration)
				if err := addPoint(p, r.color, suffix(r.label, " (whole phase)"), plotter.XY{X: d / 2, Y: total / d}); err != nil {
					return nil, err
				}
				notes = append(notes, fmt.Sprintf("%s: %s: one point, %s per second over the whole phase.", r.who(), tooShort(r.p), humanName(k)))
			}
		}
		ps.addMissing(p, &notes)
	}
	return timeChart("throughput-"+slug(ps.name), ps, p, notes), nil
}

// counterLine is the per-second line of one or more counters of a phase
// that are the same second by second.
type counterLine struct {
	label string // "accepted = intended = sent"
	keys  []string
	xys   plotter.XYs
}

// sameLines are the per-second lines of counters keys of p with two points
// or more (under two intervals there is nothing to draw over time), those
// that are the same second by second drawn as one line named after all of
// them: three lines on top of each other showed only the last one drawn.
func sameLines(p *results.Phase, keys []string) []counterLine {
	var out []counterLine
	for _, k := range keys {
		xys := rateXY(p, k)
		if len(xys) < 2 {
			continue
		}
		i := slices.IndexFunc(out, func(l counterLine) bool { return slices.Equal(l.xys, xys) })
		if i < 0 {
			out = append(out, counterLine{label: humanName(k), keys: []string{k}, xys: xys})
			continue
		}
		out[i].label += " = " + humanName(k)
		out[i].keys = append(out[i].keys, k)
	}
	return out
}

// timeChart is a chart over the time of its phase: both axes from zero,
// time ticks, headroom above the highest line.
func timeChart(name string, ps phaseSet, p *fig, notes []string) *chart {
	p.X.Min = 0
	for _, r := range ps.runs {
		p.X.Max = math.Max(p.X.Max, secs(r.p.Duration)) // the whole phase, not up to its last point
	}
	p.X.Tick.Marker = timeTicks{}
	p.Y.Min = 0
	niceY(p)
	return &chart{name: name, title: p.Title.Text, plot: p, notes: notes}
}

func latencyTimeChart(ps phaseSet) (*chart, error) {
	p50 := func(s results.Second) int64 { return s.LatP50Ns }
	p99 := func(s results.Second) int64 { return s.LatP99Ns }
	pmax := func(s results.Second) int64 { return s.LatMaxNs }
	if !hasSeries(ps.runs, func(s results.Second) bool { return s.LatP50Ns > 0 || s.LatP99Ns > 0 }) {
		return nil, nil
	}
	lname := ""
	for _, r := range ps.runs {
		if lname = results.PrimaryLatency(r.p.Latency); r.p.Latency[opLatency] != nil {
			lname = opLatency // a load of publishes and queries: its series times every operation
		}
		if lname != "" {
			break
		}
	}
	p := newPlot(title(ps.name)+": "+chartLatency(ps.runs, lname)+" over time", "seconds since phase start", "milliseconds")
	var notes []string
	if !ps.compare {
		r := ps.runs[0]
		if len(latXY(r.p, p50)) < 2 && len(latXY(r.p, p99)) < 2 {
			return nil, nil
		}
		if err := latencyLines(p, r.p, p50, p99, pmax); err != nil {
			return nil, err
		}
	} else {
		if n := intervalNote(ps.runs); n != "" {
			notes = append(notes, n)
		}
		for _, r := range ps.runs {
			xys := latXY(r.p, p99)
			if len(xys) >= 2 {
				if err := addSeries(p, r.color, suffix(r.label, " p99"), xys, r.repeat); err != nil {
					return nil, err
				}
				continue
			}
			v, ok := latQ(r.p.Latency[lname], 99)
			switch {
			case ok:
				x := secs(r.p.Duration) / 2
				if len(xys) == 1 {
					x = xys[0].X
				}
				if err := addPoint(p, r.color, suffix(r.label, " p99 (whole phase)"), plotter.XY{X: x, Y: float64(v) / 1e6}); err != nil {
					return nil, err
				}
				notes = append(notes, fmt.Sprintf("%s: %s: one point, the p99 of the whole phase.", r.who(), tooShort(r.p)))
			case len(xys) == 1:
				if err := addPoint(p, r.color, suffix(r.label, " p99 (one interval)"), xys[0]); err != nil {
					return nil, err
				}
				notes = append(notes, fmt.Sprintf("%s: %s: one point, the p99 of its one interval.", r.who(), tooShort(r.p)))
			default:
				notDrawn(p, &notes, r.label, r.who(), "no "+latencyLabel(lname)+" latency recorded in its phase")
			}
		}
		ps.addMissing(p, &notes)
	}
	return timeChart("latency-time-"+slug(ps.name), ps, p, notes), nil
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

// timeTicks mark a seconds axis at round steps (1, 2 or 5 × 10ⁿ), labelled
// with no more digits than the step needs: 0, 0.1, 0.2 … or 0, 10, 20 … .
type timeTicks struct{}

func (timeTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	return stepTicks(lo, hi, step, func(v float64, prec int) string {
		return strconv.FormatFloat(v, 'f', prec, 64)
	})
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

// opLatency is the latency of a load's operations of every kind (a mixed
// load's publishes and queries), which its per-second series holds.
const opLatency = "op"

// chartLatency names latency lname of the runs' phases in a chart's
// title: "OK latency", "OK latency (from intended send time)" when the
// phases keep it both ways (load, find-max).
func chartLatency(runs []runLine, lname string) string {
	s := latencyLabel(lname) + " latency"
	for _, r := range runs {
		if t := latencyTiming(r.p.Latency, lname); t != "" {
			return s + " (" + t + ")"
		}
	}
	return s
}

func spectrumChart(ps phaseSet) (*chart, error) {
	lname := ""
	for _, r := range ps.runs {
		if lname = results.PrimaryLatency(r.p.Latency); lname != "" {
			break
		}
	}
	if lname == "" {
		return nil, nil
	}
	p := newPlot(title(ps.name)+": "+chartLatency(ps.runs, lname)+" by percentile", "percentile", "milliseconds")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = percentileTicks{}
	var notes []string
	n := 0
	for _, r := range ps.runs {
		xys := spectrum(r.p.Latency[lname])
		switch {
		case len(xys) == 1:
			// A single value: its point, at the 0th percentile.
			if err := addPoint(p, r.color, r.label, xys[0]); err != nil {
				return nil, err
			}
			n++
		case len(xys) > 1:
			if err := addLine(p, r.color, r.label, xys, r.repeat); err != nil {
				return nil, err
			}
			n++
		case ps.compare:
			notDrawn(p, &notes, r.label, r.who(), "no "+latencyLabel(lname)+" latency recorded in its phase")
		}
	}
	if n == 0 {
		return nil, nil
	}
	if ps.compare {
		ps.addMissing(p, &notes)
	}
	p.X.Min = 1
	p.Y.Min = 0
	niceY(p)
	return &chart{name: "spectrum-" + slug(ps.name), title: p.Title.Text, plot: p, notes: notes}, nil
}

func resLine(r runLine, get func(results.ResourceSample) float64) plotter.XYs {
	var xys plotter.XYs
	for _, s := range r.p.Resources.Series {
		xys = append(xys, plotter.XY{X: s.T, Y: get(s)})
	}
	return downsample(xys, false)
}

// samples is the number of resource samples of a run's phase.
func samples(r runLine) int {
	if r.p.Resources == nil {
		return 0
	}
	return len(r.p.Resources.Series)
}

// resourceChart draws one relay resource figure of every run: the samples
// as a line, one sample as a point, or, with no sample (a phase shorter
// than the sampling interval), the whole phase's figure (whole) as one
// point. With one run alone it draws extra lines (single) instead.
func resourceChart(ps phaseSet, file, titleText, y string, get func(results.ResourceSample) float64,
	whole func(*results.Phase) (float64, string, bool), single func(*fig, runLine) error, lineSuffix string) (*chart, error) {
	sampled := false
	for _, r := range ps.runs {
		if samples(r) > 0 {
			sampled = true
		}
	}
	if !sampled {
		return nil, nil
	}
	p := newPlot(titleText, "seconds since phase start", y)
	var notes []string
	if !ps.compare {
		if samples(ps.runs[0]) < 2 {
			return nil, nil
		}
		if err := single(p, ps.runs[0]); err != nil {
			return nil, err
		}
	} else {
		for _, r := range ps.runs {
			switch n := samples(r); {
			case n >= 2:
				if err := addLine(p, r.color, suffix(r.label, lineSuffix), resLine(r, get), r.repeat); err != nil {
					return nil, err
				}
			case n == 1:
				s := r.p.Resources.Series[0]
				if err := addPoint(p, r.color, suffix(r.label, lineSuffix+" (one sample)"), plotter.XY{X: s.T, Y: get(s)}); err != nil {
					return nil, err
				}
				notes = append(notes, fmt.Sprintf("%s: one resource sample in its %s phase: one point.", r.who(), fmtSecs(secs(r.p.Duration))))
			default:
				v, what, ok := whole(r.p)
				if !ok || r.p.Duration <= 0 {
					notDrawn(p, &notes, r.label, r.who(), "relay resources not measured (a relay relaybench did not start, or a phase without duration)")
					continue
				}
				if err := addPoint(p, r.color, suffix(r.label, lineSuffix+" (whole phase)"), plotter.XY{X: secs(r.p.Duration) / 2, Y: v}); err != nil {
					return nil, err
				}
				notes = append(notes, fmt.Sprintf("%s: no resource sample in its %s phase (shorter than the sampling interval): one point, %s.", r.who(), fmtSecs(secs(r.p.Duration)), what))
			}
		}
		ps.addMissing(p, &notes)
	}
	p.X.Min = 0
	p.X.Tick.Marker = timeTicks{}
	p.Y.Min = 0
	niceY(p)
	return &chart{name: file + "-" + slug(ps.name), title: p.Title.Text, plot: p, notes: notes}, nil
}

func cpuChart(ps phaseSet) (*chart, error) {
	relay := func(s results.ResourceSample) float64 { return s.RelayCPU }
	client := func(s results.ResourceSample) float64 { return s.ClientCPU }
	return resourceChart(ps, "cpu", title(ps.name)+": CPU use over time", "cores busy", relay,
		func(p *results.Phase) (float64, string, bool) {
			if p.Resources == nil || p.Resources.RelayCPUSecs <= 0 {
				return 0, "", false
			}
			return p.Resources.RelayCPUSecs / secs(p.Duration), "the relay's CPU time over the phase's duration", true
		},
		func(p *fig, r runLine) error {
			if err := addLine(p, 0, "relay", resLine(r, relay), false); err != nil {
				return err
			}
			return addLine(p, 1, "client (relaybench)", resLine(r, client), true)
		}, " relay")
}

func rssChart(ps phaseSet) (*chart, error) {
	const mib = 1 << 20 // as the tables give memory (MiB)
	rss := func(s results.ResourceSample) float64 { return float64(s.RelayRSS) / mib }
	return resourceChart(ps, "rss", title(ps.name)+": relay memory (RSS) over time", "MiB", rss,
		func(p *results.Phase) (float64, string, bool) {
			if p.Resources == nil || p.Resources.RelayPeakRSS <= 0 {
				return 0, "", false
			}
			return float64(p.Resources.RelayPeakRSS) / mib, "the relay's peak RSS in the phase", true
		},
		func(p *fig, r runLine) error {
			return addLine(p, 0, r.label, resLine(r, rss), false)
		}, "")
}

// primaryRate is the rate a phase's bar chart shows: results.PrimaryRate
// of the rates the phases have.
func primaryRate(ps []*results.Phase) string {
	names := map[string]float64{}
	for _, p := range ps {
		for k := range p.Rates {
			names[k] = 0
		}
	}
	return results.PrimaryRate(names)
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
			c, err := bars(name+"-"+slug(k), title(name)+": "+rateName(k)+" by relay (median of runs)", rateName(k), rateName(k), groups, name,
				[]string{""}, func(p *results.Phase, _ int) (float64, bool) { return rate(p.Rates, k) })
			if err != nil {
				return nil, err
			}
			if c != nil {
				cs = append(cs, c)
			}
		}
		l := ""
		for _, p := range all {
			if l = results.PrimaryLatency(p.Latency); l != "" {
				break
			}
		}
		if l != "" {
			qs := []float64{50, 99}
			c, err := bars(name+"-"+l+"-latency", title(name)+": "+latencyLabel(l)+" latency by relay (median of runs)", "milliseconds", latencyLabel(l)+" latency", groups, name,
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

// bars draws one group of bars per relay, one bar per series. Every relay
// of the report has its place on the axis; one without the phase, or
// without the figure, has no bar there, and the caption says why.
func bars(file, titleText, y, metric string, groups []*relayRuns, name string, series []string, get func(*results.Phase, int) (float64, bool)) (*chart, error) {
	p := newPlot(titleText, "", y)
	var names []string
	with := 0
	for _, g := range groups {
		names = append(names, g.key)
		if len(g.phases(name)) > 0 {
			with++
		}
	}
	if with < 2 {
		return nil, nil
	}
	var notes []string
	w := vg.Points(float64(48) / float64(len(series)))
	any := false
	top := 0.0
	for s, label := range series {
		vals := make(plotter.Values, len(groups))
		for i, g := range groups {
			ps := g.phases(name)
			vs := present(ps, func(ph *results.Phase) (float64, bool) { return get(ph, s) })
			switch {
			case len(vs) > 0:
				vals[i] = median(vs)
				top = math.Max(top, vals[i])
				any = true
			case len(ps) == 0:
				if s == 0 {
					notes = append(notes, g.key+": no bar: its run has no "+name+" phase.")
				}
			default:
				notes = append(notes, g.key+": no "+strings.TrimSpace(metric+" "+label)+" bar: its "+name+" phase recorded none.")
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
			p.addLegend(label, b)
		}
	}
	if !any {
		return nil, nil
	}
	p.Y.Min, p.Y.Max = 0, top
	niceY(p)
	nominalX(p, names...)
	return &chart{name: "bars-" + slug(file), title: titleText, plot: p, notes: notes}, nil
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

// sweepLine is one run's line on the payload-sweep plots.
type sweepLine struct {
	label  string
	color  int
	repeat bool
	pts    []sweepPoint
}

// sweepLines are the runs' lines of the payload-sweep plots, their payload
// sizes (the x ticks) and the relays of a comparison without a sweep.
func sweepLines(groups []*relayRuns) (lines []sweepLine, ticks payloadTicks, noSweep []string) {
	sizes := map[float64]bool{}
	for gi, g := range groups {
		n := 0
		for _, r := range g.runs {
			if len(sweep(r)) > 0 {
				n++
			}
		}
		if n == 0 && len(groups) > 1 {
			noSweep = append(noSweep, g.key)
		}
		k := 0
		for _, r := range g.runs {
			if pts := sweep(r); len(pts) > 0 {
				l := sweepLine{color: gi, repeat: k > 0, pts: pts}
				if k == 0 {
					l.label = g.key
					if n > 1 {
						l.label = withRuns(g.key, n)
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
	for s := range sizes {
		ticks = append(ticks, s)
	}
	sort.Float64s(ticks)
	return lines, ticks, noSweep
}

// sweepMeanMs and sweepP99Ms are a sweep point's mean and p99 latency in
// milliseconds: the sweep table's latency (sweepLatency).
func sweepMeanMs(pt sweepPoint) (float64, bool) {
	v, ok := sweepLatOf("", 0)(pt)
	return v / 1e6, ok
}

func sweepP99Ms(pt sweepPoint) (float64, bool) {
	v, ok := sweepLatOf("", 99)(pt)
	return v / 1e6, ok
}

// sweepCharts draw narwhal's three payload-sweep plots: msg/s, MiB/s and
// latency (mean solid, p99 dashed) against payload size, one line per run.
// A plot with no point (no latency in the results) is left out.
func sweepCharts(groups []*relayRuns) ([]*chart, error) {
	lines, ticks, noSweep := sweepLines(groups)
	if len(lines) == 0 {
		return nil, nil
	}
	mk := func(titleText, y string) *fig {
		p := newPlot(titleText, "payload size", y)
		if len(ticks) > 1 {
			p.X.Scale = plot.LogScale{}
		}
		p.X.Tick.Marker = ticks
		return p
	}
	msgs := mk("Payload sweep: message throughput", "messages per second")
	mbs := mk("Payload sweep: data throughput", "MiB per second") // sweepMB
	lat := mk("Payload sweep: "+sweepLatencyWords(sweepPointsOf(groups))+" (mean solid, p99 dashed)", "milliseconds")
	drawn := map[*fig]int{} // points drawn: a plot with none is left out (its log axis has no range)
	for _, l := range lines {
		for _, d := range []struct {
			p      *fig
			label  string
			get    func(sweepPoint) (float64, bool)
			dashed bool
		}{{msgs, l.label, sweepRate, l.repeat}, {mbs, l.label, sweepMB, l.repeat},
			{lat, suffix(l.label, " mean"), sweepMeanMs, false}, {lat, suffix(l.label, " p99"), sweepP99Ms, true}} {
			var xys plotter.XYs
			for _, pt := range l.pts {
				if v, ok := d.get(pt); ok {
					xys = append(xys, plotter.XY{X: pt.size, Y: v})
				}
			}
			drawn[d.p] += len(xys)
			if err := addLinePoints(d.p, l.color, d.label, xys, d.dashed); err != nil {
				return nil, err
			}
		}
	}
	lat.repeats = false // dashed is p99 there (the title says so), not a repeat
	var cs []*chart
	for _, c := range []struct {
		name string
		p    *fig
	}{{"sweep-throughput", msgs}, {"sweep-data", mbs}, {"sweep-latency", lat}} {
		if drawn[c.p] == 0 {
			continue
		}
		var notes []string
		for _, k := range noSweep {
			c.p.addLegend(k + ": no sweep")
			notes = append(notes, k+": not drawn: its run has no payload sweep.")
		}
		c.p.Y.Min = 0
		niceY(c.p)
		cs = append(cs, &chart{name: c.name, title: c.p.Title.Text, plot: c.p, notes: notes})
	}
	return cs, nil
}

// withRuns names a relay drawn with n runs: "strfry (3 runs)", and
// "strfry (baseline, 3 runs)" for a relay already named with its side of a
// comparison, not "strfry (baseline) (3 runs)".
func withRuns(key string, n int) string {
	if head, ok := strings.CutSuffix(key, ")"); ok && strings.Contains(head, " (") {
		return fmt.Sprintf("%s, %d runs)", head, n)
	}
	return fmt.Sprintf("%s (%d runs)", key, n)
}
