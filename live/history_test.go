package live

import (
	"context"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/metrics"
)

// fillingSeries makes a series of kind what whose one second, holding one
// latency of ms, is still filling whenever a tick reads it (the series
// starts an hour from now): only a phase's end or the run's reads it.
func fillingSeries(what string, ms int64) {
	start := mono.Now() + int64(time.Hour)
	metrics.NewSeries(start).Times(what).Latency(start, ms*int64(time.Millisecond))
}

// wantLat fails unless lat is one kind, of, holding one value of ms.
func wantLat(t *testing.T, where string, lat []Latency, of string, ms float64) {
	t.Helper()
	if len(lat) != 1 || lat[0].Of != of || lat[0].Count != 1 || lat[0].Max < ms*0.98 || lat[0].Max > ms*1.02 {
		t.Fatalf("%s: latency %+v, want one %s value of %v ms", where, lat, of, ms)
	}
}

// TestPhaseEndKeepsItsLastSecond: the latency of a phase's last seconds,
// still filling at its last tick, shows in the next point, where the live
// view let the series go unread (run's publish of 5,000 events in 0.8 s
// and its 50 queries plotted no latency at all, mixed's preload neither).
func TestPhaseEndKeepsItsLastSecond(t *testing.T) {
	st := New(Options{Run: "r", Command: "run"})
	defer st.Close()
	fillingSeries(metrics.TimesOK, 3)
	st.Tick()
	if lat := last(st).Lat; len(lat) != 0 {
		t.Fatalf("a second still filling was read: %+v", lat)
	}
	st.PhaseDone(latencyPhase("publish", 3e6))
	st.Tick()
	wantLat(t, "the point after the phase's end", last(st).Lat, metrics.TimesOK, 3)
	st.Tick()
	if lat := last(st).Lat; len(lat) != 0 {
		t.Fatalf("the next point repeats the latency: %+v", lat)
	}
}

// TestRunEndKeepsItsLastLatency: a run that ends before the tick after
// its last phase's end makes a last point of that phase's latency, which
// a page opened after the end gets in its history.
func TestRunEndKeepsItsLastLatency(t *testing.T) {
	st, srv := serveRunOf(t, Options{Run: "r", Command: "run"})
	st.Tick()
	fillingSeries(metrics.TimesEOSE, 40)
	st.PhaseDone(latencyPhase("query", 40e6))
	st.Finish(finishedFile())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // hang guard
	defer cancel()
	_, r := follow(t, ctx, srv)
	m := readEvent(t, r)
	if !m.Finished || len(m.History) != 2 {
		t.Fatalf("a page opened after the end: finished %v, %d points, want the end and 2 points", m.Finished, len(m.History))
	}
	wantLat(t, "the last point", m.History[1].Lat, metrics.TimesEOSE, 40)
}

