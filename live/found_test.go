package live

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/workload"
)

// TestFaultsShowAsTheVerifierFindsThem: faults the verifier finds while a
// phase runs (a stream's invalid events, here from several goroutines)
// are in the next event and /metrics, counted by kind, before the phase
// ends; the first maxExamples are listed, the relay's bytes clipped and
// made printable; the count goes on past them.
func TestFaultsShowAsTheVerifierFindsThem(t *testing.T) {
	st := New(Options{Run: "r"})
	defer st.Close()
	st.Progress("Subscribing", 10)
	c := verify.NewChecker()
	hostileEvent := []byte(`{"id":"` + hostile + "\x00\x1b[31m" + strings.Repeat("x", 1000) + `"}`)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := c.NewStream(&nostr.Filter{Kinds: []int{1}})
			for range 250 {
				if _, f := s.Event(hostileEvent, nil, nil); f != verify.Invalid {
					t.Errorf("fault %v", f)
				}
			}
		}()
	}
	wg.Wait()
	st.mu.Lock()
	msg := st.messageLocked(nil, nil)
	st.mu.Unlock()
	var m message
	if err := json.Unmarshal(msg, &m); err != nil {
		t.Fatal(err)
	}
	if m.Found["invalid"] != 1000 || m.Found["missing"] != 0 {
		t.Fatalf("found %v, want 1000 invalid", m.Found)
	}
	if len(m.Examples) != maxExamples {
		t.Fatalf("%d examples, want %d", len(m.Examples), maxExamples)
	}
	for _, x := range m.Examples {
		if !strings.HasPrefix(x, "Subscribing: invalid event: ") || len(x) > exampleLen+120 || strings.ContainsAny(x, "\x00\x1b\n") || !utf8.ValidString(x) {
			t.Fatalf("example %q: want the step, the kind, the relay's bytes clipped and printable", x)
		}
	}
	ss := parseExposition(t, string(st.Exposition()))
	if v, _ := find(t, ss, "relaybench_verification_found_total", map[string]string{"kind": "invalid"}); v != 1000 {
		t.Errorf("found_total{kind=invalid} = %v", v)
	}
	if v, ok := find(t, ss, "relaybench_verification_found_total", map[string]string{"kind": "missing"}); !ok || v != 0 {
		t.Errorf("found_total{kind=missing} = %v (%v): every kind is exposed from the start", v, ok)
	}
	st.Finish(&results.File{})
	c.NewStream(nil).Event([]byte("not an event"), nil, nil) // after the run: no longer watched
	if n := st.found[0].Load(); n != 1000 {
		t.Errorf("a fault after Finish was counted: %d", n)
	}
}

// TestPhasesKeepTheirRelay: compare measures relays one after another:
// each finished phase keeps the relay it measured, the same phase name
// of two relays is two phases.
func TestPhasesKeepTheirRelay(t *testing.T) {
	st := New(Options{Run: "r"})
	defer st.Close()
	st.SetRelay("a", 0)
	st.PhaseDone(latencyPhase("publish", 1e6))
	st.SetRelay("b", 0)
	st.PhaseDone(latencyPhase("publish", 1e6))
	phs := st.Phases()
	if len(phs) != 2 || phs[0].Relay != "a" || phs[1].Relay != "b" || phs[0].Name != "publish" || phs[1].Name != "publish" {
		t.Fatalf("phases %+v", phs)
	}
	ss := parseExposition(t, string(st.Exposition()))
	for _, r := range []string{"a", "b"} {
		if v, _ := find(t, ss, "relaybench_operations_total", map[string]string{"relay": r, "phase": "publish", "outcome": "accepted"}); v != 1 {
			t.Errorf("relay %s publish accepted = %v", r, v)
		}
	}
}

// TestPhaseSplitsItsOperations: a finished phase of several kinds of
// operation gives each kind's requested and outcomes (the page shows a
// row per kind, not EVENTs and REQs added up); a phase of one kind gives
// none (its totals say it all).
func TestPhaseSplitsItsOperations(t *testing.T) {
	st := New(Options{Run: "r"})
	defer st.Close()
	mixed := results.NewPhase("mixed", "mixed")
	mixed.Accounts = []results.Account{
		{Op: results.OpEvent, Requested: 4, Accepted: 4},
		{Op: results.OpQuery, Requested: 3, Accepted: 2, TimedOut: 1},
		{Op: results.OpEvent, Requested: 1, Refused: 1},
		{Op: results.OpRead, Requested: 2, Accepted: 2},
	}
	st.PhaseDone(mixed)
	st.PhaseDone(latencyPhase("publish", 1e6))
	phs := st.Phases()
	if len(phs) != 2 {
		t.Fatalf("phases %+v", phs)
	}
	ops := phs[0].Ops
	if phs[0].Requested != 10 || len(ops) != 3 || ops[0].Op != "events" || ops[0].Requested != 5 || ops[0].Outcomes["accepted"] != 4 || ops[0].Outcomes["refused"] != 1 ||
		ops[1].Op != "queries" || ops[1].Requested != 3 || ops[1].Outcomes["timed_out"] != 1 || ops[2].Op != "read-backs" || ops[2].Requested != 2 {
		t.Errorf("mixed: requested %d, ops %+v", phs[0].Requested, ops)
	}
	if phs[1].Ops != nil {
		t.Errorf("publish, one kind: ops %+v, want none", phs[1].Ops)
	}
}

