package report

import (
	"strings"
	"testing"
)

// TestSubscribeBandwidthHeads: a subscribe phase's bandwidth is the
// publishers' (the subscribers' bytes are not in it): the comparison's
// Subscribe table heads its column "Publish MiB/s", not a bare "MiB/s",
// and the summary's line says "MiB/s" as every other MiB rate does, not
// "MiB/second".
func TestSubscribeBandwidthHeads(t *testing.T) {
	f := labelledFile()
	s := summaryText(t, f, SummaryOptions{})
	if strings.Contains(s, "MiB/second") {
		t.Errorf("summary says MiB/second:\n%s", s)
	}
	var head string
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, "MiB/s") && strings.Contains(line, "Relay") {
			head = line
		}
	}
	if !strings.Contains(head, "Publish MiB/s") {
		t.Errorf("Subscribe table head %q, want a Publish MiB/s column:\n%s", head, s)
	}
}
