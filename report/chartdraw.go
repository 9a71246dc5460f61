package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

	"github.com/relaybench/relaybench/results"
)

// fig is a chart's plot and its legend. The legend is not drawn inside the
// plot area (where it covered lines, and was cut at the frame) but in a
// strip below the axes, its entries flowing in rows across the chart's
// width; the chart grows by the strip's height.
type fig struct {
	*plot.Plot
	legend []legendEntry
	// repeats is set when a relay's later runs are drawn dashed (and left
	// out of the legend): the legend then ends with an entry saying so.
	repeats bool
}

// legendEntry is one legend item: a thumbnail of each plotter drawn for
// it (none for a text-only entry) and its text.
type legendEntry struct {
	text   string
	thumbs []plot.Thumbnailer
	own    bool // a line of a text broken to fit: a row of its own
}

// addLegend adds an entry to the legend.
func (f *fig) addLegend(text string, thumbs ...plot.Thumbnailer) {
	f.legend = append(f.legend, legendEntry{text: text, thumbs: thumbs})
}

// Legend layout, in points.
var (
	rightPad   = vg.Points(22) // room for the last x tick label ("99.99%") at the right edge
	legendPadX = vg.Points(8)  // left and right margin of the legend strip
	legendGap  = vg.Points(16) // between two entries of a row
	legendRow  = vg.Points(15) // height of one row
	legendTop  = vg.Points(6)  // between the x axis label and the first row
	thumbW     = vg.Points(22)
	thumbGap   = vg.Points(4)
)

// repeatsEntry explains the dashed lines of a chart with repeated runs.
func repeatsEntry() legendEntry {
	l := &plotter.Line{XYs: plotter.XYs{}, LineStyle: plotter.DefaultLineStyle}
	l.Color, l.Width = color.Gray{Y: 110}, vg.Points(1.5)
	l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	return legendEntry{text: "dashed: a relay's 2nd and later runs, in its colour", thumbs: []plot.Thumbnailer{l}}
}

// entries are the legend's entries as drawn in a strip of the given
// width: each text too wide for a row is broken at spaces into lines of
// their own (the thumbnail on the first), and the dashed-lines entry ends
// the list when the chart draws repeats.
func (f *fig) entries(width vg.Length) []legendEntry {
	all := f.legend
	if f.repeats {
		all = append(slices.Clip(all), repeatsEntry())
	}
	sty := f.Legend.TextStyle
	avail := width - 2*legendPadX - thumbW - thumbGap
	var out []legendEntry
	for _, e := range all {
		if sty.Rectangle(e.text).Size().X <= avail {
			out = append(out, e)
			continue
		}
		for i, line := range breakText(sty, e.text, avail) {
			l := legendEntry{text: line, own: true}
			if i == 0 {
				l.thumbs = e.thumbs
			}
			out = append(out, l)
		}
	}
	return out
}

// breakText breaks s at spaces into lines no wider than width in sty; a
// word wider than width (a relay named by its URL) is cut into pieces that
// fit, so that it runs neither into its neighbours nor out of the frame.
func breakText(sty text.Style, s string, width vg.Length) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		for _, piece := range cutWord(sty, w, width) {
			if line != "" && sty.Rectangle(line+" "+piece).Size().X > width {
				lines = append(lines, line)
				line = ""
			}
			line = strings.TrimPrefix(line+" "+piece, " ")
		}
	}
	return append(lines, line)
}

// cutWord cuts w into the fewest pieces, each no wider than width in sty
// (at least one character each), in order.
func cutWord(sty text.Style, w string, width vg.Length) []string {
	if sty.Rectangle(w).Size().X <= width {
		return []string{w}
	}
	var out []string
	cur := ""
	for _, r := range w {
		if cur != "" && sty.Rectangle(cur+string(r)).Size().X > width {
			out = append(out, cur)
			cur = ""
		}
		cur += string(r)
	}
	return append(out, cur)
}

// nominalX names the categories of p's x axis (from -0.6 to n-0.4, a bar
// group at each whole number), each name broken into lines that fit its
// share of the axis: long relay names ("khatru-memory (candidate)", a relay
// named by its URL) ran into their neighbours. The share is measured on the
// plot as drawn, its value axis final (call after niceY): long names widen
// the margins and narrow the shares, so they are broken again until they fit.
func nominalX(p *fig, names ...string) {
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	area := draw.Canvas{Canvas: &recorder.Canvas{}, Rectangle: vg.Rectangle{Max: vg.Point{X: chartW - rightPad, Y: chartH}}}
	share := func() vg.Length { // 10 pt between names
		return p.DataCanvas(area).Size().X/vg.Length(p.X.Max-p.X.Min) - vg.Points(10)
	}
	broken := make([]string, len(names))
	p.NominalX(broken...)
	slot := share() // the widest it can be: no name widening the margins
	for range 4 {
		for i, n := range names {
			broken[i] = strings.Join(breakText(p.X.Tick.Label, n, slot), "\n")
		}
		p.NominalX(broken...)
		s := share()
		if s >= slot {
			return
		}
		slot = s
	}
}

