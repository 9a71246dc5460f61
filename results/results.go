// Package results defines the raw results file: the contract between the
// measuring side (workloads) and the reporting side (report). Every report can
// be made again from a results file without running anything.
//
// The file is JSON. Its schema is versioned by Schema; readers refuse a
// version they do not know. Durations are nanoseconds (int64) unless a field
// name says otherwise; rates are per second; sizes are bytes.
package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/safe"
)

// SchemaVersion is the version of the results file format written by this
// build. Bump it on any incompatible change and document it in docs/results.md.
const SchemaVersion = "relaybench/results/v1"

// schemaPrefix starts the schema of every version of the format.
const schemaPrefix = "relaybench/results/"

// File is one results file: one invocation of relaybench (run, compare, a
// workload subcommand). A compare holds one Run per relay (and per repeat).
type File struct {
	Schema     string    `json:"schema"`
	Tool       Tool      `json:"tool"`
	Machine    Machine   `json:"machine"`
	Command    string    `json:"command"`        // subcommand, e.g. "run", "compare"
	Args       []string  `json:"args,omitempty"` // command line as given
	Title      string    `json:"title,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	// Interrupted is true when the run was stopped (Ctrl-C) before its end;
	// the figures are what was measured until then.
	Interrupted bool  `json:"interrupted,omitempty"`
	Runs        []Run `json:"runs"`
	// Thresholds are the pass/fail criteria given with --threshold or
	// --thresholds, evaluated at the end of the run (see package threshold).
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`
	// Verdict is the one judgement of the file (see package judge): the
	// exit status relaybench returned and why.
	Verdict *Verdict `json:"verdict,omitempty"`
	// Merged is set on a file relaybench merge made from the results files
	// of execution segments (see answers.go); Machine is then segment 0's.
	Merged *Merged `json:"merged,omitempty"`
}

// Verdict is the judgement of a run: its exit status and the reasons.
type Verdict struct {
	Status  int      `json:"status"`  // the process exit status (0, 3, 4, 130, …)
	Outcome string   `json:"outcome"` // "passed", "wrong answers", "incomplete", "interrupted", "error"
	Reasons []string `json:"reasons,omitempty"`
}

// ThresholdResult is one threshold evaluated for one relay: the figure's
// value (the median over the relay's runs when it was repeated), the limit
// and whether the value is within it. Durations are nanoseconds; a
// verification figure is 1 (passed) or 0 (failed).
type ThresholdResult struct {
	Threshold string  `json:"threshold"`       // as written, e.g. "publish.ok.p99<20ms"
	Relay     string  `json:"relay,omitempty"` // the relay's name (URL when unnamed)
	Figure    string  `json:"figure"`          // figure name, e.g. "publish.ok.p99"
	Op        string  `json:"op"`              // <, <=, >, >=, ==, !=
	Value     float64 `json:"value"`
	Limit     float64 `json:"limit"`
	Unit      string  `json:"unit"`           // "ns", "1/s", "count", "verdict"
	Runs      int     `json:"runs,omitempty"` // runs the value is the median of
	Passed    bool    `json:"passed"`
	// Error says why the threshold could not be evaluated (its figure or
	// relay is not in the results; it names what is): a usage error.
	Error string `json:"error,omitempty"`
}

// Tool identifies the relaybench build that measured.
type Tool struct {
	Name      string `json:"name"` // "relaybench"
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	GoVersion string `json:"go_version"`
	Signer    string `json:"signer,omitempty"` // "libsecp256k1" or "btcec"
}

