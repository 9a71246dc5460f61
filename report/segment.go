package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/relaybench/relaybench/results"
)

// segmentLine describes an execution segment's run (--segment, --start-at,
// --query-at): which share, when it began against the common start, and its
// clock offset to the relay. A start later than the warning threshold is
// flagged LATE. "" for a run that was none.
func segmentLine(s *results.Segment) string {
	if s == nil {
		return ""
	}
	var parts []string
	if s.Count > 1 {
		parts = append(parts, fmt.Sprintf("%d of %d (0-based)", s.Index, s.Count))
	}
	late := func(flag string, at *time.Time, ns int64) {
		if at == nil {
			return
		}
		p := fmt.Sprintf("%s %s, began %s after it", flag, at.UTC().Format(time.RFC3339Nano), fmtDur(float64(ns)))
		if ns > results.SegmentStartSpreadWarnNs {
			p += " (LATE: not together with the other segments)"
		}
		parts = append(parts, p)
	}
	late("--start-at", s.StartAt, s.StartLateNs)
	late("--query-at", s.QueryAt, s.QueryLateNs)
	if s.ClockOffsetSource != "" {
		parts = append(parts, fmt.Sprintf("clock offset %s ± %s (this machine's clock minus the relay's, %s)", fmtSignedDur(s.ClockOffsetNs), fmtDur(float64(s.ClockOffsetErrNs)), s.ClockOffsetSource))
	} else {
		parts = append(parts, "clock offset to the relay not measured")
	}
	return strings.Join(parts, "; ")
}

func fmtSignedDur(ns int64) string {
	if ns < 0 {
		return "-" + fmtDur(float64(-ns))
	}
	return fmtDur(float64(ns))
}
