package workload

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/sysinfo"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/results"
)

// TestEventsRanOut: "raise --events" is advice only when the events were
// fewer than the run could publish in --duration; an open loop of exactly
// rate × duration answers its last event just before the end, as planned.
func TestEventsRanOut(t *testing.T) {
	for _, c := range []struct {
		rate float64
		dur  time.Duration
		n    int
		want bool
	}{
		{2000, 30 * time.Second, 60000, false}, // the README's example: the plan filled
		{3, 1500 * time.Millisecond, 4, false}, // 4.5 events: EventCount plans 4
		{2000, 30 * time.Second, 10000, true},  // --events below the schedule
		{0, 30 * time.Second, 10000, true},     // closed loop: the events ran out first
	} {
		r := &subRun{o: SubscribeOptions{Rate: c.rate, Duration: c.dur}}
		if got := r.eventsRanOut(c.n); got != c.want {
			t.Errorf("rate %v duration %v events %d: ran out %v, want %v", c.rate, c.dur, c.n, got, c.want)
		}
	}
}

// TestSubscribeBehindNote: events left unsent when --sub-duration ended are
// said in one line with who held them back and the evidence: the client
// (late with room in its window: the phase is client-limited), the relay
// (its window full of EVENTs awaiting OKs, or writes it did not read), or
// each publisher's share.
func TestSubscribeBehindNote(t *testing.T) {
	ms := int64(time.Millisecond)
	client := senderLag{behind: 19, lag: 1200 * ms, inFlight: 87}
	relay := senderLag{behind: 5, lag: 800 * ms, fullWait: 700 * ms, inFlight: 1024}
	unread := senderLag{behind: 7, lag: 900 * ms, writeWait: 850 * ms, inFlight: 300}
	const (
		clientWhy = "the client sent late with room in its in-flight window and its writes not held up, its CPU or timer wake-ups, not the relay"
		relayWhy  = "the in-flight window (--window) was full of EVENTs awaiting the relay's OK, or the relay did not read what was written (TCP back-pressure)"
	)
	for _, c := range []struct {
		lags      []senderLag
		clientLtd bool
		want      string
	}{
		{[]senderLag{client}, true, "client-limited: publishing fell behind the --rate schedule: 19 events due before --sub-duration 30s ended were still unsent then (not run): " + clientWhy + " (the publisher waited 0s on a full window and 0s in writes the relay did not read, of the 1.20s it was behind; 87 of its 1,024 slots awaited an OK at the end)"},
		{[]senderLag{relay, {}}, false, "relay-limited: publishing fell behind the --rate schedule: 5 events due before --sub-duration 30s ended were still unsent then (not run): " + relayWhy + " (the publisher waited 700ms on a full window and 0s in writes the relay did not read, of the 800ms it was behind; 1,024 of its 1,024 slots awaited an OK at the end)"},
		{[]senderLag{unread}, false, "relay-limited: publishing fell behind the --rate schedule: 7 events due before --sub-duration 30s ended were still unsent then (not run): " + relayWhy + " (the publisher waited 0s on a full window and 850ms in writes the relay did not read, of the 900ms it was behind; 300 of its 1,024 slots awaited an OK at the end)"},
		{[]senderLag{relay, client, client}, true, "publishing fell behind the --rate schedule: 43 events due before --sub-duration 30s ended were still unsent then (not run): 5 relay-limited: " + relayWhy + " (the publisher waited 700ms on a full window and 0s in writes the relay did not read, of the 800ms it was behind; 1,024 of its 1,024 slots awaited an OK at the end); 38 client-limited: " + clientWhy + " (2 publishers waited 0s in all on a full window and 0s in writes the relay did not read, of the 2.40s they were behind in all; at most 87 of each one's 1,024 slots awaited an OK at the end)"},
	} {
		r := &subRun{o: SubscribeOptions{Window: 1024, Duration: 30 * time.Second}, out: &liveOut{lags: c.lags}}
		var ph results.Phase
		if got := r.behindNote(&ph); got != c.want || ph.ClientLimited != c.clientLtd {
			t.Errorf("got (client-limited %v)\n%s\nwant (client-limited %v)\n%s", ph.ClientLimited, got, c.clientLtd, c.want)
		}
	}
}

// One subscriber's note is in the singular: "1 subscriber (tag filter,
// following 1 of 1 channel) waited", not "… each waited".
func TestSubscribeOneSubscriberNote(t *testing.T) {
	o := SubscribeOptions{Base: Base{Timeout: 5 * time.Second}, Subscribers: 1, Publishers: 1, Channels: 1, Overlap: 1,
		Events: 5, Size: 100, Filter: FilterTag, Grace: 500 * time.Millisecond}
	ph, _ := runSubscribe(t, testrelay.Config{Verify: true}, o)
	want := "1 subscriber (tag filter, following 1 of 1 channel) waited for EOSE before publishing; 1 publisher sent fresh events of 100 content bytes signed before the clock (5 planned)"
	if !slices.Contains(ph.Notes, want) {
		t.Errorf("notes %q\nwant %q", ph.Notes, want)
	}
}

