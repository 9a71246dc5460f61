package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
)

// fanoutSweepPhases are a fan-out sweep's points as workload.Sweep records
// them: an OK latency (~1 ms) and a delivery latency (~40 ms) far apart,
// deliveries to 4 subscribers and a passed verification.
func fanoutSweepPhases() []results.Phase {
	var ps []results.Phase
	for i, sz := range []int{256, 4096} {
		ps = append(ps, results.Phase{Name: fmt.Sprintf("sweep/%d", sz), Workload: "sweep", Size: sz, Start: t0.Add(time.Duration(i) * time.Second), Duration: 1e9,
			Counts: map[string]int64{"sent": 200, "accepted": 200, "subscriptions": 4, "deliveries": 800},
			Rates:  map[string]float64{"events_per_sec": 200, "msgs_per_sec": 200, "deliveries_per_sec": 800},
			Latency: map[string]*results.Histogram{"ok": hist(uint64(500+i), 200, 1e6, 0),
				"deliver": hist(uint64(600+i), 800, 40e6, 0)},
			Verification: &results.Verification{Verified: true, Checked: 4, Expected: 800, Returned: 800, Passed: true},
		})
	}
	return ps
}

// TestSweepTableDeliveryLatency: a fan-out sweep's table gives the
// delivery latency (publisher's write → subscriber's read) under heads
// that say so, its OK latency in columns of its own (-v, Markdown, HTML;
// the brief summary leaves them out to fit a terminal), the deliveries
// and the verification (walk 11: the table gave the OK latency under
// "Mean latency / p50", no deliveries and no verification).
func TestSweepTableDeliveryLatency(t *testing.T) {
	f := oneRun("sweep", nil, fanoutSweepPhases()...)
	brief := summaryText(t, f, SummaryOptions{Brief: true})
	full := summaryText(t, f, SummaryOptions{})
	var md, page bytes.Buffer
	if err := Markdown(&md, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"brief": brief, "full": full, "markdown": md.String(), "html": page.String()} {
		for _, want := range []string{"Delivery mean", "Delivery p50", "Delivery p99", "40.0ms", "Deliveries", "800", "Verification", "PASSED"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, s)
			}
		}
		if strings.Contains(s, "Mean latency") {
			t.Errorf("%s has an unnamed 'Mean latency' column:\n%s", name, s)
		}
		if hasOK := strings.Contains(s, "OK p50") && strings.Contains(s, "1.00ms"); hasOK == (name == "brief") {
			t.Errorf("%s: OK p50 1.00ms shown: %v, want %v:\n%s", name, hasOK, name != "brief", s)
		}
	}
	if strings.Contains(page.String(), ">Payload</td>") {
		t.Errorf("the HTML's sweep table, turned to fit the page, lists the payload as a figure, not in its columns' names")
	}
	if !strings.Contains(page.String(), "Payload sweep: delivery latency (mean solid, p99 dashed)") {
		t.Errorf("the HTML's latency chart does not name the delivery latency")
	}
}
