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

// TestBrowserTablesFit renders a report with wide phase tables in headless
// Chromium 1400 px wide: the main column uses the width (over 1,200 px)
// and no table scrolls sideways.
func TestBrowserTablesFit(t *testing.T) {
	bin := chromium(t)
	var b bytes.Buffer
	if err := HTML(&b, []*results.File{wideFile()}, Options{}); err != nil {
		t.Fatal(err)
	}
	// The test's copy of the page measures itself; the report has no script.
	const probe = `<script>var n=0;for(const d of document.querySelectorAll("div.scroll")){if(d.scrollWidth>d.clientWidth)n++}` +
		`document.body.setAttribute("data-fit", n+"/"+document.querySelector("main").clientWidth)</script>`
	page := filepath.Join(t.TempDir(), "fit.html")
	if err := os.WriteFile(page, []byte(strings.Replace(b.String(), "</body>", probe+"</body>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`data-fit="(\d+)/(\d+)"`).FindStringSubmatch(string(runChromium(t, bin, page, "--window-size=1400,2400", "--dump-dom")))
	if m == nil {
		t.Fatal("the page did not report its tables")
	}
	if n, w := atoi(t, m[1]), atoi(t, m[2]); n > 0 || w < 1200 {
		t.Errorf("%d table(s) scroll sideways in a main column %d px wide", n, w)
	}
}
