package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/relaybench/relaybench/results"
)

// CSVHeader lists the columns CSV writes, one row per (run, phase) and one
// more per group of a phase (query shape, payload size). An empty cell means
// the results file does not hold that figure. Units: durations in seconds,
// latencies in nanoseconds, sizes in bytes, rates per second.
//
//	file                 1-based index of the results file given
//	command              subcommand that produced the file ("run", "compare")
//	started_at           start of the invocation, RFC 3339 UTC
//	relay, url           relay name (catalog name or URL) and URL
//	software, version    relay software and version from NIP-11
//	repeat               1-based repeat index (empty when not repeated)
//	phase, workload      phase name and the workload that produced it
//	group                group name (query shape, payload size); empty on the phase row
//	duration_s           timed window of the phase
//	sent … bytes_sent    the counters of that name
//	queries, events_returned
//	events_per_sec, mb_per_sec, queries_per_sec   the rates of that name
//	latency              name of the latency the lat_* columns describe ("ok", "eose", …)
//	lat_count … lat_max_ns   its sample count, mean, p50, p90, p99, p99.9, p99.99, max
//	verified, verification_passed   true/false; empty when the phase was not verified
//	verification_state   "passed", "partial" (validity and filter match alone passed: the status
//	                     says "partly verified"), "failed" or "not verified" (no answer checked)
//	checked … truncated  verification counts
//	client_limited       true when the client limited the figures
//	relay_cpu_s, relay_peak_rss, relay_data_bytes, client_cpu_s   resources
//	other_counts, other_rates   counters and rates not in a column, "name=value;…" (a reading under
//	                     its noise floor, the client memory of too few idle subscriptions, is left out as in
//	                     every format: the phase's note says it is not measurable; the results file keeps it)
//	other_latency        other latencies, "name:p50=ns,p99=ns;…"
//	status               "ok" or what a reader must know ("verification FAILED; client-limited")
//
// A conformance check is a row of its own: phase and workload
// "conformance", group the check's ID, duration_s its time, status its
// status (pass, FAIL, named, not announced, not run, unknown), and the
// columns below (empty on the other rows):
//
//	nip, level           the NIP and keyword (MUST, SHOULD, MAY) the check rests on
//	sentence             the NIP sentence, quoted
//	detail               what was seen (the relay's words escaped)
//	evidence             the frames sent (>) and received (<), one per line
var CSVHeader = []string{
	"file", "command", "started_at", "relay", "url", "software", "version", "repeat",
	"phase", "workload", "group", "duration_s",
	"sent", "accepted", "refused", "timed_out", "failed", "bytes_sent", "queries", "events_returned",
	"events_per_sec", "mb_per_sec", "queries_per_sec",
	"latency", "lat_count", "lat_mean_ns", "lat_p50_ns", "lat_p90_ns", "lat_p99_ns", "lat_p99.9_ns", "lat_p99.99_ns", "lat_max_ns",
	"verified", "verification_passed", "verification_state", "checked", "expected", "returned", "missing", "extra", "not_matching", "invalid", "duplicated", "truncated",
	"client_limited", "relay_cpu_s", "relay_peak_rss", "relay_data_bytes", "client_cpu_s",
	"other_counts", "other_rates", "other_latency", "status",
	"nip", "level", "sentence", "detail", "evidence",
}

var csvCounts = []string{results.CountSent, results.CountAccepted, results.CountRefused, results.CountTimedOut, results.CountFailed,
	results.CountBytesSent, results.CountQueries, results.CountEventsReturned}
var csvRates = []string{results.RateEvents, results.RateMB, results.RateQueries}

