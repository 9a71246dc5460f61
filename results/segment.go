package results

import "time"

// SegmentStartSpread is the spread (latest − earliest) of the segments'
// actual starts, StartAt + StartLateNs, each corrected by its instance's
// clock offset to the relay's clock when every segment measured one
// (corrected). ok is false when fewer than two segments have a StartAt.
// A spread above SegmentStartSpreadWarnNs means the segments' timed windows
// did not begin together.
func SegmentStartSpread(segs []*Segment) (spread time.Duration, corrected, ok bool) {
	var with []*Segment
	corrected = true
	for _, s := range segs {
		if s != nil && s.StartAt != nil {
			with = append(with, s)
			corrected = corrected && s.ClockOffsetSource != ""
		}
	}
	if len(with) < 2 {
		return 0, false, false
	}
	var lo, hi int64
	for i, s := range with {
		t := s.StartAt.UnixNano() + s.StartLateNs
		if corrected {
			t -= s.ClockOffsetNs
		}
		if i == 0 || t < lo {
			lo = t
		}
		if i == 0 || t > hi {
			hi = t
		}
	}
	return time.Duration(hi - lo), corrected, true
}
