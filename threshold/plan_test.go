package threshold

import (
	"strings"
	"testing"
)

// runPlan is a run of publish, query and sweep.
var runPlan = Plan{Command: "run", Phases: map[string][]string{
	"publish": {"ok", "ok_refused", "auth"},
	"query":   {"eose", "first_event", "auth"},
	"sweep":   nil, "lifecycle": nil, "negentropy": nil,
}}

func TestThresholdPlanRefusesWhatTheCommandCannotWrite(t *testing.T) {
	for expr, want := range map[string]string{
		"publish.okk.p99<20ms":         "run's phase publish writes no latency okk; its latencies are ok, ok_refused, auth",
		"publish.latency.okk.p99<20ms": "writes no latency okk",
		"query/author.eos.p50<1ms":     "run's phase query writes no latency eos; its latencies are eose, first_event, auth",
		"qurey.eose.p99<5ms":           "run writes no phase qurey; its phases are lifecycle, negentropy, publish, query, sweep",
		"swep/1024.rate>1":             "run writes no phase swep",
		"load.ok.p99<1s":               "run writes no phase load",
		"query/author.latency.p99<5ms": "run's phase query writes no latency latency",
	} {
		th, err := Parse(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		err = runPlan.Check([]Threshold{th})
		if err == nil {
			t.Errorf("%s: accepted", expr)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, want) || !strings.HasPrefix(msg, `threshold "`+expr+`": `) || strings.Contains(msg, "\n") {
			t.Errorf("%s: %q, want one line naming it with %q", expr, msg, want)
		}
		// The valid figures are listed once, compactly.
		if strings.Count(msg, "publish") > 2 || len(msg) > 300 {
			t.Errorf("%s: the list is not once and compact: %q", expr, msg)
		}
	}
}

func TestThresholdPlanAcceptsWhatTheCommandMayWrite(t *testing.T) {
	for _, expr := range []string{
		"publish.ok.p99<20ms", "publish.latency.ok.p99.9<20ms", "publish.ok_refused.max<1s", "publish.auth.count>0",
		"publish.p99<20ms", "publish.rate>5000", "publish.refused<1", "publish.counts.count<1", "publish.rates.mb_per_sec>1",
		"publish.verification==passed", "query/author.eose.p99<10ms", "query/kind.first_event.count>1",
		"query.eose.p99{relay=strfry}<10ms", "sweep/1024.anything.p99<1s", "sweep/1024.rate>1", "sweep.msgs_per_sec>1",
		"verification==passed", "conformance.failed==0", "conformance.req.limit-zero==pass",
		// lifecycle's groups have a latency named "latency"; negentropy a
		// group whose name has spaces.
		"lifecycle/ok.latency.p99<1s", "lifecycle/ok.latency.latency.p99<1s", "lifecycle/ok.p99<1s",
		"negentropy/delta/read-back of needed events.returned>=1", "negentropy/delta/read-back of needed events.verification==passed",
	} {
		th, err := Parse(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if err := runPlan.Check([]Threshold{th}); err != nil {
			t.Errorf("%s refused: %v", expr, err)
		}
		if err := (Plan{Command: "load"}).Check([]Threshold{th}); err != nil {
			t.Errorf("%s refused by a plan that knows nothing: %v", expr, err)
		}
	}
}
