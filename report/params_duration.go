package report

import (
	"fmt"
	"time"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/results"
)

// paramDuration is a duration parameter as every duration is printed for a
// reader (numfmt.Dur: "90.0s", "60.0s"); any other value as it is. The
// results file keeps the flag's form ("1m30s", "1m0s"): A/B (Comparable)
// and merge compare the run's parameters as stored, so files made before
// and after this still compare. Zero stays as stored ("0s").
func paramDuration(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	d, err := time.ParseDuration(s)
	if err != nil || d == 0 {
		return v
	}
	return numfmt.Dur(d)
}

// droppedLabel is a load's (or find-max's) headline label of its ops not
// started within the max lateness: their outcome is "not run", as the
// Outcomes line says; the lateness is given as a figure (the phase's
// max_lateness_ns), not as a flag, which conformance --under-load and run
// --workloads do not have under that name.
func droppedLabel(p *results.Phase) string {
	var ns float64
	switch v := p.Params["max_lateness_ns"].(type) {
	case int64:
		ns = float64(v)
	case float64:
		ns = v
	}
	if ns <= 0 {
		return "Not run (dropped: not started within their max lateness)"
	}
	return fmt.Sprintf("Not run (dropped: not started within %s of their intended time)", numfmt.DurNs(ns))
}
