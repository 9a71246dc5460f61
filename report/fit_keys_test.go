package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// TestURLRelayTableIsNotTransposed: the Relays table of a run against a
// relay given as a URL (no catalog name: the URL is its name and its URL)
// with a pseudo-version fits a 1400 px page (Chromium lays it out in
// 1,142 px of 1,356): it stays a table of one row per relay, where a
// newcomer's HTML read "Relay, URL, Software | ws://127.0.0.1:7777
// ws://127.0.0.1:7777 khatru v0.19.1, native store, embedded in
// relaybench" with Version, Managed and Runs as rows.
// TestBrowserTablesFit checks that it fits in Chromium.
func TestURLRelayTableIsNotTransposed(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, []*results.File{urlRelayFile()}, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "<th>Relay</th><th>URL</th><th>Software</th><th>Version</th>") {
		t.Errorf("the Relays table of a URL relay is transposed, or its columns are not Relay, URL, Software, Version")
	}
}

// urlRelayFile is a run against a relay given as a URL, with the
// software and version the embedded relay reports built from a checkout.
func urlRelayFile() *results.File {
	f := oneRun("run", nil, results.Phase{Name: "publish", Workload: "publish", Duration: 1e9, Counts: map[string]int64{"accepted": 10, "sent": 10}})
	f.Runs[0].Relay = results.Relay{URL: "ws://127.0.0.1:7777", Software: "khatru v0.19.1, native store, embedded in relaybench",
		Version: "v0.0.0-20261123130000-90946b34697c+dirty"}
	return f
}

// TestTransposeNamesColumnsByTheRowsKey: a table that is transposed
// names each column by as few leading text cells as tell its rows apart
// (a relay alone; a relay and its group), a cell equal to the one before
// said once; the other leading text columns (URL, software) become rows,
// never words of one header cell.
func TestTransposeNamesColumnsByTheRowsKey(t *testing.T) {
	wide := func(rows ...[]string) *table {
		tb := &table{head: []string{"Relay", "URL", "Software"}, left: map[int]bool{1: true, 2: true}}
		for i := range 14 {
			tb.head = append(tb.head, "Figure"+strings.Repeat("x", i))
		}
		for _, r := range rows {
			for range 14 {
				r = append(r, "123,456,789")
			}
			tb.add(r...)
		}
		return tb
	}
	const url = "ws://127.0.0.1:7777"
	tb := wide([]string{url, url, "khatru v0.19.1, native store"})
	tb.fitPage()
	if !slices.Equal(tb.head, []string{"Relay", url}) {
		t.Errorf("one relay: transposed header %q, want [Relay %s]", tb.head, url)
	}
	if len(tb.rows) < 2 || cell(tb.rows[0], 0) != "URL" || cell(tb.rows[1], 0) != "Software" || cell(tb.rows[1], 1) != "khatru v0.19.1, native store" {
		t.Errorf("one relay: URL and Software are not rows of their own: %q", tb.rows[:min(2, len(tb.rows))])
	}

	tb = wide([]string{"strfry", "burst", "x"}, []string{"strfry", "background", "x"})
	tb.fitPage()
	if !slices.Equal(tb.head, []string{"Relay, URL", "strfry burst", "strfry background"}) {
		t.Errorf("one relay, two groups: transposed header %q, want the relay and its group naming each column", tb.head)
	}
}
