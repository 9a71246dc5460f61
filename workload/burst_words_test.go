package workload

import (
	"regexp"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/internal/testrelay"
)

// burst says its plan once, in its progress label ("Sending 2 bursts of
// 40 events and 12 between"), and its count lines only the count ("Sent
// %d of 92 events..."), where every line repeated the plan; its notes name
// latencies in words ("OK latency (from intended send time)"), never a
// results key ("ok_from_intended").
func TestBurstSaysItsPlanOnceAndNoKeys(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{})
	var labels []string
	env := Env{URL: r.URL(), Corpus: smallCorpus(t), Progress: func(label string, total int64) func(int64) {
		labels = append(labels, label)
		return func(int64) {}
	}}
	phs, err := smallBurst.Run(testCtx(t), env)
	if err != nil || len(phs) != 1 {
		t.Fatalf("%d phases, %v", len(phs), err)
	}
	if len(labels) != 1 {
		t.Fatalf("progress labels %q", labels)
	}
	shown, counts := progress.Split(labels[0])
	if shown != "Sending 2 bursts of 40 events and 12 between" || counts != "Sent %d of 92 events..." {
		t.Errorf("progress: first line %q, count lines %q", shown, counts)
	}
	notes := strings.Join(phs[0].Notes, "\n")
	if key := regexp.MustCompile(`\b[a-z]+_[a-z_]+\b`).FindString(notes); key != "" || !strings.Contains(notes, "OK latency (from intended send time) also counts") {
		t.Errorf("notes name a results key %q, or not the latency in words:\n%s", key, notes)
	}
}
