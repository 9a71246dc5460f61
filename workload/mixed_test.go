package workload

import (
	"testing"
	"time"
)

func TestMixedEmbedded(t *testing.T) {
	url := embeddedRelay(t)
	c := testKeys(t)
	ctx := testCtx(t)
	// The relay must hold what the queries are drawn from.
	all := make([]int, len(c.Events))
	for i := range all {
		all[i] = i
	}
	pr, err := Publish(ctx, url, c, all, PublishOptions{Connections: 2})
	if err != nil || pr.Phase.Counts["accepted"] == 0 {
		t.Fatalf("preload: %v", err)
	}
	ph, err := Mixed(ctx, url, c, MixedOptions{Duration: 600 * time.Millisecond, PublishRate: 300, QueryRate: 40, Size: 200, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, g := range ph.Groups {
		names[g.Name] = true
	}
	for _, n := range []string{"publish/alone", "query/alone", "publish/together", "query/together"} {
		if !names[n] {
			t.Fatalf("group %s missing: %v", n, names)
		}
	}
	// Open loop: what could not be sent within the part is counted, not lost.
	for _, part := range []string{"alone", "together"} {
		acc, ns := ph.Counts["publish_"+part+"_accepted"], ph.Counts["publish_"+part+"_not_sent"]
		if acc == 0 || acc+ns != 180 || ph.Counts["publish_"+part+"_sent"] != acc {
			t.Fatalf("%s: counts %v errors %v", part, ph.Counts, ph.Errors)
		}
	}
	if ph.Counts["query_alone_queries"] != 24 || ph.Counts["query_together_queries"] != 24 {
		t.Fatalf("queries %v errors %v", ph.Counts, ph.Errors)
	}
	// 48 queries, and the 2 × 180 accepted events read back by id in 4 REQs.
	if v := ph.Verification; v == nil || !v.Passed || v.Checked != 52 || v.Expected != 360 || v.Missing != 0 || v.Returned == 0 {
		t.Fatalf("verification %+v", ph.Verification)
	}
	for _, k := range []string{"publish_throughput_ratio", "query_throughput_ratio", "ok_p50_ratio", "eose_p99_ratio"} {
		if ph.Rates[k] <= 0 {
			t.Errorf("rate %s missing: %v", k, ph.Rates)
		}
	}
	checkLatency(t, "ok", ph.Latency["ok"], ph.Counts["publish_together_accepted"])
	checkLatency(t, "eose", ph.Latency["eose"], 24)
}