// TestRunDefaultsNameNoBareFlag: run --workloads (and compare's) runs
// subscribe and sweep with their commands' defaults and has flags of its
// own of the same names (--events: the corpus size), so a note they can
// give there names the flag as its command's. The notes naming --rate,
// --window and the duration bare come only from an open loop or a set
// duration, which those defaults never are.
func TestRunDefaultsNameNoBareFlag(t *testing.T) {
	for _, name := range []string{"subscribe", "sweep"} {
		d, ok := Lookup(name)
		if !ok {
			t.Fatalf("%s is not registered", name)
		}
		cfg := d.New()
		applyDefaults(cfg)
		var rate float64
		var dur time.Duration
		switch o := cfg.(type) {
		case *SubscribeOptions:
			rate, dur = o.Rate, o.Duration
		case *SweepOptions:
			rate, dur = o.Rate, o.Duration
		default:
			t.Fatalf("%s: options %T", name, cfg)
		}
		if rate != 0 || dur != 0 {
			t.Errorf("%s's defaults: rate %v, duration %v: its notes naming --rate, --window and the duration bare would reach run --workloads", name, rate, dur)
		}
	}
	for _, c := range []struct {
		got  subFlags
		want subFlags
	}{
		{SubscribeOptions{}.flagNames(), subFlags{count: "the subscribe command's --subscribers", events: "the subscribe command's --events", grace: "the subscribe command's --grace", duration: "--sub-duration"}},
		{sweepFlags, subFlags{count: "the sweep command's --subscribers", events: "the sweep command's --events", grace: "the sweep command's --grace", duration: "--duration"}},
	} {
		if c.got != c.want {
			t.Errorf("flags %+v, want %+v", c.got, c.want)
		}
	}
	want := "planned 1,024 events at this size, not the sweep command's --events 2,000: at most 128 MiB of pre-signed content per size (held in memory); the accounts count the 1,024 planned"
	if got := sweepCapNote(sweepCount(2000, 131072), 2000); got != want {
		t.Errorf("sweep's cap note %q, want %q", got, want)
	}
}

// TestSubscribeRaiseEventsNote: events that ran out before the duration
// ended ask for more with the subscribe command's --events (run's --events
// is the corpus size).
func TestSubscribeRaiseEventsNote(t *testing.T) {
	o := SubscribeOptions{Base: Base{Timeout: 5 * time.Second}, Subscribers: 1, Publishers: 1, Channels: 1, Overlap: 1,
		Events: 5, Size: 100, Filter: FilterTag, Grace: 500 * time.Millisecond, Duration: 10 * time.Minute} // the events run out long before
	ph, _ := runSubscribe(t, testrelay.Config{Verify: true}, o)
	for _, n := range ph.Notes {
		if strings.HasPrefix(n, "all 5 pre-signed events were answered in ") && strings.HasSuffix(n, ", before --sub-duration 10m0s ended (raise the subscribe command's --events)") {
			return
		}
	}
	t.Errorf("notes %q: want the events ran out, raise the subscribe command's --events", ph.Notes)
}

// TestSubscribeBehindNoteNamesMachineLoad: publishing that fell behind
// the --rate schedule while other processes competed for the machine's
// cores says so in the same note (sysinfo.OthersBusy, the clause the
// "neither side saturated its CPU" note ends with), given the two sides'
// CPU over the timed window; a quiet machine adds nothing. The relay
// answers the first EVENT after the duration, so the one-slot window is
// full from the first send to the end: the rest fall behind.
func TestSubscribeBehindNoteNamesMachineLoad(t *testing.T) {
	const busy = "the machine's 1-minute load average was 7.0: other processes competed for its cores, and their waits count in these figures"
	var sides []float64
	defer func() { machineOthersBusy = sysinfo.OthersBusy }()
	for _, loaded := range []bool{true, false} {
		machineOthersBusy = func(s float64) string {
			sides = append(sides, s)
			if loaded {
				return busy
			}
			return ""
		}
		o := SubscribeOptions{Base: Base{Timeout: 5 * time.Second}, Subscribers: 1, Publishers: 1, Channels: 1, Overlap: 1,
			Events: 50, Size: 100, Filter: FilterTag, Rate: 50, Window: 1, Duration: time.Second, Grace: 100 * time.Millisecond}
		ph, _ := runSubscribe(t, testrelay.Config{Verify: true, OKDelay: 1250 * time.Millisecond}, o)
		i := slices.IndexFunc(ph.Notes, func(n string) bool { return strings.Contains(n, "publishing fell behind the --rate schedule") })
		switch {
		case i < 0:
			t.Fatalf("no note of publishing behind the schedule: %q", ph.Notes)
		case loaded && !strings.HasSuffix(ph.Notes[i], "awaited an OK at the end); "+busy):
			t.Errorf("a loaded machine, the note does not say so:\n%s", ph.Notes[i])
		case !loaded && strings.Contains(ph.Notes[i], "load average"):
			t.Errorf("a quiet machine, the note names its load:\n%s", ph.Notes[i])
		}
	}
	if len(sides) != 2 || sides[0] < 0 {
		t.Errorf("the two sides' cores given: %v, want one figure per run", sides)
	}
}
