package workload

import (
	"strings"
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
	// Open loop: each part's 180 scheduled events either end in exactly one
	// outcome or, on a machine too loaded to send them before the part
	// ends, are counted cut (scheduled, not requested). The honest relay
	// refuses nothing and drops no connection.
	var accepted int64
	for _, part := range []string{"alone", "together"} {
		c := func(k string) int64 { return ph.Counts["publish_"+part+"_"+k] }
		sum := c("accepted") + c("refused") + c("timed_out") + c("failed") + c("not_sent") + c("cancelled") + c("cut")
		if c("accepted") == 0 || sum != 180 || c("refused") != 0 || c("failed") != 0 {
			t.Fatalf("%s: counts %v errors %v", part, ph.Counts, ph.Errors)
		}
		accepted += c("accepted")
	}
	queries := ph.Counts["query_alone_queries"] + ph.Counts["query_together_queries"]
	for _, g := range ph.Groups {
		if strings.HasPrefix(g.Name, "query/") && (g.Counts["requested"] != 24 || g.Counts["queries"] == 0) {
			t.Fatalf("%s: counts %v errors %v", g.Name, g.Counts, ph.Errors)
		}
	}
	// The queries, and the accepted events read back by id in 4 REQs (an
	// event whose OK was cut at a part's end and that was stored after all
	// is expected too).
	if v := ph.Verification; v == nil || !v.Passed || v.Checked != queries+4 || v.Expected < accepted || v.Expected > 360 || v.Missing != 0 || v.Returned == 0 {
		t.Fatalf("verification %+v (queries %d, accepted %d)", ph.Verification, queries, accepted)
	}
	for _, k := range []string{"publish_throughput_ratio", "query_throughput_ratio", "ok_p50_ratio", "eose_p99_ratio"} {
		if ph.Rates[k] <= 0 {
			t.Errorf("rate %s missing: %v", k, ph.Rates)
		}
	}
	checkLatency(t, "ok", ph.Latency["ok"], ph.Counts["publish_together_accepted"])
	checkLatency(t, "eose", ph.Latency["eose"], ph.Counts["query_together_queries"])
}
