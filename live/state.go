// Package live is a live view of a run while it goes: a State fed by the
// running workload (the outcome ledgers' counters, the latency histograms
// of the per-second series, the progress of each phase, the relay's and
// the client's CPU and memory, the phases as they finish), served over HTTP
// as a self-contained page updated by server-sent events and as a
// Prometheus /metrics endpoint, and ended with the run's HTML report.
//
// It never slows the measurement: the workload's own structures are read
// by copy (atomic loads of the ledgers, the series' completed seconds
// under the series' lock), once a second on the State's own goroutine;
// nothing on the measuring path waits for a reader, a page or a scrape.
package live

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
)

// Bounds: what a run of any length may make the State hold.
const (
	maxWatched  = 4096 // ledgers and series followed per phase in flight
	maxPhases   = 4096 // finished phases kept
	maxFailures = 200  // verification failures listed
	maxExamples = 10   // faults found while the run goes, shown one by one
	exampleLen  = 200  // bytes of a fault's example (the relay's bytes, a filter)
	historyCap  = 3600 // points kept; past it, every other one is dropped
)

// Options name the run in every output.
type Options struct {
	Run   string // the run's name (the results file's base name)
	Relay string // the relay under test (catalog name or URL); SetRelay changes it
	// Command names the phase in flight when nothing more precise does:
	// while a workload that announces no progress of its own (load)
	// measures, it shows under the workload's name (Workload), else
	// under Command, with the operations its ledgers ended of those
	// requested.
	Command string
	// HistoryCap bounds the points kept (0: historyCap).
	HistoryCap int
}

// Outcome names, as the page and /metrics give them.
var outcomeNames = []string{"accepted", "refused", "timed_out", "conn_lost", "not_run", "cancelled"}

var outcomeKinds = []outcome.Kind{outcome.Accepted, outcome.Refused, outcome.TimedOut, outcome.ConnLost, outcome.NotRun, outcome.Cancelled}

// Point is one second of the run, as the page draws it.
type Point struct {
	T         float64          `json:"t"` // seconds since the State started
	Phase     string           `json:"phase"`
	Done      int64            `json:"done"`
	Total     int64            `json:"total"`
	Of        string           `json:"of,omitempty"` // what Done and Total count, when Phase does not say
	Requested int64            `json:"requested"`
	Outcomes  map[string]int64 `json:"outcomes"` // the run's operations so far, by outcome
	Rate      float64          `json:"rate"`     // accepted operations per second since the last point
	// AvgRate is the whole run's accepted operations per second so far:
	// every accepted operation over the time since the tick before the
	// first one was seen (signing the corpus before it is no part of it).
	AvgRate float64 `json:"avg_rate"`
	// Latency of the operations completed in the last complete second(s),
	// one entry per kind the phase in flight times (OK, EOSE, delivery),
	// from the series' HDR histograms (fed the summary's values);
	// none when nothing completed.
	Lat       []Latency `json:"lat,omitempty"`
	RelayCPU  float64   `json:"relay_cpu"` // cores busy
	RelayRSS  int64     `json:"relay_rss"`
	ClientCPU float64   `json:"client_cpu"`
	ClientRSS int64     `json:"client_rss"`
}

