package live

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/metrics"
)

// latencySeries makes a series of kind what (metrics.Series.Times; "":
// not said) whose first second, complete, holds one latency of ms.
func latencySeries(what string, ms int64) {
	start := mono.Now() - 3*int64(time.Second)
	s := metrics.NewSeries(start)
	if what != "" {
		s.Times(what)
	}
	s.Latency(start+int64(time.Second)/2, ms*int64(time.Millisecond))
}

// TestLatencyByKind: a point's latency is each kind's apart, labelled with
// what it times (the page plotted one distribution of every series, OK
// latency only in practice, and mixed's query part not at all): an OK of 1
// ms and an EOSE of 50 ms are two entries, never one p99 of both.
func TestLatencyByKind(t *testing.T) {
	st := New(Options{Run: "r", Command: "mixed"})
	defer st.Close()
	latencySeries(metrics.TimesOK, 1)
	latencySeries(metrics.TimesEOSE, 50)
	latencySeries("", 7)
	st.Tick()
	lat := last(st).Lat
	if len(lat) != 3 || lat[0].Of != "OK" || lat[1].Of != "EOSE" || lat[2].Of != latencyUnsaid {
		t.Fatalf("latency of the point: %+v, want OK, EOSE, %s apart", lat, latencyUnsaid)
	}
	for i, want := range []float64{1, 50, 7} {
		if l := lat[i]; l.Count != 1 || l.P99 < want*0.98 || l.P99 > want*1.02 {
			t.Errorf("%s: %+v, want 1 value of %v ms", l.Of, l, want)
		}
	}
	st.Tick() // the second was read: not again
	if lat := last(st).Lat; len(lat) != 0 {
		t.Errorf("the next point repeats the latency: %+v", lat)
	}
}

// TestPageShowsWhatItsLatencyTimes: in Chromium, the p99 card and the
// latency chart's legend name what they time (a query phase's EOSE), where
// the card showed "—" while mixed's query part ran; the cards say they
// count the whole run, the bar beside them the phase in flight.
func TestPageShowsWhatItsLatencyTimes(t *testing.T) {
	bin := chromiumBin()
	if bin == "" {
		t.Skip("skipping: no chromium (apt-get install chromium)")
	}
	st, srv := serveRunOf(t, Options{Run: "r", Command: "mixed"})
	latencySeries(metrics.TimesEOSE, 50)
	st.Tick()
	br := openBrowser(t, bin, srv.URL())
	var got struct {
		Status string   `json:"status"`
		P99    string   `json:"p99"`
		Kinds  []string `json:"kinds"`
		Scope  string   `json:"scope"`
	}
	// a page still being parsed has neither all its elements nor its
	// script's functions yet: it reads as loading until it has both
	const read = `(() => { if (!document.getElementById("status") || typeof latencyKinds !== "function") return {status: "loading"};
  const t = id => document.getElementById(id).textContent;
  return {status: t("status"), p99: t("p99"), kinds: latencyKinds(), scope: t("scope") + " " +
    document.getElementById("requested").nextElementSibling.textContent}; })()`
	deadline := time.Now().Add(time.Minute) // hang guard
	for br.eval(t, read, &got); got.Status != "running"; br.eval(t, read, &got) {
		if time.Now().After(deadline) {
			t.Fatalf("the page never showed the run: %+v", got)
		}
		time.Sleep(50 * time.Millisecond) // polling pace, not a synchronisation
	}
	if !strings.HasPrefix(got.P99, "EOSE 5") || len(got.Kinds) != 1 || got.Kinds[0] != "EOSE" {
		t.Errorf("p99 card %q, latency kinds %v; want EOSE's", got.P99, got.Kinds)
	}
	if !strings.Contains(got.Scope, "Whole run") || !strings.Contains(got.Scope, "requested (whole run)") {
		t.Errorf("the cards do not say they count the whole run: %q", got.Scope)
	}
}
