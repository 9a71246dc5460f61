package live

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/relaybench/relaybench/results"
)

// Exposition is the State's figures in the Prometheus text exposition
// format (version 0.0.4). Finished phases give their exact figures (the
// results file's), labelled with their name; the phase in flight gives
// the live ones under phase="current", which are replaced by the
// finished phase's when it ends.
//
// Latencies are classic histograms (_bucket{le}, _sum, _count): native
// histograms cannot be written in the text format and need Prometheus's
// experimental feature flag, while classic buckets are read by every
// Prometheus, remote-write receiver and Grafana panel. The buckets are cut
// from the same HDR histograms the report reads, at their precision (1%
// for the phase in flight, 0.1% for a finished phase).
func (s *State) Exposition() []byte { return s.collect().text() }

// collect gathers every family of the exposition.
func (s *State) collect() *expo {
	ledgers, _ := s.snapshotWatched()
	cur, curReq := inFlight(ledgers)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := &expo{}
	base := labels{{"run", s.opt.Run}, {"relay", s.relay}}
	e.family("relaybench_operations_total", "counter", "Operations that ended, by outcome (each operation ends in exactly one).")
	for _, f := range s.phases {
		l := f.labels(base)
		for _, a := range f.accounts {
			for i, n := range accountCounts(a) {
				e.sample("relaybench_operations_total", l.with("op", a.Op).with("outcome", outcomeNames[i]), float64(n))
			}
		}
	}
	cl := base.with("phase", "current").with("op", "all")
	if s.final == nil {
		for _, k := range outcomeNames {
			e.sample("relaybench_operations_total", cl.with("outcome", k), float64(cur[k]))
		}
	}
	st, inFlight := s.current(cur, curReq, len(ledgers) > 0)
	e.family("relaybench_operations_requested_total", "counter", requestedHelp)
	for _, f := range s.phases {
		for _, a := range f.accounts {
			e.sample("relaybench_operations_requested_total", f.labels(base).with("op", a.Op), float64(a.Requested))
		}
	}
	if s.final == nil {
		e.sample("relaybench_operations_requested_total", cl, float64(s.phaseRequested(st, inFlight, curReq, len(ledgers) > 0)))
	}
	s.latencyFamily(e, base)
	s.verificationFamily(e)
	s.relayFamily(e, base)
	s.gauges(e, base, st, inFlight)
	return e
}

// requestedHelp says what relaybench_operations_requested_total counts:
// under phase="current" the phase in flight's whole request, as the
// page's "requested" card counts it, not only the operations booked so
// far.
const requestedHelp = `Operations requested: a finished phase's by op; phase="current" the whole request of the phase in flight (its announced plan, e.g. all of mixed's parts and its read-back, from when it is announced), not only the operations under way.`

// latencyFamily writes the latency histograms (s.mu held).
func (s *State) latencyFamily(e *expo, base labels) {
	e.family("relaybench_latency_seconds", "histogram", "Latency of the operations (ok: EVENT to OK, eose: REQ to EOSE, …; live: the phase in flight).")
	for _, f := range s.phases {
		l := f.labels(base)
		for _, name := range slices.Sorted(maps.Keys(f.latency)) {
			e.histogram("relaybench_latency_seconds", l.with("latency", name), f.latency[name])
		}
	}
	if s.final == nil && s.curLat.Count() > 0 {
		e.histogram("relaybench_latency_seconds", base.with("phase", "current").with("latency", "live"), toClassic(s.curLat))
	}
}

// verificationFamily writes what the finished phases' verifications found
// (s.mu held).
func (s *State) verificationFamily(e *expo) {
	e.family("relaybench_verification_checked_total", "counter", "Answers checked against what the relay accepted.")
	s.eachVerified(func(l labels, v *results.Verification) {
		e.sample("relaybench_verification_checked_total", l, float64(v.Checked))
	})
	e.family("relaybench_verification_faults_total", "counter", "Events wrong in the answers checked, by fault.")
	s.eachVerified(func(l labels, v *results.Verification) {
		for _, c := range []struct {
			k string
			n int64
		}{{"missing", v.Missing}, {"extra", v.Extra}, {"not_matching", v.NotMatching}, {"invalid", v.Invalid}, {"duplicated", v.Duplicated}} {
			e.sample("relaybench_verification_faults_total", l.with("fault", c.k), float64(c.n))
		}
	})
	e.family("relaybench_verification_found_total", "counter", "Faults the verifier found so far, as it found them (the phase in flight's too): events invalid, not matching or duplicated as they came, missing or extra as answers were judged.")
	for _, rf := range s.foundOf(s.relay) {
		base := labels{{"run", s.opt.Run}, {"relay", rf.relay}}
		for i, k := range foundLabels {
			e.sample("relaybench_verification_found_total", base.with("kind", k), float64(rf.n[i]))
		}
	}
	e.family("relaybench_verification_failed", "gauge", "1 when the phase's verification failed.")
	s.eachVerified(func(l labels, v *results.Verification) {
		failed := 0.0
		if v.Status() == results.VerificationFailed {
			failed = 1
		}
		e.sample("relaybench_verification_failed", l, failed)
	})
}