// Machine describes where the run happened.
type Machine struct {
	Hostname string `json:"hostname,omitempty"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	Kernel   string `json:"kernel,omitempty"`
	CPUModel string `json:"cpu_model,omitempty"`
	Cores    int    `json:"cores"`
	MemBytes int64  `json:"mem_bytes,omitempty"`
}

// Run is the measurement of one relay (one target) with one corpus.
type Run struct {
	Relay  Relay    `json:"relay"`
	Corpus Corpus   `json:"corpus"`
	Repeat int      `json:"repeat,omitempty"` // 1-based index when a run is repeated
	Phases []Phase  `json:"phases"`
	Errors []string `json:"errors,omitempty"` // run-level failures (relay died, …)
	// Skipped says why this relay was not run at all (no binary, not
	// installed): relaybench could not do the requested work.
	Skipped string         `json:"skipped,omitempty"`
	Notes   []string       `json:"notes,omitempty"` // caveats a reader must see
	Params  map[string]any `json:"params,omitempty"`
	// Segment is set when this run was one execution segment (--segment
	// I/N) of a test split across instances; nil otherwise.
	Segment *Segment `json:"segment,omitempty"`
	// Conformance holds the conformance checks run against this relay
	// (relaybench conformance, compare --conformance), in the order they
	// ran; nil when none were asked for. See Check.
	Conformance []Check `json:"conformance,omitempty"`
}

// Segment says which share of a test a run did: instance Index (0-based)
// of Count. Corpus index i, query k, open-loop operation k and fresh event
// j belong to segment (i, k, j) mod Count; connection and subscriber counts
// are split with the remainder going to the first segments.
type Segment struct {
	Index int `json:"index"`
	Count int `json:"count"`
	// StartAt is --start-at, the common wall-clock start of the segments'
	// first timed window (nil when not given).
	StartAt *time.Time `json:"start_at,omitempty"`
	// StartLateNs is how late this instance's first timed window began
	// after StartAt, by its own wall clock (≥ 0): the wake-up lateness, or
	// the time set-up overran StartAt (a note then says so).
	StartLateNs int64 `json:"start_late_ns,omitempty"`
	// ClockOffsetNs estimates this instance's wall clock minus the relay's
	// (from the HTTP Date header of NIP-11 fetches timed around the
	// relay's second tick), within ±ClockOffsetErrNs. ClockOffsetSource
	// says how it was measured ("relay-date"); "" means not measured, and
	// ClockOffsetNs is then meaningless.
	ClockOffsetNs     int64  `json:"clock_offset_ns,omitempty"`
	ClockOffsetErrNs  int64  `json:"clock_offset_err_ns,omitempty"`
	ClockOffsetSource string `json:"clock_offset_source,omitempty"`
	// QueryAt is --query-at, the common wall-clock start of the query
	// phase (after every segment published); QueryLateNs is how late this
	// instance's query phase began after it (its own publishing or set-up
	// ended later: a note then says so).
	QueryAt     *time.Time `json:"query_at,omitempty"`
	QueryLateNs int64      `json:"query_late_ns,omitempty"`
}

// SegmentStartSpreadWarnNs is the spread of the segments' actual starts
// (StartAt + StartLateNs − ClockOffsetNs) above which a report flags them as
// not starting together.
const SegmentStartSpreadWarnNs = int64(100 * time.Millisecond)

// Relay describes the relay under test.
type Relay struct {
	Name    string `json:"name,omitempty"` // catalog name, e.g. "khatru-badger"; "" for a plain URL
	URL     string `json:"url"`
	Managed bool   `json:"managed,omitempty"` // started by relaybench
	// Build is what relaybench started, by its catalog's pinned versions
	// ("relayer v2.2.4, eventstore v0.16.0"): a relay's NIP-11 software and
	// version are its own claim ("~" for relayer).
	Build    string          `json:"build,omitempty"`
	Software string          `json:"software,omitempty"`  // from NIP-11
	Version  string          `json:"version,omitempty"`   // from NIP-11
	MaxLimit int             `json:"max_limit,omitempty"` // NIP-11 limitation.max_limit, 0 unknown
	NIP11    json.RawMessage `json:"nip11,omitempty"`
	LogFile  string          `json:"log_file,omitempty"`
	// Before is what the relay held when the run began, by a REQ
	// {"limit":1} sent before anything was published: "empty" (EOSE and
	// no event), "held" (an event came) or "unknown" (no EOSE: CLOSED,
	// timeout, connection lost). Not "empty": answers' events the run
	// never published are judged the relay's earlier data, not extra.
	// Files written before it existed lack it, and were judged as empty.
	Before string `json:"before,omitempty"`
}

// What a relay held when the run began (Relay.Before).
const (
	BeforeEmpty   = "empty"
	BeforeHeld    = "held"
	BeforeUnknown = "unknown"
)

// Corpus describes the events used.
type Corpus struct {
	Seed     int64   `json:"seed"`
	Events   int     `json:"events"`
	Authors  int     `json:"authors"`
	AvgSize  int     `json:"avg_size"`            // requested average content size
	Bytes    int64   `json:"bytes"`               // total wire JSON bytes of the events
	Key      string  `json:"key"`                 // cache key (hash of the parameters)
	Cached   bool    `json:"cached"`              // loaded from the disk cache
	SignSecs float64 `json:"sign_secs,omitempty"` // time spent signing (0 when cached)

	// The fields below describe a corpus read from a dump (--corpus FILE);
	// they are empty for a generated corpus. Events, Authors (distinct
	// pubkeys) and AvgSize then describe the dump after preparation; Seed
	// names the synthetic keys that sign fresh events for live workloads.

	// Source is the dump's file name.
	Source string `json:"source,omitempty"`
	// Fingerprint is the hex sha256 over the published ids in order: runs
	// with different fingerprints published different events.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Read is the number of dump lines (array elements) read; Dropped
	// counts those left out by reason (malformed, bad_id, bad_sig,
	// duplicate, ephemeral, deletion, expiring).
	Read    int            `json:"read,omitempty"`
	Dropped map[string]int `json:"dropped,omitempty"`
	// Kinds is the histogram of published events by kind.
	Kinds map[int]int `json:"kinds,omitempty"`
	// SizeP50, SizeP99 and SizeMax describe the wire JSON size per event.
	SizeP50 int `json:"size_p50,omitempty"`
	SizeP99 int `json:"size_p99,omitempty"`
	SizeMax int `json:"size_max,omitempty"`
	// FirstCreatedAt and LastCreatedAt bound the events' created_at.
	FirstCreatedAt int64 `json:"first_created_at,omitempty"`
	LastCreatedAt  int64 `json:"last_created_at,omitempty"`
	// Anchor is a generated corpus's anchor (unix seconds, the end of its
	// created_at window): with Seed, Events, Authors and AvgSize it rebuilds
	// the corpus (relaybench merge does).
	Anchor int64 `json:"anchor,omitempty"`
}

// Phase is one timed phase of a run: "publish", "query", "subscribe",
// "mixed", "burst", "lifecycle", "load", "sweep/<bytes>", … . Only the timed
// window is in Duration; set-up and tear-down are not.
type Phase struct {
	Name     string         `json:"name"`
	Workload string         `json:"workload"` // workload kind that produced it
	Params   map[string]any `json:"params,omitempty"`
	// Skipped is the one-line reason the phase's workload did not run on
	// this relay (it does not announce the NIP), "" when it ran. Files
	// written before it have params.skipped (read into it).
	Skipped string `json:"skipped,omitempty"`
	// Size is the content size in bytes of the fresh events the phase
	// published (a payload sweep's point, a live workload), 0 when it
	// published none of its own. Older files have a sweep point's size
	// only in its name, "sweep/<bytes>" (read into it).
	Size     int       `json:"size,omitempty"`
	Start    time.Time `json:"start"`
	Duration int64     `json:"duration_ns"`
	// SetupSecs is the time the phase spent outside its timed window before
	// (and, for a phase of several timed parts, between) them: dialling the
	// connections (a relay may hold its WebSocket upgrade back), opening
	// subscriptions. Neither Duration nor Resources cover it.
	SetupSecs float64 `json:"setup_secs,omitempty"`

	// Counts holds named counters. Common names: "sent", "accepted",
	// "refused", "timed_out", "failed", "bytes_sent", "bytes_received",
	// "queries", "events_returned", "deliveries", "dropped", "late".
	Counts map[string]int64 `json:"counts"`
	// Refused counts refusals by OK/CLOSED reason class (duplicate, blocked,
	// rate-limited, invalid, pow, restricted, error, auth-required, other).
	Refused map[string]int64 `json:"refused,omitempty"`
	// Rates holds derived per-second rates, e.g. "events_per_sec",
	// "mb_per_sec", "queries_per_sec". Always from Counts / Duration.
	Rates map[string]float64 `json:"rates,omitempty"`
	// Latency holds distributions by name: "ok" (EVENT→OK), "ok_uncorrected",
	// "eose" (REQ→EOSE), "deliver", "lateness", … .
	Latency map[string]*Histogram `json:"latency,omitempty"`
	// Groups holds per-group breakdowns, e.g. one per query shape or payload size.
	Groups []Group `json:"groups,omitempty"`
	// Series is a per-second time series of the phase.
	Series []Second `json:"series,omitempty"`
	// Verification of results against what the relay accepted.
	Verification *Verification `json:"verification,omitempty"`
	// Resources used by the relay's process tree and by the client.
	Resources *Resources `json:"resources,omitempty"`
	// RelayMetrics is what the relay's own Prometheus metrics
	// (--relay-metrics) say of the phase's timed window, read right before
	// and right after it: each counter's increase (a histogram's _count and
	// _sum too) and each gauge's value at the end, by series as the relay
	// names it.
	RelayMetrics map[string]float64 `json:"relay_metrics,omitempty"`
	// RelayChecks put the relay's own counts (RelayMetrics) beside the
	// bounds relaybench knows for them, each flagged when outside: a named
	// difference, never a failure.
	RelayChecks []RelayCheck `json:"relay_checks,omitempty"`
	// ClientLimited is true when the client, not the relay, limited the figure.
	ClientLimited bool `json:"client_limited,omitempty"`
	// Accounts say what became of every requested operation of the phase,
	// one account per kind of operation (see Account).
	Accounts []Account `json:"accounts,omitempty"`
	// Aborted is the one-line reason the phase stopped early ("" when it ran
	// to its end): the relay made no progress, every connection was lost,
	// the user interrupted.
	Aborted string   `json:"aborted,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	Errors  []string `json:"errors,omitempty"`
	// Stored and Answers are written by an execution segment (--segment)
	// for relaybench merge, which checks every segment's answers against
	// all segments' events (see answers.go): Stored is the set of corpus
	// indexes the relay stored (EncodeIndexSet), Answers the queries'
	// answers.
	Stored  string   `json:"stored,omitempty"`
	Answers []Answer `json:"answers,omitempty"`
	// Unknown (a segment's publish phase) is the set of corpus indexes sent
	// without a decisive answer (OK timed out, connection lost, cancelled):
	// the merge neither requires nor forbids them (EncodeIndexSet).
	Unknown string `json:"unknown,omitempty"`
	// Deliveries is written by an execution segment of the subscribe
	// workload for relaybench merge (see deliveries.go).
	Deliveries *LiveDeliveries `json:"live_deliveries,omitempty"`
	// PerSegment lists, in a merged file, each segment's own window,
	// resources and machine: resources are listed per machine, never summed.
	PerSegment []SegmentPart `json:"per_segment,omitempty"`
}

