package report

import (
	"fmt"
	"strings"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/results"
)

// briefLabel is how the brief summary shows one results key of a phase's
// counters or rates (the results file keeps the key as it is).
type briefLabel struct {
	label string // the label; "" leaves the figure to -v (internal or diagnostic)
	unit  string // a rate's unit when its key does not say it ("deliveries/second", "×")
	// restates are keys whose figure, when equal, makes this one say
	// nothing new (expected = deliveries: every expected delivery came).
	restates []string
	// head is a rate's table column head when "label (unit)" would read
	// unlike the query tables' "Queries/s" ("Searches/s")
	head string
}

// briefLabels is the brief summary's one table of labels: a key not in it
// is shown under its words ("Events counted"), as the full summary does.
var briefLabels = map[string]briefLabel{
	// subscribe
	"subscriber_frames":  {},
	"subscriber_reads":   {},
	"expected":           {label: "Deliveries expected", restates: []string{"deliveries"}},
	"fanout":             {label: "Deliveries per event"},
	"deliveries_per_sec": {label: "Delivery rate", unit: "deliveries/second"},
	"events_per_sec":     {label: "Publish rate", unit: "events/second"},
	// sync
	"have_ids":        {label: "Ids only the client had (sum of syncs)"},
	"need_ids":        {label: "Ids only the relay had (sum of syncs)"},
	"round_trips_max": {},
	"round_trips_min": {},
	"delta_sent":      {label: "Delta events sent", restates: []string{"delta_accepted"}},
	"delta_accepted":  {label: "Delta events accepted"},
	"syncs_per_sec":   {label: "Sync rate", unit: "syncs/second", head: "Syncs/s"},
	// count
	"count_vs_req_p50":    {label: "COUNT p50 vs REQ p50", unit: "×"},
	"req_events_returned": {},
	"req_queries":         {},
	"count_exact":         {label: "Exact counts", restates: []string{"counts"}},
	"count_approximate":   {label: "Approximate counts"},
	"count_wrong":         {label: "Wrong counts"},
	"counts_per_sec":      {label: "COUNT rate", unit: "counts/second", head: "COUNTs/s"},
	// search
	"results_word":      {label: "Results holding the term as a word", restates: []string{"events_returned"}},
	"results_substring": {label: "Results holding the term inside a word"},
	"searches_per_sec":  {label: "Search rate", unit: "searches/second", head: "Searches/s"},
	// lifecycle (its notes say how many came before their OK)
	"delivered_before_ok": {},
	"sampled":             {},
	"found":               {label: "Readable by id"},
	"delivered":           {label: "Delivered live"},
	// burst
	"between_success_rate": {label: "Success between bursts"},
	"burst_success_rate":   {label: "Success in bursts"},
	"not_recovered":        {label: "Bursts not recovered"},
	// mixed
	"cut":                  {label: "Unsent when the part ended"},
	"machine_others_cores": {label: "Cores busy with other processes"},
	// subscribe, and every phase that reads answers
	"before_eose":                   {label: "Delivered before EOSE"},
	"foreign_oks":                   {label: "OKs for ids not sent"},
	"client_rss_idle_bytes":         {label: "Client memory, idle subscriptions"},
	"client_bytes_per_subscription": {label: "Client memory per subscription"},
	// query, clients
	"events_returned_per_sec": {label: "Event return rate", unit: "events/second"},
	"queries_per_sec":         {label: "Query rate", unit: "queries/second"},
	// load: what was planned, intended and sent says something only when
	// it differs from what was accepted
	"canceled":             {label: "Cancelled"}, // load's spelling, kept in its results files
	"ops_canceled":         {label: "Operations cancelled"},
	"planned":              {label: "Planned", restates: []string{"intended", "ops_accepted", "accepted"}},
	"intended":             {label: "Intended", restates: []string{"ops_accepted", "accepted"}},
	"ops_sent":             {label: "Operations sent", restates: []string{"ops_accepted"}},
	"ops_accepted":         {label: "Operations accepted", restates: []string{"accepted"}},
	"accepted_per_sec":     {label: "Accepted rate"},
	"intended_per_sec":     {label: "Intended rate"},
	"sent_per_sec":         {label: "Sent rate"},
	"ops_accepted_per_sec": {label: "Operations accepted rate", unit: "operations/second"},
	"ops_sent_per_sec":     {label: "Operations sent rate", unit: "operations/second"},
	"conn_lost":            {label: "Connection lost"},
	"ops_conn_lost":        {label: "Operations, connection lost"},
	"ops_timed_out":        {label: "Operations timed out"},
	"ops_failed":           {label: "Operations failed", restates: []string{"ops_conn_lost", "ops_timed_out"}},
	"ops_refused":          {label: "Operations refused"},
	"ops_not_run":          {label: "Operations not run"},
	"client_sched_p99":     {label: "Client scheduling wait p99"},                           // client_sched_p99_ns: runnable goroutines' wait for a CPU
	"failed":               {label: "Failed", restates: []string{"conn_lost", "timed_out"}}, // load's: timed out + connection lost
	// --load-constraints: the phase's note says what the limits did, the
	// run's error how the relay died
	"relay_oom_kills":             {label: "Relay processes OOM-killed"},
	"relay_cpu_throttled_periods": {label: "Relay CPU-throttled periods"},
}