// legendRows lays the entries out in rows that fit width: each row is its
// entries and its width. An entry of a broken text has a row of its own.
func (f *fig) legendRows(width vg.Length) (rows [][]legendEntry, widths []vg.Length) {
	sty := f.Legend.TextStyle
	avail := width - 2*legendPadX
	var cur []legendEntry
	var w vg.Length
	for _, e := range f.entries(width) {
		ew := thumbW + thumbGap + sty.Rectangle(e.text).Size().X
		if len(cur) > 0 && (e.own || cur[len(cur)-1].own || w+legendGap+ew > avail) {
			rows, widths = append(rows, cur), append(widths, w)
			cur, w = nil, 0
		}
		if len(cur) > 0 {
			w += legendGap
		}
		cur = append(cur, e)
		w += ew
	}
	if len(cur) > 0 {
		rows, widths = append(rows, cur), append(widths, w)
	}
	return rows, widths
}

// legendHeight is the height of the legend strip (0 without entries).
func (f *fig) legendHeight() vg.Length {
	rows, _ := f.legendRows(chartW)
	if len(rows) == 0 {
		return 0
	}
	return legendTop + legendRow*vg.Length(len(rows)) + vg.Points(4)
}

// height is the chart's height: the plot's and the legend strip's.
func (f *fig) height() vg.Length { return chartH + f.legendHeight() }

// draw draws the plot (with room on the right for the last tick label)
// and, below it, the legend, each row centred.
func (f *fig) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	lh := f.legendHeight()
	f.Plot.Draw(draw.Crop(c, 0, -rightPad, lh, 0))
	if lh == 0 {
		return
	}
	sty := f.Legend.TextStyle
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	rows, widths := f.legendRows(c.Size().X)
	top := c.Min.Y + lh - legendTop
	for r, row := range rows {
		x := c.Min.X + (c.Size().X-widths[r])/2
		mid := top - legendRow*vg.Length(r) - legendRow/2
		for _, e := range row {
			icon := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: mid - legendRow/2 + vg.Points(2)},
				Max: vg.Point{X: x + thumbW, Y: mid + legendRow/2 - vg.Points(2)},
			}}
			for _, t := range e.thumbs {
				t.Thumbnail(&icon)
			}
			c.FillText(sty, vg.Point{X: x + thumbW + thumbGap, Y: mid}, e.text)
			x += thumbW + thumbGap + sty.Rectangle(e.text).Size().X + legendGap
		}
	}
}

// niceStep is the tick step of a linear axis from lo to hi: the largest
// 1, 2 or 5 × 10ⁿ that gives at least four ticks (three steps).
func niceStep(lo, hi float64) float64 {
	raw := (hi - lo) / 3
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{2, 5, 10} {
		if m*mag <= raw*(1+1e-9) {
			step = m * mag
		}
	}
	return step
}

// valueTicks label a linear value axis at niceStep, with thousands
// separators and no more decimals than the step needs, and an unlabelled
// tick halfway between two labelled ones.
type valueTicks struct{}

func (valueTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	return stepTicks(lo, hi, niceStep(lo, hi), fmtTick)
}

// stepTicks marks lo..hi at every multiple of step, labelled by label
// with no more decimals than the step needs (prec), and an unlabelled tick
// halfway between two labelled ones.
func stepTicks(lo, hi, step float64, label func(v float64, prec int) string) []plot.Tick {
	prec := max(-int(math.Floor(math.Log10(step)+1e-9)), 0)
	var ts []plot.Tick
	for i := math.Ceil(lo/step - 1e-9); i*step <= hi+step*1e-9; i++ {
		v := i * step
		if v == 0 {
			v = 0 // not -0
		}
		ts = append(ts, plot.Tick{Value: v, Label: label(v, prec)})
		if h := v + step/2; h < hi {
			ts = append(ts, plot.Tick{Value: h})
		}
	}
	return ts
}