// Operation kinds an Account counts.
const (
	OpEvent    = "event"    // an EVENT published, ends with its OK
	OpQuery    = "query"    // a REQ, ends with EOSE
	OpDelivery = "delivery" // an expected live delivery of an accepted event to a subscription
	OpRead     = "read"     // a read-your-write REQ by id after an OK
	OpSub      = "sub"      // a live subscription, open until the phase ends
	OpCount    = "count"    // a NIP-45 COUNT, ends with the relay's COUNT answer
)

// Account is what became of every requested operation of one kind in a
// phase. Each operation ends in exactly one outcome, so
// Accepted+Refused+TimedOut+ConnLost+NotRun+Cancelled == Requested
// (Balanced). Accepted is the relay doing what was asked (OK true, EOSE,
// a valid delivery); Refused is the relay saying no, by reason class; TimedOut
// is no answer before the deadline; ConnLost is the connection dropping
// before an answer; NotRun is work never attempted, with why; Cancelled is
// work the user stopped (Ctrl-C), never the relay's fault.
type Account struct {
	Op        string           `json:"op"`
	Requested int64            `json:"requested"`
	Accepted  int64            `json:"accepted"`
	Refused   int64            `json:"refused"`
	TimedOut  int64            `json:"timed_out"`
	ConnLost  int64            `json:"conn_lost"`
	NotRun    int64            `json:"not_run"`
	Cancelled int64            `json:"cancelled"`
	RefusedBy map[string]int64 `json:"refused_by,omitempty"` // reason class → count
	NotRunBy  map[string]int64 `json:"not_run_by,omitempty"` // why → count
}