// TestLatePageGetsTheLatencyHistory: a page opened after the run has
// made latency points gets every one of them from the run's start, as it
// gets the rates.
func TestLatePageGetsTheLatencyHistory(t *testing.T) {
	st, srv := serveRunOf(t, Options{Run: "r", Command: "mixed"})
	const n = 5
	for i := range n {
		latencySeries(metrics.TimesOK, int64(10+i))
		st.Tick()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // hang guard
	defer cancel()
	_, r := follow(t, ctx, srv)
	m := readEvent(t, r)
	if len(m.History) != n {
		t.Fatalf("the late page got %d points, want %d", len(m.History), n)
	}
	for i, p := range m.History {
		wantLat(t, "point "+string(rune('0'+i)), p.Lat, metrics.TimesOK, float64(10+i))
	}
}

// TestThinnedHistoryKeepsEveryLatency: a history thinned to its cap drops
// points, never their latency: every value is counted once in the points
// kept or the ticks since the last one, and a one-second spike (a point
// the first thinning drops) still shows.
func TestThinnedHistoryKeepsEveryLatency(t *testing.T) {
	st := New(Options{Run: "r", Command: "load", HistoryCap: 4})
	defer st.Close()
	const ticks = 50
	for i := range ticks {
		ms := int64(1)
		if i == 1 {
			ms = 900
		}
		latencySeries(metrics.TimesOK, ms)
		st.Tick()
	}
	var count int64
	var most float64
	for _, p := range st.History() {
		for _, l := range p.Lat {
			count += l.Count
			most = max(most, l.Max)
		}
	}
	for _, l := range st.carry {
		count += l.Count
	}
	if count != ticks {
		t.Errorf("%d values in the history and the ticks since its last point, want %d", count, ticks)
	}
	if most < 900*0.98 {
		t.Errorf("the spike of 900 ms is gone: highest max %v ms", most)
	}
}

// TestLatePageDrawsTheLatencyHistory: in Chromium, a page opened after
// the run made latency points has each of them to draw, from the run's
// start; and the page thins a long history as the server does (thin),
// from the start on, every value counted and a spike kept, where it cut
// the first hour off.
func TestLatePageDrawsTheLatencyHistory(t *testing.T) {
	bin := chromiumBin()
	if bin == "" {
		t.Skip("skipping: no chromium (apt-get install chromium)")
	}
	st, srv := serveRunOf(t, Options{Run: "r", Command: "mixed"})
	const n = 4
	for i := range n {
		latencySeries(metrics.TimesOK, int64(10+i))
		st.Tick()
	}
	br := openBrowser(t, bin, srv.URL())
	var got struct {
		Status  string  `json:"status"`
		WithLat int     `json:"with_lat"`
		First   float64 `json:"first"`
		Thinned int     `json:"thinned"`
		From    float64 `json:"from"`
		Count   int     `json:"count"`
		Most    float64 `json:"most"`
	}
	const read = `(() => { if (typeof thin !== "function") return {status: "loading"}; // the script not run yet
  const h = [];
  for (let i = 0; i < 7201; i++) {
    const v = i === 1 ? 900 : 1;
    h.push({t: i, lat: [{of: "OK", count: 1, p50_ms: v, p90_ms: v, p99_ms: v, max_ms: v}]});
  }
  const k = thin(h);
  let count = 0, most = 0;
  for (const p of k) for (const l of p.lat) { count += l.count; most = Math.max(most, l.max_ms); }
  return {status: document.getElementById("status").textContent,
    with_lat: history.filter(p => (p.lat || []).length === 1).length, first: history.length ? history[0].lat[0].max_ms : 0,
    thinned: k.length, from: k[0].t, count: count, most: most}; })()`
	deadline := time.Now().Add(time.Minute) // hang guard
	for br.eval(t, read, &got); got.Status != "running"; br.eval(t, read, &got) {
		if time.Now().After(deadline) {
			t.Fatalf("the page never showed the run: %+v", got)
		}
		time.Sleep(50 * time.Millisecond) // polling pace, not a synchronisation
	}
	if got.WithLat < n || got.First < 10*0.98 || got.First > 10*1.02 {
		t.Errorf("the late page has latency in %d points, the first %v ms; want %d from the start (10 ms)", got.WithLat, got.First, n)
	}
	if got.Thinned != 3601 || got.From != 0 || got.Count != 7201 || got.Most != 900 {
		t.Errorf("thin(7,201 points): %d points from t=%v, %d values, highest max %v; want 3,601 from 0, 7,201, 900",
			got.Thinned, got.From, got.Count, got.Most)
	}
}

// TestPageDrawsALoneLatency: in Chromium, a value with none on either
// side (a phase of under a second: run's publish, its queries) shows as a
// dot, where a line of one point drew nothing and the chart stayed empty.
func TestPageDrawsALoneLatency(t *testing.T) {
	bin := chromiumBin()
	if bin == "" {
		t.Skip("skipping: no chromium (apt-get install chromium)")
	}
	st, srv := serveRunOf(t, Options{Run: "r", Command: "run"})
	st.Tick()
	latencySeries(metrics.TimesOK, 5)
	st.Tick()
	st.Tick()
	br := openBrowser(t, bin, srv.URL())
	var got struct {
		Status string `json:"status"`
		Points int    `json:"points"`
		Red    int    `json:"red"`
	}
	// Pixels of the fourth colour (#b00020, OK max's, drawn over p50, p90
	// and p99 of one value) below the legends.
	const read = `(() => { if (typeof drawAll !== "function") return {status: "loading"};
  const c = document.getElementById("c-lat"), d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  const top = Math.ceil(26 * (window.devicePixelRatio || 1));
  let red = 0;
  for (let i = top * c.width * 4; i < d.length; i += 4)
    if (Math.abs(d[i] - 176) < 12 && d[i + 1] < 12 && Math.abs(d[i + 2] - 32) < 12) red++;
  return {status: document.getElementById("status").textContent, points: history.length, red: red}; })()`
	deadline := time.Now().Add(time.Minute) // hang guard
	for br.eval(t, read, &got); got.Status != "running" || got.Points < 3; br.eval(t, read, &got) {
		if time.Now().After(deadline) {
			t.Fatalf("the page never showed the run's 3 points: %+v", got)
		}
		time.Sleep(50 * time.Millisecond) // polling pace, not a synchronisation
	}
	if got.Red == 0 {
		t.Errorf("the latency chart draws nothing of a lone OK max: %+v", got)
	}
}
