package live

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/sysinfo"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/report"
	"github.com/relaybench/relaybench/results"
)

// tickBase is what the previous point measured, for rates.
type tickBase struct {
	t        int64 // mono
	accepted int64
	cpu      float64      // client CPU seconds
	relayCPU float64      // relay CPU seconds at the last reading
	relayBy  *relayReader // the reader of that reading
}

// resources are the last CPU and memory readings, totals for /metrics.
type resources struct {
	clientCPU, relayCPU float64 // seconds so far (relay: since its first reading)
	clientRSS, relayRSS int64
	relayOK             bool
}

// message is what one server-sent event carries.
type message struct {
	Point    *Point         `json:"point,omitempty"`
	History  []Point        `json:"history,omitempty"`
	Phases   []PhaseSummary `json:"phases"`
	Failures []string       `json:"failures"`
	// Found is the faults the verifier found so far, by kind, as it found
	// them (the phase in flight's too); Examples the first few.
	Found    map[string]int64 `json:"found"`
	Examples []string         `json:"found_examples"`
	Finished bool             `json:"finished"`
	// Report is the run's HTML report, in the message that says the run
	// finished: the page shows it without asking the server again (which
	// stops when the run ends, unless --web-keep).
	Report string `json:"report,omitempty"`
	Run    string `json:"run"`
	Relay  string `json:"relay"`
}

// Tick takes one point: the ledgers' counts, the latencies of the series'
// newly completed seconds, the CPU and memory; keeps it in the history and
// sends it to every page. The server calls it once a second.
func (s *State) Tick() {
	s.tickMu.Lock()
	defer s.tickMu.Unlock()
	s.tick()
}

// tick is Tick (s.tickMu held: no two ticks, nor a tick and a phase's
// end, read the same seconds of a series).
func (s *State) tick() {
	now := mono.Now()
	ledgers, series := s.snapshotWatched()
	counts, req := inFlight(ledgers)
	secs, next := newSeconds(series, now)
	cpu, rss := cpuSecs(), sysinfo.RSS()
	rr := s.relayUse.Load()
	var relayCPU float64
	var relayRSS int64
	relayOK := false
	if rr != nil {
		relayCPU, relayRSS, relayOK = rr.read()
	}

	s.mu.Lock()
	if s.closed || s.final != nil {
		s.mu.Unlock()
		return
	}
	s.advance(series, next)
	for _, k := range secs {
		s.curLat.Merge(k.h)
	}
	secs, s.pending = mergeKinds(s.pending, secs), nil // a phase's last seconds, before these
	p := s.point(now, counts, req, len(ledgers) > 0, secs)
	s.sampleResources(&p, now, cpu, rss, relaySample{rr, relayCPU, relayRSS, relayOK})
	s.last.t, s.last.accepted, s.last.cpu = now, p.Outcomes["accepted"], cpu
	s.keepPoint(p)
	msg := s.messageLocked(&p, nil)
	s.mu.Unlock()
	s.broadcast(msg)
}

// kindSeconds is the latency of one kind (what its series time) over
// the seconds newly completed.
type kindSeconds struct {
	of string
	h  *metrics.Histogram
}

// newSeconds reads the series' newly completed seconds, kind by kind in
// the order the series came (OK and EOSE are never one distribution), and
// where each series' next read starts.
func newSeconds(series []watchedSeries, now int64) ([]kindSeconds, []int) {
	var secs []kindSeconds
	next := make([]int, len(series))
	for i, w := range series {
		of := w.s.Timing()
		if of == "" {
			of = latencyUnsaid
		}
		j := slices.IndexFunc(secs, func(k kindSeconds) bool { return k.of == of })
		if j < 0 {
			j = len(secs)
			secs = append(secs, kindSeconds{of: of, h: metrics.NewCoarse()})
		}
		next[i] = w.s.LatencySeconds(secs[j].h, w.next, now)
	}
	return secs, next
}

// advance stores where each series' next read starts (s.mu held); the
// list may have been let go (PhaseDone) meanwhile.
func (s *State) advance(series []watchedSeries, next []int) {
	for i := range s.series {
		if i < len(series) && s.series[i].s == series[i].s {
			s.series[i].next = next[i]
		}
	}
}