// Total is the number of operations with an outcome.
func (a Account) Total() int64 {
	return a.Accepted + a.Refused + a.TimedOut + a.ConnLost + a.NotRun + a.Cancelled
}

// Balanced reports whether every requested operation has exactly one outcome.
func (a Account) Balanced() bool { return a.Total() == a.Requested }

// Add adds b's operations and outcomes (and its refusal and not-run
// classes) to a; a keeps its Op.
func (a *Account) Add(b Account) {
	a.Requested += b.Requested
	a.Accepted += b.Accepted
	a.Refused += b.Refused
	a.TimedOut += b.TimedOut
	a.ConnLost += b.ConnLost
	a.NotRun += b.NotRun
	a.Cancelled += b.Cancelled
	a.RefusedBy = addCounts(a.RefusedBy, b.RefusedBy)
	a.NotRunBy = addCounts(a.NotRunBy, b.NotRunBy)
}

// addCounts adds src to dst, made when needed (nil when both are empty).
func addCounts(dst, src map[string]int64) map[string]int64 {
	for k, v := range src {
		if dst == nil {
			dst = map[string]int64{}
		}
		dst[k] += v
	}
	return dst
}

// Account returns the phase's account of operations op, or nil.
func (p *Phase) Account(op string) *Account {
	return firstOf(p.Accounts, func(a *Account) bool { return a.Op == op })
}

