package metrics

import (
	"runtime"
	"testing"
)

// A minute-long series must stay small: one coarse histogram per second.
func TestSeriesMemoryBounded(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := NewSeries(0)
	for sec := int64(0); sec < 60; sec++ {
		s.Latency(sec*1e9, 5000)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 4<<20 {
		t.Fatalf("60 s of series took %d bytes; want < 4 MiB", grew)
	}
	runtime.KeepAlive(s)
}