// point builds the point of now (s.mu held): finished phases plus the
// phase in flight. The phase in flight's requested is its whole announced
// plan from when it announces it (mixed's three parts and read-back), not
// only what the ledgers of the parts started so far booked, so that the
// "requested" card never counts fewer than the progress bar's total.
func (s *State) point(now int64, counts map[string]int64, req int64, measuring bool, secs []kindSeconds) Point {
	p := Point{T: s.elapsed(now), Outcomes: counts, Requested: req}
	if st, ok := s.current(counts, req, measuring); ok {
		p.Phase, p.Done, p.Total, p.Of = st.label, st.done, st.total, st.of
		p.Requested = s.phaseRequested(st, ok, req, measuring)
	}
	for _, f := range s.phases {
		m, r := f.totals()
		for k, v := range m {
			p.Outcomes[k] += v
		}
		p.Requested += r
	}
	s.rates(&p, now)
	p.Lat = latencyOf(secs)
	return p
}

// rates puts into p the accepted operations per second since the last
// point and the whole run's average so far (s.mu held): from the tick
// before the first accepted operation, so that what came before any
// operation (signing the corpus, waiting for --start-at) does not count.
func (s *State) rates(p *Point, now int64) {
	acc := p.Outcomes["accepted"]
	if dt := float64(now-s.last.t) / 1e9; dt > 0 {
		p.Rate = float64(max(0, acc-s.last.accepted)) / dt
	}
	if acc > 0 && s.opsFrom == 0 {
		s.opsFrom = max(s.last.t, 1)
	}
	if dt := float64(now-s.opsFrom) / 1e9; s.opsFrom != 0 && dt > 0 {
		p.AvgRate = float64(acc) / dt
	}
}

// phaseRequested is the phase in flight's requested operations (st, ok:
// its step; s.mu held): its whole announced plan from when it announces
// one, else what its ledgers booked as requested (req). The page's
// "requested" card and relaybench_operations_requested_total{phase=
// "current"} both count it.
func (s *State) phaseRequested(st step, ok bool, req int64, measuring bool) int64 {
	if ok && s.announcesPlan(measuring) {
		return max(req, st.total)
	}
	return req
}

