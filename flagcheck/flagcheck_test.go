package flagcheck

import (
	"math"
	"testing"
	"time"
)

// Each check refuses what it should with the one-line message the CLI
// prints, and the first bad value wins.
func TestChecksRefuseWithTheFlagAndValue(t *testing.T) {
	for _, c := range []struct {
		name  string
		check func(r *Ranges)
		want  string // "" : accepted
	}{
		{"min", func(r *Ranges) { r.Min("events", 0, 1) }, "--events 0: must be at least 1"},
		{"min ok", func(r *Ranges) { r.Min("events", 1, 1) }, ""},
		{"between high", func(r *Ranges) { r.Between("authors", 11, 1, 10) }, "--authors 11: must be at most 10"},
		{"positive", func(r *Ranges) { r.Positive("timeout", 0) }, "--timeout 0s: must be a positive duration"},
		{"not negative", func(r *Ranges) { r.NotNegative("grace", -time.Second) }, "--grace -1s: must not be negative"},
		{"zero duration ok", func(r *Ranges) { r.NotNegative("grace", 0) }, ""},
		{"rate NaN", func(r *Ranges) { r.Rate("rate", math.NaN(), true) }, "--rate NaN: must be a finite number"},
		{"rate zero", func(r *Ranges) { r.Rate("rate", 0, false) }, "--rate 0: must be above 0"},
		{"rate max", func(r *Ranges) { r.RateMax("rate", 2e6, false, "duration", 0) }, "--rate 2e+06: must be at most 1,000,000/s (more than one client could ever sign and send)"},
		{"rate × duration", func(r *Ranges) { r.RateMax("rate", 1000, false, "duration", 1e6*time.Hour) }, "--rate 1000: × --duration 1000000h0m0s is 3,600,000,000,000 events, more than the 1,000,000,000 one run may send"},
		{"window above events", func(r *Ranges) { r.Window("window", 500, 64, 100) }, "--window 500: is more than the 100 events of the run: no connection could fill it"},
		{"window default ok", func(r *Ranges) { r.Window("window", 64, 64, 10) }, ""},
		{"query limit", func(r *Ranges) { r.QueryLimit("query-limit", 2_000_000) }, "--query-limit 2000000: must be at most 1,000,000 (NIP-01 limits are small: relays cap them at hundreds to thousands)"},
		{"span", func(r *Ranges) { r.Span("bursts", "1e9", 1e9, time.Hour) }, "--bursts 1e9: makes the run longer than 292 years (the longest time relaybench can count)"},
		{"between high grouped", func(r *Ranges) { r.Between("load-max-events", 2_000_000_000, 0, MaxRunEvents) }, "--load-max-events 2000000000: must be at most 1,000,000,000"},
		{"window max grouped", func(r *Ranges) { r.Window("window", 2_000_000, 64, 0) }, "--window 2000000: must be at most 1,000,000"},
		{"window above many events", func(r *Ranges) { r.Window("window", 5000, 64, 1500) }, "--window 5000: is more than the 1,500 events of the run: no connection could fill it"},
		{"min grouped", func(r *Ranges) { r.Min64("events", 5, 10_000) }, "--events 5: must be at least 10,000"},
		{"size", func(r *Ranges) { r.Size("size", 0) }, "--size 0: must be at least 1"},
		{"first wins", func(r *Ranges) { r.Min("a", 0, 1); r.Min("b", 0, 1) }, "--a 0: must be at least 1"},
	} {
		var r Ranges
		c.check(&r)
		got := ""
		if r.Err() != nil {
			got = r.Err().Error()
		}
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// Memory refuses a count the machine cannot hold, naming the flag, and is
// skipped once a value was refused (its count may be the bad one).
func TestMemoryRefusesWhatTheMachineCannotHold(t *testing.T) {
	if memoryLimit() <= 0 {
		t.Skip("memory limit unknown here")
	}
	var r Ranges
	r.Memory("events", 1e15, 1e15, 1024, "event")
	if r.Err() == nil {
		t.Fatal("1e15 events of 1 KB accepted")
	}
	var s Ranges
	s.Min("events", -1, 1)
	s.Memory("size", 1e15, 1e15, 1024, "event")
	if got := s.Err().Error(); got != "--events -1: must be at least 1" {
		t.Fatalf("got %q", got)
	}
}