// Latency is one kind of latency in a point, in ms.
type Latency struct {
	Of    string  `json:"of"` // what it times: metrics.TimesOK, TimesEOSE, TimesDelivery, or latencyUnsaid
	Count int64   `json:"count"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
}

// latencyUnsaid labels the latency of a series that does not say what it
// times (metrics.Series.Times): a load's, from each op's intended time to
// its answer.
const latencyUnsaid = "answer"

// PhaseSummary is a finished phase, as the page lists it.
type PhaseSummary struct {
	Name      string           `json:"name"`
	Relay     string           `json:"relay"`
	Outcomes  map[string]int64 `json:"outcomes"`
	Requested int64            `json:"requested"`
	// Ops splits Requested and Outcomes by operation when the phase booked
	// more than one kind (mixed: events, queries, read-backs), so that the
	// page does not add EVENTs and REQs into one figure; none otherwise.
	Ops          []OpFigures `json:"ops,omitempty"`
	Verification string      `json:"verification,omitempty"`
	// The relay's own metrics (--relay-metrics, a catalog relay's
	// metrics_path): its counts beside relaybench's bounds, and the notes
	// that say them.
	RelayChecks []results.RelayCheck `json:"relay_checks,omitempty"`
	RelayNotes  []string             `json:"relay_notes,omitempty"`
}

// OpFigures are one kind of a phase's operations: what they are (plural,
// "events", "queries", "read-backs"), requested, and by outcome.
type OpFigures struct {
	Op        string           `json:"op"`
	Requested int64            `json:"requested"`
	Outcomes  map[string]int64 `json:"outcomes"`
}

// watchedSeries is a series followed, with the next second to read.
type watchedSeries struct {
	s    *metrics.Series
	next int
}

// phaseProgress is the phase announced last by the progress display.
type phaseProgress struct {
	label string
	total int64
	done  atomic.Int64
}

// State is the live view of one run. Its feeds (Progress, the watched
// ledgers and series, PhaseDone, Finish) may be called from any goroutine.
type State struct {
	opt       Options
	started   int64 // mono
	prog      atomic.Pointer[phaseProgress]
	workload  atomic.Pointer[string] // the workload under way (Workload); nil between workloads
	part      atomic.Pointer[string] // the part of it under way (Part); nil: none said
	relayUse  atomic.Pointer[relayReader]
	found     [len(foundKinds)]atomic.Int64 // faults the verifier found so far, by kind
	examples  atomic.Int64                  // examples taken (at most maxExamples kept)
	exMu      sync.Mutex                    // guards exList only: never held by a tick's encoding
	exList    []string
	unwatch   []func()
	ticking   atomic.Bool
	tickQuit  chan struct{}
	tickDone  chan struct{}
	closeOnce sync.Once

	// tickMu orders the reads of the series' seconds: a tick, a phase's
	// end (PhaseDone) and the run's (Finish) never read one twice.
	tickMu sync.Mutex

	mu        sync.Mutex
	relay     string
	foundBase [len(foundKinds)]int64 // s.found when relay became the relay under test
	foundPast []relayFound           // the faults of each relay measured before it
	ledgers   []*outcome.Ledger
	series    []watchedSeries
	untracked int64
	curLat    *metrics.Histogram // the phase in flight's latencies so far
	phases    []phaseFigures
	failures  []string
	history   []Point
	pending   []kindSeconds // latency read at a phase's end, for the next point
	carry     []Latency     // latency of the ticks since the last point kept
	stride    int           // ticks per point kept (doubles when the history is thinned)
	ticks     int
	last      tickBase
	opsFrom   int64 // mono: the tick before the first accepted operation (0: none yet)
	res       resources
	final     []byte // the HTML report, once the run ended
	subs      map[chan []byte]struct{}
	closed    bool
}

// New starts a live view: from now on, every ledger and series made in
// this process feeds it, until Finish or Close.
func New(o Options) *State {
	if o.HistoryCap <= 0 {
		o.HistoryCap = historyCap
	}
	s := &State{opt: o, started: mono.Now(), relay: o.Relay, curLat: metrics.NewCoarse(), stride: 1,
		subs: map[chan []byte]struct{}{}, tickQuit: make(chan struct{}), tickDone: make(chan struct{})}
	s.last = tickBase{t: s.started, cpu: cpuSecs()}
	s.unwatch = []func(){outcome.Watch(s.watchLedger), metrics.WatchSeries(s.watchSeries), verify.WatchFaults(s.faultFound)}
	return s
}

func (s *State) watchLedger(l *outcome.Ledger) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ledgers) >= maxWatched {
		s.untracked++
		return
	}
	s.ledgers = append(s.ledgers, l)
}

func (s *State) watchSeries(se *metrics.Series) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.series) >= maxWatched {
		s.untracked++
		return
	}
	s.series = append(s.series, watchedSeries{s: se})
}

// SetRelay names the relay under test once it is known, and the process
// to sample for its CPU and memory (0: none, the relay is not ours).
func (s *State) SetRelay(name string, pid int) {
	var read func() (float64, int64, bool)
	if pid > 0 {
		read = func() (float64, int64, bool) { return procSample(pid) }
	}
	s.SetRelayUsage(name, read)
}

// relayReader reads the relay's CPU seconds so far and resident memory
// (ok false: not readable now).
type relayReader struct {
	read func() (cpuSecs float64, rss int64, ok bool)
}

// SetRelayUsage names the relay under test and what reads its CPU and
// memory (nil: none, the relay is not ours), e.g. its whole process tree
// (harness.Instance.Usage). A command measuring several relays one after
// another calls it for each: the CPU total goes on from the last one's.
func (s *State) SetRelayUsage(name string, read func() (cpuSecs float64, rss int64, ok bool)) {
	s.mu.Lock()
	if name != s.relay {
		if s.relay != "" { // before a relay is named nothing is verified
			s.foundPast = s.foundOf(s.relay)
		}
		s.foundBase = s.foundNow()
	}
	s.relay = name
	s.mu.Unlock()
	if read == nil {
		s.relayUse.Store(nil)
		return
	}
	s.relayUse.Store(&relayReader{read: read})
}

// Start ticks the State once a second (Tick) on its own goroutine, until
// Close.
func (s *State) Start() {
	if s.ticking.CompareAndSwap(false, true) {
		go func() {
			defer close(s.tickDone)
			t := time.NewTicker(time.Second)
			defer t.Stop()
			s.Tick()
			for {
				select {
				case <-s.tickQuit:
					return
				case <-t.C:
					s.Tick()
				}
			}
		}()
	}
}

// Close stops the ticks (waiting for the one under way) and stops
// following ledgers and series (Finish does that too).
func (s *State) Close() {
	s.closeOnce.Do(func() {
		close(s.tickQuit)
		if s.ticking.Load() {
			<-s.tickDone
		}
	})
	s.stopWatching()
}

// Progress is a progress tap (progress.Reporter.Tap): the phase label and
// total, then the running count, stored by one atomic write.
func (s *State) Progress(label string, total int64) func(done int64) {
	p := &phaseProgress{label: label, total: total}
	s.prog.Store(p)
	return func(done int64) { p.done.Store(done) }
}

// Workload names the workload starting now ("": the workload ended):
// until its phases are done (PhaseDone), it is the phase in flight
// whenever no progress was announced (Progress), with the operations its
// ledgers ended of those requested.
func (s *State) Workload(name string) {
	s.part.Store(nil)
	if name == "" {
		s.workload.Store(nil)
		return
	}
	s.workload.Store(&name)
}

// Part names the part of the workload under way starting now (mixed's
// "together (10s)"): the progress of the phase in flight says which part
// it has reached (mixed announces its whole plan before its first part,
// so the total is the plan's from the start).
func (s *State) Part(part string) { s.part.Store(&part) }

// step is the phase in flight as the page and /metrics show it.
type step struct {
	label       string
	done, total int64
	of          string // what done and total count, when the label does not say
}

// ofRequested is what a step's done and total count when the phase
// announced no progress of its own: its ledgers' operations. Requested is
// what the ledgers book: a load books its whole plan as it starts, so the
// words claim no "so far".
const ofRequested = "operations ended, of those requested"

// ofPart says which part of a workload in parts is under way (Part).
const ofPart = "now: %s"

// current is the phase in flight (ok false: none): the progress it
// announced, else the workload under way (Workload) or, while ledgers are
// followed (measuring), the command (Options.Command), with cur, the
// in-flight ledgers' operations by outcome, of curReq requested.
func (s *State) current(cur map[string]int64, curReq int64, measuring bool) (step, bool) {
	if pr := s.prog.Load(); pr != nil {
		return step{label: pr.label, done: pr.done.Load(), total: pr.total, of: s.partOf("")}, true
	}
	var booked int64
	for _, n := range cur {
		booked += n
	}
	label := s.opt.Command
	if w := s.workload.Load(); w != nil {
		label = *w
	} else if !measuring {
		label = "" // between phases
	}
	if label == "" {
		return step{}, false
	}
	return step{label: label, done: booked, total: curReq, of: s.partOf(ofRequested)}, true
}

// partOf is what a step's done and total count (what, "" when its label
// says), followed by the part under way when the workload named one.
func (s *State) partOf(what string) string {
	p := s.part.Load()
	if p == nil || s.workload.Load() == nil {
		return what
	}
	if what == "" {
		return fmt.Sprintf(ofPart, *p)
	}
	return what + "; " + fmt.Sprintf(ofPart, *p)
}

// PhaseDone records finished phases with their exact figures (the results
// file's): the ledgers and series followed so far were theirs and are let
// go, the latency of their seconds not read yet kept for the next point.
func (s *State) PhaseDone(phs ...results.Phase) {
	figs := make([]phaseFigures, 0, len(phs))
	for i := range phs {
		figs = append(figs, figuresOf(&phs[i]))
	}
	s.prog.Store(nil) // the phase in flight ended: the next one that counts says so again
	s.workload.Store(nil)
	s.tickMu.Lock()
	defer s.tickMu.Unlock()
	s.flushSeries() // its last seconds, for the next point
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ledgers, s.series, s.curLat = nil, nil, metrics.NewCoarse()
	for i, f := range figs {
		f.relay = s.relay // the relay it measured, whatever comes next
		s.addPhase(f, &phs[i])
	}
}

// addPhase keeps f and lists its verification failure (s.mu held).
func (s *State) addPhase(f phaseFigures, ph *results.Phase) {
	if len(s.phases) >= maxPhases {
		return
	}
	base, n := f.name, 1
	for s.hasPhase(f.relay, f.name) { // a name twice would be one series twice
		n++
		f.name = fmt.Sprintf("%s#%d", base, n)
	}
	s.phases = append(s.phases, f)
	if ph.Verification != nil && ph.Verification.Status() == results.VerificationFailed && len(s.failures) < maxFailures {
		s.failures = append(s.failures, failureLine(ph.Name, ph.Verification))
	}
}

// hasPhase says whether a finished phase of relay is called name (s.mu held).
func (s *State) hasPhase(relay, name string) bool {
	for _, f := range s.phases {
		if f.relay == relay && f.name == name {
			return true
		}
	}
	return false
}

// snapshotWatched copies the lists of what is followed (s.mu not held).
func (s *State) snapshotWatched() ([]*outcome.Ledger, []watchedSeries) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*outcome.Ledger(nil), s.ledgers...), append([]watchedSeries(nil), s.series...)
}

// inFlight sums the followed ledgers: operations by outcome, and requested.
func inFlight(ls []*outcome.Ledger) (map[string]int64, int64) {
	m := make(map[string]int64, len(outcomeNames))
	var req int64
	for _, l := range ls {
		for i, k := range outcomeKinds {
			m[outcomeNames[i]] += l.Count(k)
		}
		req += l.Requested()
	}
	return m, req
}

// History is the points so far (a copy).
func (s *State) History() []Point {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Point(nil), s.history...)
}

// Phases is the finished phases so far.
func (s *State) Phases() []PhaseSummary {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]PhaseSummary, 0, len(s.phases))
	for _, f := range s.phases {
		out = append(out, f.summary())
	}
	return out
}

// elapsed is the seconds since the State started at mono time t.
func (s *State) elapsed(t int64) float64 { return float64(t-s.started) / float64(time.Second) }
