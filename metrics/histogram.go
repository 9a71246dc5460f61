// Package metrics records what workloads measure: latency distributions in
// HDR histograms (one per worker, merged at the end, no allocation per
// record) and per-second time series. It turns them into the results-file
// form (package results).
package metrics

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/relaybench/relaybench/results"
)

const (
	minValue = 1             // 1 ns
	maxValue = 10 * 60 * 1e9 // 10 minutes in ns; larger values are clamped and counted
	sigFigs  = 3             // 0.1% value precision
)

// Percentiles are the quantiles every histogram summary reports.
var Percentiles = []float64{50, 90, 95, 99, 99.9, 99.99}

// Histogram is a latency histogram in nanoseconds. It is not safe for
// concurrent use: keep one per goroutine and Merge them.
type Histogram struct {
	h       *hdr.Histogram
	clamped int64
}

// NewHistogram returns an empty histogram covering 1 ns to 10 minutes with 3
// significant digits.
func NewHistogram() *Histogram {
	return &Histogram{h: hdr.New(minValue, maxValue, sigFigs)}
}

// newCoarse returns a small histogram for per-second series points: 1 µs to
// 60 s at 2 significant digits (1% precision), about 20 KB instead of the
// full histogram's ~250 KB, so long runs keep bounded memory.
func newCoarse() *Histogram {
	return &Histogram{h: hdr.New(1000, 60e9, 2)}
}

// Record adds one value in nanoseconds. Values outside the range are clamped
// (and counted in Clamped) rather than lost.
func (h *Histogram) Record(ns int64) {
	lo, hi := h.h.LowestTrackableValue(), h.h.HighestTrackableValue()
	if ns < lo {
		ns = lo
	} else if ns > hi {
		ns = hi
		h.clamped++
	}
	_ = h.h.RecordValue(ns)
}

// RecordCorrected records ns and, as wrk2/HdrHistogram do for closed-loop
// measurements, back-fills the samples a stalled closed loop did not issue
// every intervalNs. Open-loop workloads measure from the intended send time
// instead and use Record.
func (h *Histogram) RecordCorrected(ns, intervalNs int64) {
	if ns > maxValue {
		ns = maxValue
		h.clamped++
	}
	if ns < minValue {
		ns = minValue
	}
	_ = h.h.RecordCorrectedValue(ns, intervalNs)
}

// Merge adds every value of o into h.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil {
		return
	}
	h.h.Merge(o.h)
	h.clamped += o.clamped
}

// Reset empties the histogram.
func (h *Histogram) Reset() { h.h.Reset(); h.clamped = 0 }

// Count is the number of recorded values.
func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// Clamped is the number of values above the 10-minute ceiling.
func (h *Histogram) Clamped() int64 { return h.clamped }

// Quantile returns the value at percentile q (0–100), in nanoseconds.
func (h *Histogram) Quantile(q float64) int64 { return h.h.ValueAtQuantile(q) }

// Max returns the largest recorded value (at histogram precision).
func (h *Histogram) Max() int64 { return h.h.Max() }

// Min returns the smallest recorded value.
func (h *Histogram) Min() int64 { return h.h.Min() }

// Mean returns the mean in nanoseconds.
func (h *Histogram) Mean() float64 { return h.h.Mean() }

// Result summarises the histogram and embeds its full V2 encoding.
func (h *Histogram) Result() *results.Histogram {
	r := &results.Histogram{
		Count:       h.Count(),
		Percentiles: map[string]int64{},
	}
	if r.Count == 0 {
		return r
	}
	r.Min = h.h.Min()
	r.Max = h.h.Max()
	r.Mean = h.h.Mean()
	r.StdDev = h.h.StdDev()
	if math.IsNaN(r.StdDev) {
		r.StdDev = 0
	}
	for _, q := range Percentiles {
		r.Percentiles[PercentileKey(q)] = h.h.ValueAtQuantile(q)
	}
	if enc, err := h.h.Encode(hdr.V2CompressedEncodingCookieBase); err == nil {
		r.HDR = string(enc)
	}
	return r
}

// PercentileKey formats a percentile as the results file keys it: 50 → "50",
// 99.9 → "99.9".
func PercentileKey(q float64) string { return strconv.FormatFloat(q, 'f', -1, 64) }

// FromResult decodes the HDR histogram embedded in a results histogram.
func FromResult(r *results.Histogram) (*Histogram, error) {
	if r == nil {
		return NewHistogram(), nil
	}
	if r.HDR == "" {
		if r.Count == 0 {
			return NewHistogram(), nil
		}
		return nil, fmt.Errorf("histogram has %d values but no HDR encoding", r.Count)
	}
	raw := []byte(r.HDR)
	// hdrhistogram-go's Decode expects the base64 text it produced.
	if _, err := base64.StdEncoding.DecodeString(r.HDR); err != nil {
		return nil, fmt.Errorf("histogram encoding is not base64: %w", err)
	}
	dec, err := hdr.Decode(bytes.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return &Histogram{h: dec}, nil
}
