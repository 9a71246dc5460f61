package workload

import (
	"context"
	"testing"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/testrelay"
)

// Wait mode writes each next EVENT from the OK's callback: on the shared
// reader threads for events up to sharedWaitMax, on each connection's
// reader goroutine for larger ones. Both must send every event once and
// match every OK to its event.
func TestPublishWaitEveryOKMatchedBothReaders(t *testing.T) {
	small := smallCorpus(t)
	large, err := corpus.Generate(context.Background(), corpus.Params{Seed: 5, Events: 40, Authors: 4, AvgSize: 24 << 10,
		Spread: corpus.DefaultSpread}.WithDefaults(), corpus.Options{CacheDir: "off"})
	if err != nil {
		t.Fatal(err)
	}
	if maxEventSize(small, nil) > sharedWaitMax || maxEventSize(large, nil) <= sharedWaitMax {
		t.Fatalf("corpora do not cover both readers: max sizes %d and %d", maxEventSize(small, nil), maxEventSize(large, nil))
	}
	r := testrelay.Start(t, testrelay.Config{})
	for name, c := range map[string]*corpus.Corpus{"shared readers": small, "reader goroutines": large} {
		pr, err := Publish(testCtx(t), r.URL(), c, nil, PublishOptions{Base: Base{Timeout: 10 * time.Second}, Connections: 3, Mode: ModeWait})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n := int64(c.Len())
		p := pr.Phase
		if p.Counts["sent"] != n || p.Counts["accepted"] != n || p.Counts["foreign_oks"] != 0 || p.Latency["ok"].Count != n {
			t.Fatalf("%s: %d events: counts %v, %d latencies", name, n, p.Counts, p.Latency["ok"].Count)
		}
		for i, oc := range pr.Outcomes {
			if oc != Accepted {
				t.Fatalf("%s: event %d: outcome %v", name, i, oc)
			}
		}
	}
}