// announcesPlan says whether the progress in flight announces a plan of
// operations (s.mu held): one announced while a workload is under way or
// its ledgers are followed. Before any (signing the corpus, a wait for
// --start-at) it counts events signed or seconds waited, no operation.
func (s *State) announcesPlan(measuring bool) bool {
	return s.prog.Load() != nil && (measuring || s.workload.Load() != nil)
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// relaySample is one reading of the relay's CPU and memory, by the
// reader that took it.
type relaySample struct {
	by  *relayReader
	cpu float64
	rss int64
	ok  bool
}

// sampleResources puts the CPU and memory into p and the totals (s.mu
// held). The relay's CPU total counts what each reading adds to the one
// before by the same reader: it never goes down (a process that left the
// tree unreaped) and goes on from the last relay's when another relay is
// read (SetRelayUsage).
func (s *State) sampleResources(p *Point, now int64, cpu float64, rss int64, r relaySample) {
	dt := float64(now-s.last.t) / 1e9
	s.res.clientCPU, s.res.clientRSS = cpu, rss
	p.ClientRSS = rss
	if dt > 0 {
		p.ClientCPU = (cpu - s.last.cpu) / dt
	}
	if !r.ok {
		return
	}
	if !s.res.relayOK || s.last.relayBy != r.by {
		s.res.relayOK, s.last.relayBy, s.last.relayCPU = true, r.by, r.cpu
	}
	added := max(0, r.cpu-s.last.relayCPU)
	if dt > 0 {
		p.RelayCPU = added / dt
	}
	s.last.relayCPU = max(s.last.relayCPU, r.cpu)
	s.res.relayCPU += added
	s.res.relayRSS = r.rss
	p.RelayRSS = r.rss
}

// keepPoint adds p to the history (s.mu held), one point every stride
// ticks; a full history drops every other point and doubles the stride,
// so a run of any length is kept whole at a coarser step. No latency is
// dropped with a point: a point kept stands for the ticks since the point
// kept before it, its latency theirs (mergeLat: their counts summed, the
// highest of their p50, p90, p99 and max).
func (s *State) keepPoint(p Point) {
	s.ticks++
	s.carry = mergeLat(s.carry, p.Lat)
	if s.ticks%s.stride != 0 {
		return
	}
	p.Lat, s.carry = s.carry, nil
	if len(s.history) >= s.opt.HistoryCap {
		kept := s.history[:0]
		n := len(s.history)
		for i := 0; i < n; i += 2 {
			q := s.history[i]
			if i > 0 {
				q.Lat = mergeLat(s.history[i-1].Lat, q.Lat)
			}
			kept = append(kept, q)
		}
		if n%2 == 0 { // the last point is dropped: p stands for it too
			p.Lat = mergeLat(s.history[n-1].Lat, p.Lat)
		}
		clear(s.history[len(kept):])
		s.history = kept
		s.stride *= 2
	}
	s.history = append(s.history, p)
}

// messageLocked encodes one event (s.mu held).
func (s *State) messageLocked(p *Point, history []Point) []byte {
	m := message{Point: p, History: history, Failures: append([]string{}, s.failures...), Finished: s.final != nil,
		Run: s.opt.Run, Relay: s.relay}
	m.Found, m.Examples = s.foundSoFar()
	if s.final != nil {
		m.Report = string(s.final)
	}
	m.Phases = make([]PhaseSummary, 0, len(s.phases))
	for _, f := range s.phases {
		m.Phases = append(m.Phases, f.summary())
	}
	b, _ := json.Marshal(m) // encoding/json escapes <, > and & : safe inside the page
	return b
}

// Finish ends the live view with the run's results file: the exact
// figures of every phase replace the live ones, and the page gets the
// HTML report (the one `relaybench report --html` writes). It stops
// following ledgers and series; the latency of their seconds no point
// showed yet makes a last point.
func (s *State) Finish(f *results.File) {
	s.stopWatching()
	s.lastPoint()
	var buf bytes.Buffer
	if err := report.HTML(&buf, []*results.File{f}, report.Options{}); err != nil {
		buf.Reset()
		buf.WriteString("<!DOCTYPE html><p>No report: " + htmlEscape(err.Error()) + "</p>")
	}
	var figs []phaseFigures
	var phs []*results.Phase
	for ri := range f.Runs {
		r := &f.Runs[ri]
		for pi := range r.Phases {
			fg := figuresOf(&r.Phases[pi])
			fg.relay = relayName(r.Relay)
			figs, phs = append(figs, fg), append(phs, &r.Phases[pi])
		}
	}
	s.mu.Lock()
	s.ledgers, s.series, s.curLat, s.phases, s.failures = nil, nil, metrics.NewCoarse(), nil, nil
	for i, fg := range figs {
		s.addPhase(fg, phs[i])
	}
	if len(f.Runs) == 1 {
		s.relay = relayName(f.Runs[0].Relay)
	}
	s.final = buf.Bytes()
	msg := s.messageLocked(nil, nil)
	s.mu.Unlock()
	s.sendLast(msg) // each page's stream ends once it has written it (Server.Drain)
}

// lastPoint takes a point now when latency read at a phase's end (or
// not read yet) would otherwise never show: a run that ends within a
// tick of its last phase's end.
func (s *State) lastPoint() {
	s.tickMu.Lock()
	defer s.tickMu.Unlock()
	s.flushSeries()
	s.mu.Lock()
	due := len(s.pending) > 0 && latencyOf(s.pending) != nil
	s.mu.Unlock()
	if due {
		s.tick()
	}
}

// relayName is how a run's relay is labelled: its catalog name, else its URL.
func relayName(r results.Relay) string {
	if r.Name != "" {
		return r.Name
	}
	return r.URL
}

// Report is the final HTML report (nil while the run goes).
func (s *State) Report() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.final
}

// Finished says whether Finish was called.
func (s *State) Finished() bool { return s.Report() != nil }

func (s *State) stopWatching() {
	s.mu.Lock()
	un := s.unwatch
	s.unwatch = nil
	s.mu.Unlock()
	for _, f := range un {
		f()
	}
}

// cpuSecs is this process's user+system CPU in seconds.
func cpuSecs() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

var pageSize = int64(os.Getpagesize())

// procSample reads process pid's CPU seconds (its own and its reaped
// children's) and resident memory from /proc; ok is false when there is
// no such process to read.
func procSample(pid int) (cpu float64, rss int64, ok bool) {
	if pid <= 0 {
		return 0, 0, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')') // the command name may hold spaces and parentheses
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 22 { // fields from 3 (state) on: utime is 14, rss 24
		return 0, 0, false
	}
	var ticks int64
	for _, k := range []int{11, 12, 13, 14} {
		v, _ := strconv.ParseInt(f[k], 10, 64)
		ticks += v
	}
	pages, _ := strconv.ParseInt(f[21], 10, 64)
	return float64(ticks) / 100, pages * pageSize, true // USER_HZ is 100 on Linux
}