// fmtTick formats a tick value: 12,000 or 0.25.
func fmtTick(v float64, prec int) string {
	if prec == 0 {
		return fmtFloat(v, 0)
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// niceY gives p's value axis at least four labelled ticks, its top raised
// a little above the data to the next labelled tick (so the highest line
// and its markers stay inside the frame, under a labelled value).
func niceY(p *fig) {
	if !(p.Y.Max > p.Y.Min) {
		return
	}
	top := p.Y.Max + (p.Y.Max-p.Y.Min)*0.04
	step := niceStep(p.Y.Min, top)
	p.Y.Max = math.Ceil(top/step-1e-9) * step
	p.Y.Tick.Marker = valueTicks{}
}

// counterUnits are the things a counter counts, for a rate axis's label.
var counterUnits = map[string]string{
	results.CountSent: "events", results.CountAccepted: "events", results.CountRefused: "events",
	results.CountTimedOut: "events", results.CountEventsReturned: "events", results.CountDeliveries: "events",
	results.CountExpected: "events", results.CountMissing: "events", results.CountUnsolicitedEvents: "events",
	results.CountQueries: "queries", results.CountFailed: "requests", results.CountCounts: "COUNTs",
	results.CountSearches: "searches", results.CountBytesSent: "bytes",
}

// rateAxis labels the value axis of a chart of counters per second: their
// unit, "events/s", or the units joined when they differ ("events or
// queries per second"); a counter of no known unit is named.
func rateAxis(counters ...string) string {
	var units []string
	seen := map[string]bool{}
	for _, k := range counters {
		u, ok := counterUnits[k]
		if !ok {
			u = humanName(k)
		}
		if !seen[u] {
			seen[u] = true
			units = append(units, u)
		}
	}
	if len(units) == 1 {
		return units[0] + " per second"
	}
	return strings.Join(units, " or ") + " per second"
}

// latencyLines draws one run's p50, p99 and max over time. Max is drawn
// first, as a wide pale band, and p99 over it as a solid line (with a
// marker at each of few points): where they coincide (an interval of few
// operations) both stay visible. The legend keeps the order p50, p99, max.
func latencyLines(p *fig, ph *results.Phase, p50, p99, pmax func(results.Second) int64) error {
	first := len(p.legend)
	for _, l := range []struct {
		i     int
		label string
		get   func(results.Second) int64
	}{{2, "max", pmax}, {1, "p99", p99}, {0, "p50", p50}} {
		xys := latXY(ph, l.get)
		if len(xys) == 0 {
			continue
		}
		if l.label != "max" {
			if err := addSeries(p, l.i, l.label, xys, false); err != nil {
				return err
			}
			continue
		}
		line, err := plotter.NewLine(downsample(xys, true))
		if err != nil {
			return fmt.Errorf("chart line max: %w", err)
		}
		c := color.NRGBAModel.Convert(plotutil.Color(l.i)).(color.NRGBA)
		c.A = 90
		line.Color, line.Width = c, vg.Points(5)
		p.Add(line)
		p.addLegend(l.label, line)
	}
	slices.Reverse(p.legend[first:])
	return nil
}

// textWidths records the width of every text drawn, as the layout measured
// it with the embedded Liberation Sans. A browser without that font draws
// the SVG's text in another (DejaVu Sans is about a tenth wider), and
// legend entries laid out side by side ran into each other and past the
// frame; fix gives each <text> its measured width.
type textWidths struct {
	vg.CanvasSizer
	widths []vg.Length
}

func (t *textWidths) FillString(f font.Face, pt vg.Point, s string) {
	t.widths = append(t.widths, f.Width(s))
	t.CanvasSizer.FillString(f, pt, s)
}

// svgFamily is the family vgsvg names; fix lists metric-compatible fonts
// after it.
const svgFamily = "font-family:Liberation Sans;"

// fix sets textLength (with glyphs scaled to it) on the i-th <text> of the
// SVG to the i-th width drawn, so that text takes the room the layout gave
// it in any font, and names Liberation Sans's metric twins (Arimo, Arial)
// before the generic sans-serif. With a count that does not match, the
// SVG is returned as it was drawn.
func (t *textWidths) fix(svg []byte) []byte {
	parts := bytes.Split(svg, []byte("<text "))
	if len(parts)-1 != len(t.widths) {
		return svg
	}
	var b bytes.Buffer
	b.Grow(len(svg) + 48*len(t.widths))
	b.Write(parts[0])
	for i, p := range parts[1:] {
		fmt.Fprintf(&b, `<text textLength="%.2f" lengthAdjust="spacingAndGlyphs" `, t.widths[i].Points())
		b.Write(bytes.Replace(p, []byte(svgFamily), []byte("font-family:'Liberation Sans',Arimo,Arial,sans-serif;"), 1))
	}
	return b.Bytes()
}