// briefOmits reports whether the brief summary leaves figure k of p
// (counter or rate, of value v) to -v: the table says so, or it restates
// a figure it names.
func briefOmits(p *results.Phase, k string, v float64) bool {
	b, ok := briefLabels[k]
	if !ok {
		return false
	}
	if b.label == "" {
		return true
	}
	for _, r := range b.restates {
		if n, ok := p.Counts[r]; ok && float64(n) == v {
			return true
		}
	}
	return false
}

// briefCountLabel is the brief summary's label for counter k, else def.
func briefCountLabel(k, def string) string {
	if b, ok := briefLabels[k]; ok && b.label != "" {
		return b.label
	}
	return def
}

// briefRateLine is the brief summary's label and value for rate k of p
// (v its figure formatted, unit the unit rateLabel gave).
func briefRateLine(p *results.Phase, k, label, v, unit string) (string, string) {
	b, ok := briefLabels[k]
	if !ok {
		return label, strings.TrimSpace(v + " " + unit)
	}
	if b.unit != "" {
		unit = b.unit
	} else if opRates[k] && k != "intended_per_sec" && fmt.Sprint(p.Params["kind"]) == "mixed" {
		unit = "events/second" // a mixed load's accepted and sent are its events; queries have their own rate
	}
	if k == "count_vs_req_p50" {
		return b.label, countVsReq(p, v+unit)
	}
	if strings.HasPrefix(unit, "×") {
		return b.label, v + unit
	}
	return b.label, strings.TrimSpace(v + " " + unit)
}

// countVsReq is the value of count's "COUNT p50 vs REQ p50" with both
// figures it compares ("612µs vs 987µs (0.62×)"); ratio alone when p
// lacks either latency.
func countVsReq(p *results.Phase, ratio string) string {
	c, okC := latQ(p.Latency[results.LatencyCount], 50)
	r, okR := latQ(p.Latency["req_eose"], 50)
	if !okC || !okR {
		return ratio
	}
	return fmt.Sprintf("%s vs %s (%s)", fmtDur(float64(c)), fmtDur(float64(r)), ratio)
}

// phaseTitles are the phases whose name is not a title ("negentropy/delta").
var phaseTitles = map[string]string{"negentropy/initial": "Negentropy sync, initial overlap",
	"negentropy/delta": "Negentropy sync, delta", "negentropy/steady": "Negentropy sync, steady state"}

// groupTitles are the groups whose name is a results key, not words
// (lifecycle's stages).
var groupTitles = map[string]string{"ok": "OK", "deliver": "live delivery", "read_your_write": "read your write", "read_after_ok": "read after OK"}

// groupCell names group name in a table's Group column.
func groupCell(name string) string {
	if t, ok := groupTitles[name]; ok {
		return t
	}
	return name
}

// phaseCell names phase name in a table's Phase column: a sweep's point
// by its payload size ("sweep 1 KiB", not "sweep/1024"), as the sweep
// table and notes name it; any other phase by its name.
func phaseCell(name string) string {
	if size, ok := results.SweepSize(name); ok && results.IsSweepPhase(name) {
		return "sweep " + fmtPayload(float64(size))
	}
	return name
}

// briefOmitsHead reports whether a table's column h is a figure
// briefLabels leaves to -v ("Req events returned").
func briefOmitsHead(h string) bool {
	for k, b := range briefLabels {
		if b.label == "" && (countHead(k) == h || rateHead(k) == h) {
			return true
		}
	}
	return false
}

// keyAcronyms are the words of results keys that are written as
// acronyms ("eose_p50_ratio" → "EOSE p50 ratio").
var keyAcronyms = map[string]string{"ok": "OK", "oks": "OKs", "eose": "EOSE", "cpu": "CPU", "req": "REQ", "reqs": "REQs",
	"rss": "RSS", "oom": "OOM", "nip": "NIP", "id": "ID", "ids": "IDs"}

