package workload

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/testrelay"
)

// A corpus streamed from its file publishes exactly as the same corpus held
// in memory: the same events sent, the same bytes, the same account, and
// the relay stores the same ids.
func TestPublishStreamedCorpus(t *testing.T) {
	mem := smallCorpus(t)
	streamed, err := corpus.Generate(context.Background(), mem.Params, corpus.Options{StreamAbove: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !streamed.Streamed() || streamed.Events != nil {
		t.Fatal("not streamed")
	}
	for _, mode := range []string{ModeWait, ModePipeline} {
		t.Run(mode, func(t *testing.T) {
			counts := map[string]map[string]int64{}
			for name, c := range map[string]*corpus.Corpus{"memory": mem, "streamed": streamed} {
				r := testrelay.New(testrelay.Config{Verify: true, RefuseEvery: 9})
				// nil indexes: every event in order, as the runner sends a streamed corpus
				pr, err := Publish(testCtx(t), r.URL(), c, nil, PublishOptions{Base: Base{Timeout: 5 * time.Second}, Connections: 3, Mode: mode, Window: 8})
				r.Close()
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				ph := pr.Phase
				a := ph.Accounts[0]
				if a.Requested != int64(mem.Len()) || a.Accepted+a.Refused != a.Requested || a.Refused != int64(mem.Len()/9) {
					t.Fatalf("%s: account %+v", name, a)
				}
				if n := len(pr.StoredIndexes()); int64(n) != a.Accepted {
					t.Fatalf("%s: %d stored indexes, %d accepted", name, n, a.Accepted)
				}
				var want int64
				for i := range mem.Len() {
					want += int64(len(mem.Raw[i]))
				}
				if ph.Counts["bytes_sent"] != want || ph.Counts["sent"] != int64(mem.Len()) {
					t.Fatalf("%s: sent %d events, %d bytes; want %d bytes", name, ph.Counts["sent"], ph.Counts["bytes_sent"], want)
				}
				if !strings.Contains(strings.Join(ph.Notes, "\n"), fmt.Sprintf("(%d×)", a.Refused)) {
					t.Fatalf("%s: refusal reasons not counted: %v", name, ph.Notes)
				}
				counts[name] = map[string]int64{"accepted": ph.Counts["accepted"], "refused": ph.Counts["refused"], "sent": ph.Counts["sent"], "bytes_sent": ph.Counts["bytes_sent"]}
			}
			if fmt.Sprint(counts["memory"]) != fmt.Sprint(counts["streamed"]) {
				t.Fatalf("memory %v, streamed %v", counts["memory"], counts["streamed"])
			}
		})
	}
}

// Distinct refusal reasons are counted up to a bound and the rest lumped
// together: a relay refusing every event with its own text cannot grow the
// client's memory per event.
func TestReasonTallyBounded(t *testing.T) {
	tl := &reasonTally{counts: map[string]int{}}
	for i := range 3 * maxReasonLabels {
		tl.add(Refused, fmt.Sprintf("blocked: event %d", i))
	}
	tl.add(Refused, "blocked: event 0")
	if len(tl.counts) != maxReasonLabels || tl.other != 2*maxReasonLabels || tl.counts["refused: blocked: event 0"] != 2 {
		t.Fatalf("%d labels, %d other", len(tl.counts), tl.other)
	}
	notes := tl.notes()
	if !strings.Contains(notes[len(notes)-1], fmt.Sprintf("%d events", 2*maxReasonLabels)) {
		t.Fatalf("notes %v", notes)
	}
}
