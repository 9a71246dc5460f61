package report

import "testing"

// TestParamsLineDurations: a duration parameter, stored in the flag's form
// ("1m30s", compared as stored by A/B and merge), is printed as every
// duration is ("90.0s"), never Go's "1m30s"; a zero stays "0s" and other
// values are untouched.
func TestParamsLineDurations(t *testing.T) {
	p := map[string]any{"duration": "1m30s", "max_lateness": "1ms", "grace": "0s", "step_duration": "20m0s", "mix": "4:1", "kind": "mixed"}
	want := "duration 90.0s, grace 0s, kind mixed, max lateness 1.00ms, mix 4:1, step duration 20.0min"
	if got := paramsLine(p); got != want {
		t.Errorf("paramsLine = %q, want %q", got, want)
	}
	if p["duration"] != "1m30s" {
		t.Errorf("the stored form changed: %v", p["duration"])
	}
}