// humanName turns a results key into words: "timed_out" → "timed out",
// acronyms as such ("eose_p50_ratio" → "EOSE p50 ratio", "client_cpu_p50"
// → "client CPU p50"), a rate's "per sec" as "/s" ("events_per_sec_alone"
// → "events/s alone").
func humanName(k string) string {
	words := strings.Split(k, "_")
	out := make([]string, 0, len(words))
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == "per" && i+1 < len(words) && words[i+1] == "sec" && len(out) > 0 {
			out[len(out)-1] += "/s"
			i++
			continue
		}
		if a, ok := keyAcronyms[w]; ok {
			w = a
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// figureLabel names counter or rate k wherever a report shows it (the
// summaries' lines, the tables' headers): briefLabels' label, else the
// key's words ("Events returned"). Results files keep the key.
func figureLabel(k string) string {
	if b, ok := briefLabels[k]; ok && b.label != "" {
		return b.label
	}
	return title(humanName(k))
}

// isBytes reports whether counter k counts bytes ("bytes_sent",
// "client_rss_idle_bytes", "client_bytes_per_subscription").
func isBytes(k string) bool {
	return strings.HasPrefix(k, "bytes_") || strings.HasSuffix(k, "_bytes") || strings.Contains(k, "_bytes_")
}

// countHead is counter k's column header: its label without the unit its
// cells carry ("Recovery" for "recovery_ns", its cells durations).
func countHead(k string) string {
	switch {
	case strings.HasSuffix(k, "_ns"):
		return figureLabel(strings.TrimSuffix(k, "_ns"))
	case strings.HasSuffix(k, "_us"):
		return figureLabel(strings.TrimSuffix(k, "_us"))
	case strings.Contains(k, "_us_"): // client_cpu_us_p50
		return figureLabel(strings.Replace(k, "_us_", "_", 1))
	}
	return figureLabel(k)
}

// rateHead is rate k's column header with its unit: "Publish rate
// (events/s)", "Events returned/s", "MB/s"; a share or ratio has its unit
// in the cell ("99.95%", "0.67×").
func rateHead(k string) string {
	if k == results.RateMB {
		return "MiB/s"
	}
	base, perSec := strings.CutSuffix(k, "_per_sec")
	b, ok := briefLabels[k]
	switch {
	case !perSec || ok && strings.HasPrefix(b.unit, "×"):
		return figureLabel(k)
	case b.head != "":
		return b.head
	case ok && b.label != "" && b.unit != "":
		return b.label + " (" + strings.Replace(b.unit, "/second", "/s", 1) + ")"
	case ok && b.label != "":
		return strings.TrimSuffix(b.label, " rate") + "/s" // "Accepted rate" → "Accepted/s"
	}
	return title(humanName(base)) + "/s"
}

// rateFmt formats rate k in a table: a share of successes ("success_rate",
// 0 to 1) in percent, a ratio with its "×", any other rate per second.
func rateFmt(k string) func(float64) string {
	if isShare(k) {
		return fmtShare
	}
	if k == results.RateMB {
		return func(v float64) string { return fmtMiBps(mibps(v)) } // under "MiB/s" (rateHead)
	}
	if b, ok := briefLabels[k]; ok && strings.HasPrefix(b.unit, "×") {
		return func(v float64) string { return numfmt.Ratio(v) + b.unit } // three significant digits: 11.8×, 0.70×
	}
	return fmtRate
}

// A latency kept both ways is timed from the schedule's intended send time
// (corrected for coordinated omission: a stalled client or relay shows up
// in it) or from the actual send. Load and find-max keep the corrected one
// as "ok" and the other as "ok_uncorrected"; burst and mixed keep "ok"
// from the actual send and the other as "ok_from_intended".
const (
	fromIntended = "from intended send time"
	fromActual   = "from actual send time"
)

// latencyTiming says from when latency n of lats is timed when lats keeps
// it both ways: fromIntended or fromActual; "" when it is kept one way
// only (the phase's notes say how it is timed).
func latencyTiming(lats map[string]*results.Histogram, n string) string {
	switch {
	case strings.HasSuffix(n, "_from_intended") || lats[n+"_uncorrected"] != nil:
		return fromIntended
	case strings.HasSuffix(n, "_uncorrected") || lats[n+"_from_intended"] != nil:
		return fromActual
	}
	return ""
}

// latencyBase is latency n without the suffix that says how it is timed
// ("ok_uncorrected", "ok_from_intended" → "ok").
func latencyBase(n string) string {
	for _, s := range []string{"_uncorrected", "_from_intended"} {
		if b, ok := strings.CutSuffix(n, s); ok {
			return b
		}
	}
	return n
}

// latencyTitles are the summary's lines for the latencies that are not
// "X Latency": the send lateness of open-loop loads, burst's recovery.
var latencyTitles = map[string]string{
	"recovery":          "Recovery Time",
	"lateness":          "Lateness (actual − intended send time)",
	"send_lateness":     "Lateness (actual − intended send time)",
	"lateness_dispatch": "Lateness, dispatcher's share",
}

// timingLead is the line a table of latency columns names, under its
// title, when they are timed from the intended send time ("OK latency
// (from intended send time): …"); "" when none is.
func timingLead(lats map[string]*results.Histogram, names []string) string {
	var ls []string
	for _, n := range names {
		if latencyTiming(lats, n) == fromIntended {
			ls = append(ls, latencyLabel(n))
		}
	}
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, " and ") + " latency (" + fromIntended + "): each operation is timed from when the schedule " +
		"meant to send it, so a send held up by the client or the relay counts (corrected for coordinated omission)"
}
