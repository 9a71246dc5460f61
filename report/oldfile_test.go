package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/threshold"
)

// A results file written before Phase.Skipped, Phase.Size and the count
// phase's first_event loads into today's shape and reports: the skipped
// search says so, the sweep points are found by size, the count phase's
// first event is first_event.
func TestOldShapedFileReports(t *testing.T) {
	f, err := results.Read("testdata/old-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	r := &f.Runs[0]
	if s := r.Phase("search").Skipped; !strings.Contains(s, "NIP-50") {
		t.Errorf("search phase Skipped = %q, want the params.skipped reason", s)
	}
	if a, b := r.Phase("sweep/1024").Size, r.Phase("sweep/4096").Size; a != 1024 || b != 4096 {
		t.Errorf("sweep sizes %d, %d, want 1024, 4096", a, b)
	}
	c := r.Phase("count")
	if c.Latency[results.LatencyFirstEvent] == nil || c.Latency[results.LatencyReqFirstEvent] != nil {
		t.Errorf("count latencies %v: want first_event, not req_first_event", sortedKeys(c.Latency))
	}
	if pts := sweep(r); len(pts) != 2 || pts[0].size != 1024 || pts[1].size != 4096 {
		t.Errorf("sweep points %+v, want 1024 and 4096", pts)
	}
	if st := phaseStatus(r.Phase("search")); len(st) == 0 || st[0] != "skipped" {
		t.Errorf("search status %v, want skipped first", st)
	}
	var b bytes.Buffer
	if err := Markdown(&b, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Payload sweep", "| 1 KiB |", "| 4 KiB |", "| skipped |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, b.String())
		}
	}
	figs := threshold.Figures(r)
	for name, want := range map[string]float64{"count.first_event.p99": 2e6, "count.rate": 40, "count.p99": 3e6, "sweep/1024.rate": 100} {
		if got, ok := figs[name]; !ok || got.Value != want {
			t.Errorf("figure %s = %+v (present %v), want %v", name, got, ok, want)
		}
	}
}
