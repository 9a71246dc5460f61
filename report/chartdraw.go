package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/relaybench/relaybench/results"
)

// fig is a chart's plot and its legend. The legend is not drawn inside the
// plot area (where it covered lines, and was cut at the frame) but in a
// strip below the axes, its entries flowing in rows across the chart's
// width; the chart grows by the strip's height.
type fig struct {
	*plot.Plot
	legend []legendEntry
}

// legendEntry is one legend item: a thumbnail of each plotter drawn for
// it (none for a text-only entry) and its text.
type legendEntry struct {
	text   string
	thumbs []plot.Thumbnailer
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

// legendRows lays the entries out in rows that fit width: each row is the
// indexes of its entries and its width.
func (f *fig) legendRows(width vg.Length) (rows [][]int, widths []vg.Length) {
	sty := f.Legend.TextStyle
	avail := width - 2*legendPadX
	var cur []int
	var w vg.Length
	for i, e := range f.legend {
		ew := thumbW + thumbGap + sty.Rectangle(e.text).Max.X
		if len(cur) > 0 && w+legendGap+ew > avail {
			rows, widths = append(rows, cur), append(widths, w)
			cur, w = nil, 0
		}
		if len(cur) > 0 {
			w += legendGap
		}
		cur = append(cur, i)
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
		for _, i := range row {
			e := f.legend[i]
			icon := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: mid - legendRow/2 + vg.Points(2)},
				Max: vg.Point{X: x + thumbW, Y: mid + legendRow/2 - vg.Points(2)},
			}}
			for _, t := range e.thumbs {
				t.Thumbnail(&icon)
			}
			c.FillText(sty, vg.Point{X: x + thumbW + thumbGap, Y: mid}, e.text)
			x += thumbW + thumbGap + sty.Rectangle(e.text).Max.X + legendGap
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
	step := niceStep(lo, hi)
	prec := max(-int(math.Floor(math.Log10(step)+1e-9)), 0)
	var ts []plot.Tick
	for i := math.Ceil(lo/step - 1e-9); i*step <= hi+step*1e-9; i++ {
		v := i * step
		if v == 0 {
			v = 0 // not -0
		}
		ts = append(ts, plot.Tick{Value: v, Label: fmtTick(v, prec)})
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