// firstOf points to the first element of s that is wanted, or is nil.
func firstOf[T any](s []T, wanted func(*T) bool) *T {
	for i := range s {
		if wanted(&s[i]) {
			return &s[i]
		}
	}
	return nil
}

// Group is a named breakdown inside a phase (a query shape, a payload size).
type Group struct {
	Name         string                `json:"name"`
	Counts       map[string]int64      `json:"counts,omitempty"`
	Rates        map[string]float64    `json:"rates,omitempty"`
	Latency      map[string]*Histogram `json:"latency,omitempty"`
	Verification *Verification         `json:"verification,omitempty"`
}

// Second is one point of a per-second time series. T is seconds since the
// phase start (the end of the one-second bucket is T+1). A phase shorter
// than 3 s has 100 ms buckets instead: WidthMs is then the bucket's width and
// AtMs its start in milliseconds since the phase start (T its whole seconds).
type Second struct {
	T        int              `json:"t"`
	AtMs     int64            `json:"at_ms,omitempty"`
	WidthMs  int64            `json:"width_ms,omitempty"`
	Counts   map[string]int64 `json:"counts,omitempty"` // e.g. "intended","sent","accepted","refused","dropped"
	Gauges   map[string]int64 `json:"gauges,omitempty"` // e.g. "in_flight"
	LatP50Ns int64            `json:"lat_p50_ns,omitempty"`
	LatP99Ns int64            `json:"lat_p99_ns,omitempty"`
	LatMaxNs int64            `json:"lat_max_ns,omitempty"`
}

// Verification counts how the relay's answers compare with what it should
// have returned given what it accepted. Verified is false when nothing could
// be checked (e.g. querying a relay whose contents relaybench did not write).
type Verification struct {
	Verified    bool  `json:"verified"`
	Checked     int64 `json:"checked"`      // answers (queries, subscriptions) checked
	Expected    int64 `json:"expected"`     // events that should have been returned/delivered
	Returned    int64 `json:"returned"`     // events returned/delivered
	Missing     int64 `json:"missing"`      // expected but not returned
	Extra       int64 `json:"extra"`        // returned, valid, matching, but not expected (e.g. not accepted by us)
	NotMatching int64 `json:"not_matching"` // returned but outside the filter
	Invalid     int64 `json:"invalid"`      // bad id, bad signature or malformed
	Duplicated  int64 `json:"duplicated"`   // returned more than once for one answer
	Misordered  int64 `json:"misordered,omitempty"`
	Truncated   int64 `json:"truncated,omitempty"` // answers cut by the relay's cap (not counted missing)
	// OverLimit: valid, matching events beyond a filter's limit (NIP-01
	// SHOULD: named, not failed; the newest `limit` were judged).
	OverLimit int64 `json:"over_limit,omitempty"`
	// StoredUnknown: events sent without a decisive answer (OK timed out,
	// connection lost, cancelled) that later answers returned: stored after
	// all, judged as accepted. Unknown events are never counted wrong.
	StoredUnknown int64 `json:"stored_unknown,omitempty"`
	// HeldBefore: events the run never published that answers returned,
	// from a relay that held events before the run began (Relay.Before):
	// judged its earlier data, stored, not extra.
	HeldBefore int64 `json:"held_before,omitempty"`
	// Passed is true only when State is "passed": answers were checked
	// and none failed. It is false when nothing was checked.
	Passed bool `json:"passed"`
	// State is "passed", "failed" or "not verified" (no answer was
	// checked: every REQ refused, none ended with EOSE, …). Files written
	// before it existed lack it; Status derives it for them.
	State     string   `json:"state,omitempty"`
	Semantics string   `json:"semantics,omitempty"` // "keeps superseded versions": the relay keeps older versions of replaceable events (NIP-01 MAY discard them), answers checked that way
	Notes     []string `json:"notes,omitempty"`
}