// CSV writes one flat row per (run, phase) and per (run, phase, group) of
// files, with the columns of CSVHeader.
func CSV(w io.Writer, files []*results.File) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for fi, f := range files {
		for ri := range f.Runs {
			r := &f.Runs[ri]
			for pi := range r.Phases {
				p := &r.Phases[pi]
				base := []string{strconv.Itoa(fi + 1), f.Command, csvTime(f), relayKey(&r.Relay), r.Relay.URL, r.Relay.Software, r.Relay.Version, csvRepeat(r.Repeat),
					p.Name, p.Workload}
				row := append(append([]string(nil), base...), "", csvNum(float64(p.Duration)/1e9, p.Duration > 0))
				row = append(row, csvFigures(p.Counts, p.Rates, p.Latency, p.Verification)...)
				row = append(row, strconv.FormatBool(p.ClientLimited))
				row = append(row, csvResources(p.Resources)...)
				row = append(row, csvOther(figureCounts(p.Counts), p.Rates, p.Latency)...)
				row = append(row, csvStatus(phaseStatus(p)), "", "", "", "", "")
				if err := cw.Write(csvRow(row)); err != nil {
					return err
				}
				for gi := range p.Groups {
					g := &p.Groups[gi]
					row := append(append([]string(nil), base...), g.Name, "")
					row = append(row, csvFigures(g.Counts, g.Rates, g.Latency, g.Verification)...)
					row = append(row, strconv.FormatBool(p.ClientLimited))
					row = append(row, "", "", "", "")
					row = append(row, csvOther(figureCounts(g.Counts), g.Rates, g.Latency)...)
					var st []string
					if s := verStatus(g.Verification); s != "" {
						st = append(st, s)
					}
					if p.ClientLimited {
						st = append(st, "client-limited")
					}
					row = append(row, csvStatus(st), "", "", "", "", "")
					if err := cw.Write(csvRow(row)); err != nil {
						return err
					}
				}
			}
			for ci := range r.Conformance {
				if err := cw.Write(csvRow(csvCheck(fi, f, r, &r.Conformance[ci]))); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvCheck is the row of one conformance check (see CSVHeader).
func csvCheck(fi int, f *results.File, r *results.Run, c *results.Check) []string {
	row := make([]string, len(CSVHeader))
	col := map[string]string{
		"file": strconv.Itoa(fi + 1), "command": f.Command, "started_at": csvTime(f), "relay": relayKey(&r.Relay), "url": r.Relay.URL,
		"software": r.Relay.Software, "version": r.Relay.Version, "repeat": csvRepeat(r.Repeat),
		"phase": "conformance", "workload": "conformance", "group": c.ID, "duration_s": csvNum(float64(c.Millis)/1e3, true),
		"status": checkLabel(c.Status), "nip": strconv.Itoa(c.NIP), "level": c.Level, "sentence": c.Sentence, "detail": c.Detail,
		"evidence": strings.Join(c.Evidence, "\n"),
	}
	for i, h := range CSVHeader {
		row[i] = col[h]
	}
	return row
}

// csvRow makes every cell of row safe (csvCell): names and reasons a relay
// sent cannot become a spreadsheet formula.
func csvRow(row []string) []string {
	for i, c := range row {
		row[i] = csvCell(c)
	}
	return row
}

func csvTime(f *results.File) string {
	if f.StartedAt.IsZero() {
		return ""
	}
	return f.StartedAt.UTC().Format("2006-01-02T15:04:05Z")
}

func csvRepeat(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func csvNum(v float64, ok bool) string {
	if !ok {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func csvInt(v int64, ok bool) string {
	if !ok {
		return ""
	}
	return strconv.FormatInt(v, 10)
}

func csvFigures(counts map[string]int64, rates map[string]float64, lat map[string]*results.Histogram, v *results.Verification) []string {
	var row []string
	for _, k := range csvCounts {
		n, ok := counts[k]
		row = append(row, csvInt(n, ok))
	}
	for _, k := range csvRates {
		x, ok := rates[k]
		row = append(row, csvNum(x, ok))
	}
	name := results.PrimaryLatency(lat)
	h := lat[name]
	if name == "" || h == nil {
		row = append(row, "", "", "", "", "", "", "", "", "")
	} else {
		row = append(row, name, csvInt(h.Count, true), csvNum(h.Mean, h.Count > 0))
		for _, q := range []float64{50, 90, 99, 99.9, 99.99} {
			x, ok := latQ(h, q)
			row = append(row, csvInt(x, ok))
		}
		row = append(row, csvInt(h.Max, h.Count > 0))
	}
	if v == nil {
		row = append(row, "", "", "", "", "", "", "", "", "", "", "", "")
	} else {
		// a partial check counted all but Expected, Missing and Extra
		// (known only against a model), as the tables show
		ok, counted := v.Verified, v.Verified || v.Checked > 0
		row = append(row, strconv.FormatBool(v.Verified), strconv.FormatBool(v.Status() == results.VerificationPassed), csvVerState(v),
			csvInt(v.Checked, counted), csvInt(v.Expected, ok), csvInt(v.Returned, counted), csvInt(v.Missing, ok), csvInt(v.Extra, ok),
			csvInt(v.NotMatching, counted), csvInt(v.Invalid, counted), csvInt(v.Duplicated, counted), csvInt(v.Truncated, counted))
	}
	return row
}

// csvVerState is the verification_state cell: the results file's state,
// "partial" for a pass of validity and filter match alone, which status
// calls "partly verified" and the summary "PASSED (partial)".
func csvVerState(v *results.Verification) string {
	if st := v.Status(); st != results.VerificationPassed || v.Verified {
		return st
	}
	return "partial"
}

func csvResources(r *results.Resources) []string {
	if r == nil {
		return []string{"", "", "", ""}
	}
	return []string{csvNum(r.RelayCPUSecs, r.RelayCPUSecs > 0), csvInt(r.RelayPeakRSS, r.RelayPeakRSS > 0),
		csvInt(r.RelayDataBytes, r.RelayDataBytes > 0), csvNum(r.ClientCPUSecs, true)}
}

func csvOther(counts map[string]int64, rates map[string]float64, lat map[string]*results.Histogram) []string {
	in := func(list []string, k string) bool {
		for _, x := range list {
			if x == k {
				return true
			}
		}
		return false
	}
	var oc, or, ol []string
	for _, k := range sortedKeys(counts) {
		if !in(csvCounts, k) {
			oc = append(oc, fmt.Sprintf("%s=%d", k, counts[k]))
		}
	}
	for _, k := range sortedKeys(rates) {
		if !in(csvRates, k) {
			or = append(or, k+"="+strconv.FormatFloat(rates[k], 'f', -1, 64))
		}
	}
	prim := results.PrimaryLatency(lat)
	names := sortedKeys(lat)
	sort.Strings(names)
	for _, k := range names {
		if k == prim || lat[k] == nil {
			continue
		}
		p50, ok50 := latQ(lat[k], 50)
		p99, ok99 := latQ(lat[k], 99)
		ol = append(ol, fmt.Sprintf("%s:count=%d,p50=%s,p99=%s", k, lat[k].Count, csvInt(p50, ok50), csvInt(p99, ok99)))
	}
	return []string{strings.Join(oc, ";"), strings.Join(or, ";"), strings.Join(ol, ";")}
}

func csvStatus(st []string) string {
	if len(st) == 0 {
		return "ok"
	}
	return strings.Join(st, "; ")
}