// TestRelayCPUNeverGoesDown: the relay's CPU total adds what each reading
// adds to the one before by the same reader: a reading lower than the
// last (a process left the tree unreaped) adds nothing, and another
// relay's reader (compare) goes on from the total.
func TestRelayCPUNeverGoesDown(t *testing.T) {
	st := New(Options{Run: "r"})
	defer st.Close()
	readings := []float64{10, 12, 11, 15}
	i := 0
	st.SetRelayUsage("a", func() (float64, int64, bool) { v := readings[i]; i++; return v, 1 << 20, true })
	for range readings {
		st.Tick()
	}
	if got := st.res.relayCPU; got != 5 { // 10 → 12 (+2), 11 (+0), 15 (+3 from 12)
		t.Fatalf("relay CPU %v s, want 5", got)
	}
	st.SetRelayUsage("b", func() (float64, int64, bool) { return 100, 2 << 20, true })
	st.Tick()
	st.Tick()
	if got := st.res.relayCPU; got != 5 {
		t.Fatalf("relay CPU %v s after another relay's first readings, want 5 still", got)
	}
	ss := parseExposition(t, string(st.Exposition()))
	if v, _ := find(t, ss, "relaybench_relay_resident_memory_bytes", nil); v != 2<<20 {
		t.Errorf("relay memory %v", v)
	}
}

// TestRelayMetricsInThePageAndMetrics: a finished phase's relay checks
// (the relay's own counts beside relaybench's bounds) are in the page's
// events and in /metrics, a disagreement flagged.
func TestRelayMetricsInThePageAndMetrics(t *testing.T) {
	st := New(Options{Run: "r"})
	defer st.Close()
	ph := latencyPhase("publish", 1e6)
	ph.RelayChecks = []results.RelayCheck{{Series: "nostr_cmd_event_total", What: "EVENT messages received", Relay: 4, Low: 1, High: 2, Disagree: true}}
	ph.Notes = []string{"closed loop", "relay metrics disagree: the relay counted 4 EVENT messages received"}
	st.PhaseDone(ph)
	phs := st.Phases()
	if len(phs) != 1 || len(phs[0].RelayChecks) != 1 || len(phs[0].RelayNotes) != 1 || !phs[0].RelayChecks[0].Disagree {
		t.Fatalf("phases %+v", phs)
	}
	ss := parseExposition(t, string(st.Exposition()))
	l := map[string]string{"phase": "publish", "series": "nostr_cmd_event_total"}
	if v, _ := find(t, ss, "relaybench_relay_metric_count", l); v != 4 {
		t.Errorf("count %v", v)
	}
	if v, _ := find(t, ss, "relaybench_relay_metric_bound", with(l, "bound", "high")); v != 2 {
		t.Errorf("high %v", v)
	}
	if v, _ := find(t, ss, "relaybench_relay_metric_disagree", l); v != 1 {
		t.Errorf("disagree %v", v)
	}
}

// TestFaultsOfARealWorkloadAsFound: a relay that corrupts every third
// live delivery, measured by the lifecycle workload: when the workload
// returns, before its phase is handed over (PhaseDone), the live view has
// counted each corrupted delivery as the verifier found it, as many as
// the phase's verification books.
func TestFaultsOfARealWorkloadAsFound(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{Verify: true, InvalidDeliveriesEvery: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second) // a hang guard
	defer cancel()
	keys, err := corpus.Generate(ctx, corpus.Params{Seed: 3, Events: 30, Authors: 30, AvgSize: 200, Spread: corpus.DefaultSpread}.WithDefaults(), corpus.Options{CacheDir: "off"})
	if err != nil {
		t.Fatal(err)
	}
	st := New(Options{Run: "r"})
	defer st.Close()
	ph, err := workload.Lifecycle(ctx, r.URL(), keys, workload.LifecycleOptions{Events: 9, Size: 100, Base: workload.Base{Timeout: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	found, examples := st.foundSoFar()
	if v := ph.Verification; v == nil || v.Invalid != 3 || found["invalid"] != v.Invalid {
		t.Fatalf("found %v as they came; the phase's verification %+v", found, v)
	}
	if len(examples) != 3 || !strings.Contains(examples[0], "invalid event: {") {
		t.Errorf("examples %q", examples)
	}
}

// TestFoundPerRelay: compare measures one relay after another; each
// relay's relaybench_verification_found_total counts the faults found
// while it was under test, not those of the relays before it, and a relay
// measured again goes on from its own count.
func TestFoundPerRelay(t *testing.T) {
	st := New(Options{Run: "r"})
	defer st.Close()
	c := verify.NewChecker()
	fault := func(n int) {
		s := c.NewStream(nil)
		for range n {
			s.Event([]byte("not an event"), nil, nil)
		}
	}
	st.SetRelayUsage("a", nil)
	fault(3)
	st.SetRelayUsage("b", nil)
	fault(2)
	st.SetRelayUsage("a", nil)
	fault(1)
	ss := parseExposition(t, string(st.Exposition()))
	for relay, want := range map[string]float64{"a": 4, "b": 2} {
		if v, ok := find(t, ss, "relaybench_verification_found_total", map[string]string{"relay": relay, "kind": "invalid"}); !ok || v != want {
			t.Errorf("found_total{relay=%s,kind=invalid} = %v (%v), want %v", relay, v, ok, want)
		}
	}
}