// Verification states (Verification.State).
const (
	VerificationPassed      = "passed"
	VerificationFailed      = "failed"
	VerificationNotVerified = "not verified"
)

// Status is v's state: "failed" when an answer failed a check, "not
// verified" when no answer was checked (zero answers is never a pass),
// "passed" otherwise. It reads Passed and Checked, so it also judges files
// written before State existed (passed with nothing checked is not
// verified), and a Verification whose State was never set.
func (v *Verification) Status() string {
	faults := v.Missing + v.Extra + v.NotMatching + v.Invalid + v.Duplicated
	switch {
	case v.State == VerificationFailed:
		return VerificationFailed
	case !v.Passed && (v.Checked > 0 || faults > 0):
		return VerificationFailed
	case v.Checked == 0:
		return VerificationNotVerified
	}
	return VerificationPassed
}

// Settle sets State to Status and Passed to whether it is "passed". It is
// idempotent; Write settles every verification of a file.
func (v *Verification) Settle() {
	v.State = v.Status()
	v.Passed = v.State == VerificationPassed
}

// Faults names what failed verification, e.g. "3 missing, 1 invalid"
// ("see the notes" when no count did).
func (v *Verification) Faults() string {
	if f := v.FaultCounts(); f != "" {
		return f
	}
	return "see the notes"
}

// FaultCounts is the counts of what failed verification, e.g. "3 missing,
// 1,200 invalid" ("" when every count is 0).
func (v *Verification) FaultCounts() string {
	var parts []string
	for _, c := range []struct {
		n    int64
		what string
	}{{v.Missing, "missing"}, {v.Extra, "extra"}, {v.NotMatching, "not matching the filter"}, {v.Invalid, "invalid"}, {v.Duplicated, "duplicated"}} {
		if c.n > 0 {
			parts = append(parts, numfmt.Group(c.n)+" "+c.what) // 466,020 as the summary prints it
		}
	}
	return strings.Join(parts, ", ")
}

// Fail marks v failed: another check it stands for failed.
func (v *Verification) Fail() {
	v.Passed, v.State = false, VerificationFailed
}

// settle settles the verifications of f's phases and groups.
func (f *File) settle() {
	for i := range f.Runs {
		for j := range f.Runs[i].Phases {
			p := &f.Runs[i].Phases[j]
			if p.Verification != nil {
				p.Verification.Settle()
			}
			for k := range p.Groups {
				if v := p.Groups[k].Verification; v != nil {
					v.Settle()
				}
			}
		}
	}
}

// Resources used during a phase.
type Resources struct {
	RelayCPUSecs   float64          `json:"relay_cpu_secs,omitempty"`   // user+sys of the relay's process tree
	RelayPeakRSS   int64            `json:"relay_peak_rss,omitempty"`   // bytes
	RelayDataBytes int64            `json:"relay_data_bytes,omitempty"` // size of the data dir after the phase
	ClientCPUSecs  float64          `json:"client_cpu_secs"`            // this process, user+sys
	ClientCPUUtil  float64          `json:"client_cpu_util,omitempty"`  // ClientCPUSecs / (duration × usable cores)
	Series         []ResourceSample `json:"series,omitempty"`
}

// ResourceSample is one sample of relay resource use.
type ResourceSample struct {
	T         float64 `json:"t"`         // seconds since phase start
	RelayCPU  float64 `json:"relay_cpu"` // cores busy since previous sample
	RelayRSS  int64   `json:"relay_rss"`
	ClientCPU float64 `json:"client_cpu"`
}

