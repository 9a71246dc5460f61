package results

import (
	"maps"
	"slices"
	"strings"
)

// Names of the figures (keys of Phase.Counts, Rates and Latency, and of a
// Group's) that are written by the workloads and read back by other
// packages (report, threshold, judge, merge, the CLI). A name is declared
// here once; a results file holds the strings, so a name never changes.
//
// A mixed load phase has both sides under these names (the events' and the
// queries'), and the totals of its operations as ops_accepted, ops_sent, …
// with their latency as "op".
const (
	CountSent           = "sent"            // EVENTs written
	CountAccepted       = "accepted"        // OK true
	CountRefused        = "refused"         // OK false / CLOSED
	CountTimedOut       = "timed_out"       // no answer before the deadline
	CountFailed         = "failed"          // REQs (COUNTs, searches) that did not end with EOSE (their answer)
	CountBytesSent      = "bytes_sent"      // EVENT message bytes written
	CountQueries        = "queries"         // REQs ended with EOSE
	CountEventsReturned = "events_returned" // events in the answers of those REQs
	CountDeliveries     = "deliveries"      // live deliveries accepted
	CountExpected       = "expected"        // live deliveries expected
	CountMissing        = "missing"         // live deliveries that never came
	CountCounts         = "counts"          // NIP-45 COUNTs answered
	CountSearches       = "searches"        // NIP-50 searches ended with EOSE

	// Protocol faults the judge reads.
	CountMalformedFrames         = "malformed_frames"
	CountUnmatchedOKs            = "unmatched_oks" // files written before foreign_oks
	CountForeignOKs              = "foreign_oks"
	CountUnsolicitedEvents       = "unsolicited_events"
	CountDeliveredUnacknowledged = "delivered_unacknowledged"
	CountAuthSent                = "auth_sent"
)

// Rates. Every X_per_sec rate of a phase is its count divided by the
// phase's timed window (Duration), the same for every workload: see
// PerSecond. A group's rate says over which time in docs/results.md (a
// query, COUNT or search shape: the time its own operations took, i.e. its
// rate on one connection; a find-max step: the step's window).
const (
	RateEvents         = "events_per_sec"          // accepted events
	RateSent           = "sent_per_sec"            // EVENTs written
	RateMB             = "mb_per_sec"              // EVENT bytes written, in MB
	RateQueries        = "queries_per_sec"         // REQs ended with EOSE
	RateEventsReturned = "events_returned_per_sec" // events in their answers
	RateDeliveries     = "deliveries_per_sec"      // live deliveries accepted
	RateCounts         = "counts_per_sec"          // NIP-45 COUNTs answered
	RateSearches       = "searches_per_sec"        // NIP-50 searches ended with EOSE
	RateSyncs          = "syncs_per_sec"           // NIP-77 reconciliations
	RateAchieved       = "achieved_per_sec"        // find-max: the rate a step achieved
	RateMsgs           = "msgs_per_sec"            // sweep: accepted events
	RateFanout         = "fanout"                  // deliveries expected per accepted event
	RateMaxRate        = "max_rate"                // find-max: the highest passing rate
	// RateOthersCores: a mixed part's group figure, the cores the
	// machine's other processes kept busy over the part (all of its busy
	// CPU from /proc/stat, less relaybench's and the relay's).
	RateOthersCores = "machine_others_cores"
)

// NoteOneSecond is in a mixed phase's note when the publish-alone part's
// OK p99 came from one of its seconds ("the part's p99 33.4ms is that
// second's"): the preload's tail in its first second, or one stall. A
// "faster together" against that baseline is no finding.
const NoteOneSecond = "is that second's"

// Latencies (keys of Latency).
const (
	LatencyOK         = "ok"          // EVENT → OK
	LatencyEOSE       = "eose"        // REQ → EOSE
	LatencyDeliver    = "deliver"     // EVENT sent → live delivery
	LatencyFirstEvent = "first_event" // REQ → its first EVENT
	LatencyCount      = "count"       // COUNT → its answer
	LatencyAuth       = "auth"        // NIP-42 AUTH → its OK, timed apart from the workload's
	LatencyOKRefused  = "ok_refused"  // EVENT → OK false, timed apart from ok
	// LatencyReqFirstEvent is first_event's name in count phases of files
	// written before first_event was used there: read, no longer written.
	LatencyReqFirstEvent = "req_first_event"
)

// PerSecond is the one definition of a phase's rate: n operations over the
// phase's timed window of windowNs nanoseconds (Phase.Duration); 0 when the
// window is empty.
func PerSecond(n int64, windowNs int64) float64 {
	if windowNs <= 0 {
		return 0
	}
	return float64(n) / (float64(windowNs) / 1e9)
}

// primaryRates and primaryLatencies are the figures a phase is judged by,
// in order of preference.
var (
	primaryRates     = []string{RateEvents, RateQueries, RateDeliveries, RateCounts, RateSearches, RateSyncs, RateAchieved}
	primaryLatencies = []string{LatencyOK, LatencyEOSE, LatencyDeliver}
)

// PrimaryRate is the rate a phase (or group) is judged by, the one
// threshold's PHASE.rate names and a report charts: the first of
// events_per_sec, queries_per_sec, deliveries_per_sec, counts_per_sec,
// searches_per_sec, syncs_per_sec and achieved_per_sec the phase has, else
// its first *_per_sec rate in sorted order (a ratio such as fanout or
// recall is never primary); "" when none.
func PrimaryRate(rates map[string]float64) string {
	for _, k := range primaryRates {
		if _, ok := rates[k]; ok {
			return k
		}
	}
	for _, k := range slices.Sorted(maps.Keys(rates)) {
		if strings.HasSuffix(k, "_per_sec") {
			return k
		}
	}
	return ""
}

// PrimaryLatency is the latency a phase (or group) is judged by, the one a
// bare statistic (PHASE.p99) names and a report shows first: the first of
// ok, eose and deliver the phase has (even with no values: a publish phase
// whose events were all refused has no OK latency, not another one), else
// the first name in sorted order but auth (the NIP-42 round trips, timed
// apart from the workload's); "" when none.
func PrimaryLatency(lat map[string]*Histogram) string {
	for _, k := range primaryLatencies {
		if lat[k] != nil {
			return k
		}
	}
	for _, k := range slices.Sorted(maps.Keys(lat)) {
		if k != LatencyAuth && lat[k] != nil {
			return k
		}
	}
	return ""
}
