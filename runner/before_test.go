package runner

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/relay/embedded"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/workload"
)

// A run against a relay that already holds another run's events (the
// README's :7777 relay after earlier examples) finds so before publishing,
// and judges those events in its answers the relay's earlier data, not
// extra: the relay answered right. The first run, on the empty relay,
// records that it was empty.
func TestRelayHoldingEarlierDataIsNotWrong(t *testing.T) {
	r, err := embedded.New(embedded.Options{Store: "native", DataDir: t.TempDir(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r.Handler())
	defer func() { srv.Close(); r.Close() }()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	run := func(seed int64) results.Run {
		c, err := corpus.Generate(t.Context(), corpus.Params{Seed: seed, Events: 300, Authors: 20, AvgSize: 200,
			Anchor: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Unix()}.WithDefaults(), corpus.Options{CacheDir: "off"})
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{
			Publish: workload.PublishOptions{Base: workload.Base{Timeout: 20 * time.Second}, Connections: 2, Mode: workload.ModePipeline, Window: 16},
			Query:   workload.QueryOptions{Base: workload.Base{Seed: 9, Timeout: 20 * time.Second}, Queries: 60, Limit: 50},
		}
		res, err := Run(t.Context(), c, cfg, Target{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := run(3)
	if first.Relay.Before != results.BeforeEmpty {
		t.Fatalf("fresh relay: before %q, want %q", first.Relay.Before, results.BeforeEmpty)
	}
	if v := first.Phase("query").Verification; v.Status() != results.VerificationPassed || v.HeldBefore != 0 {
		t.Fatalf("first run: %s held_before %d notes %q", v.Status(), v.HeldBefore, v.Notes)
	}
	second := run(4) // other keys, same hours: its queries meet the first run's events
	if second.Relay.Before != results.BeforeHeld {
		t.Fatalf("relay holding the first run's events: before %q, want %q", second.Relay.Before, results.BeforeHeld)
	}
	v := second.Phase("query").Verification
	if v.Status() != results.VerificationPassed || v.Extra != 0 || v.Missing != 0 {
		t.Fatalf("second run: %s extra %d missing %d notes %q", v.Status(), v.Extra, v.Missing, v.Notes)
	}
	if v.HeldBefore == 0 {
		t.Fatalf("no answer held the first run's events: the test proves nothing (notes %q)", v.Notes)
	}
	if !strings.Contains(strings.Join(second.Notes, "\n"), "held events before this run") {
		t.Fatalf("no run note on the earlier data: %q", second.Notes)
	}
}