// Histogram is a latency distribution. HDR holds the full HdrHistogram in its
// V2 compressed, base64 encoding (readable by other HdrHistogram tools), so
// any percentile can be computed again and histograms merged; the other fields
// are a summary for readers that do not decode it. Values are nanoseconds.
type Histogram struct {
	Count       int64            `json:"count"`
	Min         int64            `json:"min_ns"`
	Max         int64            `json:"max_ns"`
	Mean        float64          `json:"mean_ns"`
	StdDev      float64          `json:"stddev_ns"`
	Percentiles map[string]int64 `json:"percentiles_ns"` // keys "50","90","95","99","99.9","99.99"
	HDR         string           `json:"hdr,omitempty"`
}

// Write writes f as indented JSON to path ("-" for stdout).
//
// Write never overwrites a results file: path must not exist (Reserve
// holds its name with a hidden file, see reserve.go), or be a file that
// holds none (a character device such as /dev/null, a FIFO: written as
// it is, writeSpecial). The JSON goes to a
// hidden temporary file in the same folder, which is then linked to path
// (an atomic step that fails if path exists), so a reader never sees half
// a file and no killed process leaves an invalid one; on any failure the
// temporary file is removed and path is left as it was. The reservation of
// path, if this process holds it, is released once path is written.
func Write(path string, f *File) error {
	f.Schema = SchemaVersion
	f.settle()
	data, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	data = append(data, '\n')
	if path == "-" {
		_, err = os.Stdout.Write(data)
		return err
	}
	switch st, err := os.Stat(path); {
	case err == nil && st.IsDir():
		return fmt.Errorf("write results: %s is a folder", path)
	case err == nil && !st.Mode().IsRegular():
		return writeSpecial(path, data)
	case err == nil:
		return fmt.Errorf("write results: %s exists: not overwritten", path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("write results: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), tempPrefix(path)+"*.tmp")
	if err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	if err := place(tmp.Name(), path); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	done = true
	os.Remove(tmp.Name())
	Release(path)
	return nil
}

// writeSpecial writes data to path, a file that is no results file (a
// character device such as /dev/null, a FIFO): nothing is overwritten, so
// it is opened as it is, neither created nor truncated.
func writeSpecial(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write results: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

// place gives the complete file tmp the name path without replacing a file
// there: a hard link (fails if path exists), or a rename after checking on
// a filesystem without hard links.
func place(tmp, path string) error {
	err := os.Link(tmp, path)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	if _, serr := os.Lstat(path); serr == nil {
		return &fs.PathError{Op: "write", Path: path, Err: fs.ErrExist}
	}
	return os.Rename(tmp, path)
}

// Read reads and checks a results file.
func Read(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: not a relaybench results file: %w", path, err)
	}
	switch {
	case f.Schema == "":
		return nil, fmt.Errorf("%s: not a relaybench results file (it has no \"schema\"; relaybench writes %q)", path, SchemaVersion)
	case !strings.HasPrefix(f.Schema, schemaPrefix):
		return nil, fmt.Errorf("%s: not a relaybench results file (its schema is %q; relaybench writes %q)", path, safe.Line(f.Schema), SchemaVersion)
	case f.Schema != SchemaVersion:
		return nil, fmt.Errorf("%s: results schema %q, this build reads %q", path, safe.Line(f.Schema), SchemaVersion)
	}
	f.upgrade()
	return &f, nil
}

// Phase returns the first phase named name, or nil.
func (r *Run) Phase(name string) *Phase {
	return firstOf(r.Phases, func(p *Phase) bool { return p.Name == name })
}

// RelayCheck is one of the relay's own counts (a series of its
// Prometheus metrics) beside the bounds relaybench knows for it.
type RelayCheck struct {
	Series string `json:"series"` // the relay's series
	What   string `json:"what"`   // what it counts, e.g. "events written"
	// Relay is the relay's count over the window. For merged segments
	// whose windows overlap it is the least the relay counted (the largest
	// segment's) and RelayMax the most (their sum); RelayMax is 0 when
	// Relay is exact.
	Relay    float64 `json:"relay"`
	RelayMax float64 `json:"relay_max,omitempty"`
	Low      int64   `json:"low"`  // relaybench: at least this (what it saw accepted or answered)
	High     int64   `json:"high"` // relaybench: at most this (what it sent)
	// Disagree: the relay's count cannot be within relaybench's bounds (a
	// named difference, not a failure: other clients of the relay count
	// there too, and a relay may count in its own way).
	Disagree bool `json:"disagree,omitempty"`
}
