package report

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// wideFile is two relays whose subscribe phase holds 30 counters, most of
// them 0: a table far wider than the page as it comes.
func wideFile() *results.File {
	f := labelledFile()
	for i := range f.Runs {
		p := &f.Runs[i].Phases[0]
		for _, k := range []string{"cancelled", "duplicated", "failed", "invalid", "missing", "not_sent", "notices", "refused", "timed_out"} {
			p.Counts[k] = 0
		}
		for _, k := range []string{"bytes_received", "bytes_sent", "subscriber_frames", "subscriber_reads", "sent", "late", "dropped", "subscriptions"} {
			p.Counts[k] = 123456789
		}
	}
	return f
}

// A phase table with many figures fits the HTML page: its all-zero columns
// are named in a note under it, and what is still wider than the page is
// transposed (one row per figure, one column per relay).
func TestWideTableFitsPage(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, []*results.File{wideFile()}, Options{}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if !strings.Contains(s, "<p class=\"note\">0 throughout (– where not recorded): Cancelled, Duplicated, Failed,") {
		t.Errorf("the zero columns are not named under the table")
	}
	if !regexp.MustCompile(`<th>Relay</th><th class="num">khatru-native</th><th class="num">strfry</th>`).MatchString(s) ||
		!strings.Contains(s, "<tr><td>Deliveries expected</td>") {
		t.Errorf("the wide subscribe table is not transposed")
	}
	if strings.Contains(s, "<th class=\"num\">Cancelled</th>") {
		t.Errorf("an all-zero column is still a column")
	}
}

// burstFile is a compare of two relays with long names whose burst phase
// holds the counters, rates and latencies a real burst run records, and a
// group table of its burst and background streams: a newcomer's compare
// -workloads subscribe,burst showed its Burst table squeezed to the page's
// edge, its Status column cut off.
func burstFile() *results.File {
	counts := map[string]int64{"accepted": 6000, "background_events": 1000, "burst_1_recovery_ns": 130e6, "burst_2_recovery_ns": 150e6,
		"burst_cpu_window_ns": 586435838, "burst_events": 5000, "bytes_received": 486000, "bytes_sent": 8485019, "sent": 6000}
	for _, k := range []string{"cancelled", "failed", "foreign_oks", "malformed_frames", "not_recovered", "not_sent", "notices", "recovery_unjudged", "refused", "timed_out", "unsolicited_events"} {
		counts[k] = 0
	}
	group := func(name string, n int64) results.Group {
		return results.Group{Name: name, Rates: map[string]float64{"success_rate": 1},
			Counts:  map[string]int64{"accepted": n, "cancelled": 0, "failed": 0, "not_accepted": 0, "not_sent": 0, "refused": 0, "requested": n, "sent": n, "timed_out": 0},
			Latency: map[string]*results.Histogram{"ok": hist(3, 200, 106e6, 0.3)}}
	}
	burst := results.Phase{Name: "burst", Workload: "burst", Duration: 9.99e9, Counts: counts,
		Rates: map[string]float64{"between_success_rate": 1, "burst_client_cores": 0.098, "burst_relay_cores": 1.69, "burst_success_rate": 1, "events_per_sec": 600.57},
		Latency: map[string]*results.Histogram{"ok": hist(1, 500, 102e6, 0.3), "ok_from_intended": hist(2, 500, 106e6, 0.3),
			"recovery": hist(4, 5, 130e6, 0.1), "send_lateness": hist(5, 500, 1e5, 0.5)},
		Groups: []results.Group{group("burst", 5000), group("background-during-burst", 64), group("background-between-bursts", 936)}}
	f := oneRun("compare", nil, burst)
	f.Runs[0].Relay.Name = "nostr-rs-relay-sqlite"
	r := f.Runs[0]
	r.Relay.Name = "khatru-memory-badger"
	f.Runs = append(f.Runs, r)
	return f
}

// TestBrowserTablesFit renders reports with wide phase tables (a subscribe
// phase of 30 counters, a compare's burst phase and its groups) in
// headless Chromium 1400 px wide: the main column uses the width (over
// 1,200 px), no table scrolls sideways, and none needs more than 95% of
// the column even at its narrowest (headers wrapped to their longest
// word): a table squeezed to the column's edge is cut off by a slightly
// wider font, figure or relay name on the reader's machine.
func TestBrowserTablesFit(t *testing.T) {
	bin := chromium(t)
	for name, f := range map[string]*results.File{"wide subscribe": wideFile(), "compare with burst": burstFile(), "URL relay": urlRelayFile()} {
		var b bytes.Buffer
		if err := HTML(&b, []*results.File{f}, Options{}); err != nil {
			t.Fatal(err)
		}
		// The test's copy of the page measures itself; the report has no script.
		const probe = `<script>var n=0,tight=[];for(const d of document.querySelectorAll("div.scroll")){if(d.scrollWidth>d.clientWidth)n++;` +
			`for(const t of d.querySelectorAll("table")){t.style.width="min-content";if(t.offsetWidth>0.95*d.clientWidth){var h=d.querySelector("h3");tight.push(h?h.textContent:"?")}t.style.width=""}}` +
			`document.body.setAttribute("data-fit", n+"/"+document.querySelector("main").clientWidth+"/"+tight.join(","))</script>`
		page := filepath.Join(t.TempDir(), "fit.html")
		if err := os.WriteFile(page, []byte(strings.Replace(b.String(), "</body>", probe+"</body>", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`data-fit="(\d+)/(\d+)/([^"]*)"`).FindStringSubmatch(string(runChromium(t, bin, page, "--window-size=1400,2400", "--dump-dom")))
		if m == nil {
			t.Fatalf("%s: the page did not report its tables", name)
		}
		if n, w := atoi(t, m[1]), atoi(t, m[2]); n > 0 || w < 1200 {
			t.Errorf("%s: %d table(s) scroll sideways in a main column %d px wide", name, n, w)
		}
		if m[3] != "" {
			t.Errorf("%s: table(s) squeezed to the column's edge: %s", name, m[3])
		}
	}
}
