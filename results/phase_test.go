package results

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestNewPhaseMapsAreReady: every map a workload writes to exists in a new
// phase (a new workload's first rate panicked on a nil Rates), and the
// optional ones stay out of the file when empty.
func TestNewPhaseMapsAreReady(t *testing.T) {
	ph := NewPhase("p", "w")
	b, err := json.Marshal(ph)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"refused"`, `"rates"`} {
		if strings.Contains(string(b), key) {
			t.Errorf("an empty %s is written: %s", key, b)
		}
	}
	ph.Counts["sent"]++
	ph.Refused["blocked"]++
	ph.Rates["events_per_sec"] = 1
	ph.Latency["ok"] = nil
}