// relayFamily writes the relay's own counts beside relaybench's bounds
// (s.mu held).
func (s *State) relayFamily(e *expo, base labels) {
	type row struct {
		l labels
		c results.RelayCheck
	}
	var rows []row
	for _, f := range s.phases {
		for _, c := range f.checks {
			rows = append(rows, row{f.labels(base).with("series", c.Series).with("what", c.What), c})
		}
	}
	if len(rows) == 0 {
		return
	}
	e.family("relaybench_relay_metric_count", "gauge", "The relay's own count over a finished phase's window, from its Prometheus metrics (merged overlapping segments: the least).")
	for _, r := range rows {
		e.sample("relaybench_relay_metric_count", r.l, r.c.Relay)
	}
	e.family("relaybench_relay_metric_bound", "gauge", "What relaybench bounds the relay's count by: low (what it saw accepted or answered), high (what it sent).")
	for _, r := range rows {
		e.sample("relaybench_relay_metric_bound", r.l.with("bound", "low"), float64(r.c.Low))
		e.sample("relaybench_relay_metric_bound", r.l.with("bound", "high"), float64(r.c.High))
	}
	e.family("relaybench_relay_metric_disagree", "gauge", "1 when the relay's own count is outside relaybench's bounds (a named difference, not a failure).")
	for _, r := range rows {
		d := 0.0
		if r.c.Disagree {
			d = 1
		}
		e.sample("relaybench_relay_metric_disagree", r.l, d)
	}
}

// eachVerified calls fn with each finished phase that has a verification
// (s.mu held).
func (s *State) eachVerified(fn func(l labels, v *results.Verification)) {
	base := labels{{"run", s.opt.Run}, {"relay", s.relay}}
	for _, f := range s.phases {
		if f.ver != nil {
			fn(f.labels(base), f.ver)
		}
	}
}

// gauges writes progress (st, the phase in flight, when inFlight) and
// resources (s.mu held).
func (s *State) gauges(e *expo, base labels, st step, inFlight bool) {
	e.family("relaybench_run_finished", "gauge", "1 once the run ended and its results file was written.")
	fin := 0.0
	if s.final != nil {
		fin = 1
	}
	e.sample("relaybench_run_finished", base, fin)
	if inFlight && s.final == nil {
		l := base.with("phase", "current").with("step", st.label)
		e.family("relaybench_phase_done", "gauge", "Operations of the phase in flight done so far (its progress).")
		e.sample("relaybench_phase_done", l, float64(st.done))
		e.family("relaybench_phase_planned", "gauge", "Operations the phase in flight plans (one that announces no progress of its own: the operations its ledgers booked as requested; mixed announces all its parts' operations and its read-back's REQs before the first part starts).")
		e.sample("relaybench_phase_planned", l, float64(st.total))
	}
	e.family("relaybench_client_cpu_seconds_total", "counter", "User and system CPU used by relaybench.")
	e.sample("relaybench_client_cpu_seconds_total", base, s.res.clientCPU)
	e.family("relaybench_client_resident_memory_bytes", "gauge", "Resident memory of relaybench.")
	e.sample("relaybench_client_resident_memory_bytes", base, float64(s.res.clientRSS))
	if s.res.relayOK {
		e.family("relaybench_relay_cpu_seconds_total", "counter", "User and system CPU of the relay's process since the run started.")
		e.sample("relaybench_relay_cpu_seconds_total", base, s.res.relayCPU)
		e.family("relaybench_relay_resident_memory_bytes", "gauge", "Resident memory of the relay's process.")
		e.sample("relaybench_relay_resident_memory_bytes", base, float64(s.res.relayRSS))
	}
}

// labels of a phase: the run's, with the phase's relay when it has one.
func (f phaseFigures) labels(base labels) labels {
	l := append(labels(nil), base...)
	if f.relay != "" {
		l[1].v = f.relay
	}
	return l.with("phase", f.name)
}

type label struct{ k, v string }

type labels []label

// with is l and k="v" (a new slice).
func (l labels) with(k, v string) labels {
	return append(append(labels(nil), l...), label{k, v})
}

// String writes {k="v",…} with each value escaped as the exposition
// format requires: backslash, double quote and line feed; invalid UTF-8
// replaced, since a value is whatever a relay or a user named.
func (l labels) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, x := range l {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(x.k)
		b.WriteString(`="`)
		b.WriteString(escapeLabel(x.v))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func escapeLabel(v string) string { return labelEscaper.Replace(sanitize(v)) }

// sanitize makes a label value valid UTF-8, as Prometheus requires.
func sanitize(v string) string { return strings.ToValidUTF8(v, "\uFFFD") }

// expo collects an exposition: families in order, each with its samples.
type expo struct{ fams []family }

type family struct {
	name, typ, help string
	samples         []expoSample
}

type expoSample struct {
	name string
	l    labels
	v    float64
}

func (e *expo) family(name, typ, help string) {
	e.fams = append(e.fams, family{name: name, typ: typ, help: help})
}

// sample adds a sample to the last family.
func (e *expo) sample(name string, l labels, v float64) {
	f := &e.fams[len(e.fams)-1]
	f.samples = append(f.samples, expoSample{name, l, v})
}

func (e *expo) histogram(name string, l labels, c classic) {
	for i, le := range bucketBounds {
		e.sample(name+"_bucket", l.with("le", strconv.FormatFloat(le, 'g', -1, 64)), float64(c.Counts[i]))
	}
	e.sample(name+"_bucket", l.with("le", "+Inf"), float64(c.Count))
	e.sample(name+"_sum", l, c.Sum)
	e.sample(name+"_count", l, float64(c.Count))
}

// text is the exposition in the text format.
func (e *expo) text() []byte {
	var b bytes.Buffer
	for _, f := range e.fams {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.typ)
		for _, s := range f.samples {
			fmt.Fprintf(&b, "%s%s %s\n", s.name, s.l, strconv.FormatFloat(s.v, 'g', -1, 64))
		}
	}
	return b.Bytes()
}
