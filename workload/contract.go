package workload

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/flagcheck"
	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/threshold"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/wire"
)

// The workload contract. A workload is a declaration registered once
// (Declare), from an init function in its own file (as k6 registers its
// executors):
//
//   - its options, a struct that embeds Base and declares every default
//     once, in a `default:"…"` tag on its field (read by applyDefaults here
//     and by the CLI's flags);
//   - a Run method on the options: draw the plan before the clock, open the
//     timed window (Base.open), run the workload's own loop over the engine
//     pieces (connection set, paced sender, REQ booker, per-shape
//     accumulator, the one verifier, the one ledger), close the window and
//     return its phases, built by Window.Phase.
//
// docs/adding-a-workload.md walks through adding one.

// Base is what every workload's options share.
type Base struct {
	// Timeout bounds each wait for an answer: an OK, an EOSE, a COUNT, a
	// NEG-MSG, a delivery (each workload's default is in its declaration).
	Timeout time.Duration `name:"timeout" default:"${timeout}" help:"${timeout_help=How long each wait for the relay's answer may last: an OK, an EOSE, a delivery.}"`
	// Seed drives every random choice (filter values, fresh content).
	Seed int64 `kong:"-"`
	// Dial configures the WebSocket connections.
	Dial wire.Options `kong:"-"`
	// Progress receives the number of operations done (nil: none).
	Progress func(done int64) `kong:"-"`
	// Begin samples the relay's resources over the timed window (nil: not
	// observed); see Sampler.
	Begin Sampler `kong:"-"`
}

// progress reports done operations when there is a progress reporter.
func (b Base) progress(done int64) {
	if b.Progress != nil {
		b.Progress(done)
	}
}

// Env is what a workload gets to run against a relay.
type Env struct {
	URL    string
	Corpus *corpus.Corpus
	Info   *nip11.Info    // nil when the relay serves no NIP-11 document
	Live   []*nostr.Event // what the relay should hold after the publish phase (nil if none ran)
	// Model is the publish phase's model of the relay, in both readings of
	// replaceable events (nil if none ran): Live is Model.Live. Its Unknown
	// events were sent without a decisive answer: a workload that verifies
	// against Live alone must neither require nor forbid them.
	Model *verify.Model
	// Progress makes a progress reporter (never nil when the runner calls).
	Progress func(label string, total int64) func(done int64)
	// Segment is this instance's share of the test (--segment; zero: all):
	// a workload runs the operations, fresh events, connections and
	// subscribers it owns (see corpus.Segment).
	Segment corpus.Segment
	// Sample starts sampling the relay's resources and returns the function
	// that ends it (nil when the relay is not ours to observe). A workload
	// passes it on (Base.Begin), to be started when its clock starts, after
	// dialling, and ended when the clock stops: a phase's resources cover
	// its timed window and nothing else.
	Sample Sampler
	// Log receives the lines a workload says outside its results (a skip on
	// a relay without its NIP); nil: none.
	Log io.Writer
}

// progressFor is env's progress reporter for label and total (nil: none).
func (env Env) progressFor(label string, total int64) func(done int64) {
	if env.Progress == nil {
		return nil
	}
	return env.Progress(label, total)
}

// source is what a corpus-driven workload draws its filters from: what the
// relay holds after the publish phase, else the corpus.
func (env Env) source() []*nostr.Event {
	if env.Live != nil || env.Corpus == nil {
		return env.Live
	}
	return env.Corpus.Events
}

// relayCap is the relay's announced max_limit (0: none announced).
func (env Env) relayCap() int {
	if env.Info == nil {
		return 0
	}
	return env.Info.Limitation.MaxLimit
}

// Workload is one timed workload with its options set, as the runner runs
// it after the publish and query phases. It returns one phase or several.
type Workload struct {
	Name string
	Run  func(ctx context.Context, env Env) ([]results.Phase, error)
	// Unsupported, when set, says in a few words why the workload cannot run
	// on a relay with this NIP-11 document (nil: none served), "" when it
	// can. When every workload of a run without queries says so, the corpus
	// is not published; Run still runs and reports the skip.
	Unsupported func(info *nip11.Info) string
}

// Config is a workload's options, ready to run: the options struct of a
// registered workload, with its defaults applied.
type Config interface {
	Run(ctx context.Context, env Env) ([]results.Phase, error)
	base() *Base // every options struct embeds Base (a pointer to it is a Config)
}

func (b *Base) base() *Base { return b }

// BaseOf is the Base of cfg's options, for the caller to set what the
// workload's own flags do not (the seed and, for a corpus workload, the
// timeout of the shared flags).
func BaseOf(cfg Config) *Base { return cfg.base() }

// Checked is implemented by options that check their own values, as the
// CLI's flags set them, before anything starts (a corpus signed, a relay
// started, a file written): each range, and what the counts cost in memory
// and connections (package flagcheck). A bad value is a usage error naming
// the flag. The CLI runs the shared flag groups' checks first.
type Checked interface {
	Check(r *flagcheck.Ranges, in CheckInput)
}

// CheckInput is what a workload's checks may need besides its options: the
// corpus a NeedsCorpus workload runs on, as its flags set it (--events,
// --size; a live workload's are 0), and the prefix of its options' flag
// names on the command line, for the messages (sync's --neg-rounds: "neg-").
type CheckInput struct {
	Events int    // corpus events to publish
	Size   int    // their average content bytes
	Prefix string // of the options' flag names
}

// Check runs cfg's checks, when its options have some (Checked).
func Check(cfg Config, r *flagcheck.Ranges, in CheckInput) {
	if c, ok := cfg.(Checked); ok {
		c.Check(r, in)
	}
}

// Input is what a workload needs before it runs.
type Input int

const (
	// NeedsCorpus: the corpus is published first; the workload reads what
	// the relay accepted (Env.Model, Env.Live).
	NeedsCorpus Input = iota
	// NeedsKeys: the workload signs fresh events with the corpus's keys and
	// publishes them itself; nothing is published before it.
	NeedsKeys
)

// Decl declares a workload, once.
type Decl struct {
	Name    string // the subcommand and --workloads name
	Summary string // one line, for --help
	// Brief, optional: a few words for run and compare's --workloads help
	// (what the workload does there with its defaults), after its name.
	Brief string
	Input Input
	// NIP, when not 0, is the NIP the workload needs: on a relay that does
	// not announce it in its NIP-11 supported_nips, the workload is skipped
	// with one line (unless the options' Force is set).
	NIP  int
	What string // with NIP: what the NIP is, for the skip line ("COUNT")
	// Unsupported, when set, says why the workload does not run on a relay
	// (its Run then skips it itself); otherwise NIP says.
	Unsupported func(info *nip11.Info) string
	// New returns the workload's options with their defaults.
	New func() Config
	// Adds: the workload publishes events of its own (fresh events signed
	// with the corpus's keys), which the relay then holds beside the corpus.
	Adds bool
	// JudgesSet: the workload judges answers against exactly what the
	// relay accepted of the corpus (Env.Model): events another workload
	// added before it would read as extra (see RunOrder).
	JudgesSet bool
}

// RunOrder is the order in which run and compare run the workloads ds
// after publish and query: those that judge answers against the corpus's
// set and add nothing first, then those that judge it and add (negentropy's
// delta), then those that only add, each group in the order given. Events a
// workload publishes are not in the corpus's model, so a workload judging
// that set after them would call a correct relay's answers wrong.
func RunOrder(ds []Decl) []Decl {
	rank := func(d Decl) int {
		switch {
		case d.JudgesSet && !d.Adds:
			return 0
		case d.JudgesSet:
			return 1
		}
		return 2
	}
	out := slices.Clone(ds)
	slices.SortStableFunc(out, func(a, b Decl) int { return rank(a) - rank(b) })
	return out
}

// RunPlan is what publish, query and then the workloads named write (run
// and compare), for checking --threshold figures before any work
// (threshold.Plan): the latencies of publish and query, their groups'
// included (auth only with NIP-42, ok_refused only with refusals); a
// declared workload's phases are named after it (Decl.Name, or Name/PART:
// sweep/1024, negentropy/…), their latencies not declared.
func RunPlan(workloads []string) threshold.Plan {
	phases := map[string][]string{
		"publish": {results.LatencyOK, results.LatencyOKRefused, results.LatencyAuth},
		"query":   {results.LatencyEOSE, results.LatencyFirstEvent, results.LatencyAuth},
	}
	for _, name := range workloads {
		if name = strings.TrimSpace(name); name != "" && phases[name] == nil {
			phases[name] = nil
		}
	}
	return threshold.Plan{Phases: phases}
}

var (
	declMu sync.Mutex
	decls  = map[string]Decl{}
)

// Register declares a workload. Call it from an init function in the
// workload's file; a second declaration of a name panics (a programming
// error, caught by any test).
func Register(d Decl) {
	declMu.Lock()
	defer declMu.Unlock()
	if d.Name == "" || d.New == nil {
		panic("workload.Register: a declaration needs a Name and New")
	}
	if _, dup := decls[d.Name]; dup {
		panic("workload.Register: " + d.Name + " declared twice")
	}
	decls[d.Name] = d
}

// Declare registers d with options of type T: New returns a T with its
// defaults (every field's default tag).
func Declare[T any, PT interface {
	*T
	Config
}](d Decl) {
	d.New = func() Config { return PT(newDefaults[T]()) }
	Register(d)
}

// Lookup returns the declaration of the workload called name.
func Lookup(name string) (Decl, bool) {
	declMu.Lock()
	defer declMu.Unlock()
	d, ok := decls[name]
	return d, ok
}

// Registered returns every declared workload, by name.
func Registered() []Decl {
	declMu.Lock()
	defer declMu.Unlock()
	out := make([]Decl, 0, len(decls))
	for _, d := range decls {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Workload returns the declared workload with options cfg (cfg is one New
// returned, set as the caller wants): its Run skips the workload, in one
// phase said in one line, on a relay that does not announce d.NIP.
func (d Decl) Workload(cfg Config) Workload {
	w := Workload{Name: d.Name, Run: cfg.Run, Unsupported: d.Unsupported}
	if d.NIP == 0 || d.Unsupported != nil {
		return w
	}
	force := false
	if f, ok := cfg.(interface{ forced() bool }); ok {
		force = f.forced()
	}
	w.Unsupported = func(info *nip11.Info) string { return NotAnnounced(info, d.NIP, d.What, d.Name, force) }
	w.Run = func(ctx context.Context, env Env) ([]results.Phase, error) {
		if why := w.Unsupported(env.Info); why != "" {
			return SkipUnsupported(ctx, env, d.Name, why)
		}
		return cfg.Run(ctx, env)
	}
	return w
}

// NotAnnounced says why the workload called name, for NIP n, does not run
// on a relay whose NIP-11 document is info: "" when it announces n (or
// force). --force is named as the command's: run --workloads has none.
func NotAnnounced(info *nip11.Info, n int, what, name string, force bool) string {
	switch {
	case force:
		return ""
	case info == nil:
		return fmt.Sprintf("the relay serves no NIP-11 document, so it does not announce NIP-%d (%s); the %s command's --force runs it anyway", n, what, name)
	case !info.SupportsNIP(n):
		return fmt.Sprintf("the relay does not announce NIP-%d (%s) in its NIP-11 supported_nips; the %s command's --force runs it anyway", n, what, name)
	}
	return ""
}

// Force, embedded in a NIP workload's options, runs it on a relay that does
// not announce the NIP.
type Force struct {
	Force bool `name:"force" help:"Run even when the relay does not announce the workload's NIP in its NIP-11 supported_nips (default: skip with one line)."`
}

func (f Force) forced() bool { return f.Force }

// SkipUnsupported is the one phase of a workload skipped on a relay that
// does not announce its NIP, said in one line on env's Log (judged
// incomplete: the requested work did not run). A relay that cannot be
// reached is an error, as when the publish phase cannot dial it, not a
// relay that does not announce the NIP.
func SkipUnsupported(ctx context.Context, env Env, name, why string) ([]results.Phase, error) {
	if err := Reach(ctx, env.URL); err != nil {
		return nil, err
	}
	if env.Log != nil {
		fmt.Fprintf(env.Log, "%s: skipped on %s: %s\n", name, env.URL, why)
	}
	return []results.Phase{Skipped(name, why)}, nil
}

// Reach opens and closes one WebSocket connection to url: the
// *wire.DialError of a relay that cannot be reached, nil otherwise.
func Reach(ctx context.Context, url string) error {
	c, err := wire.Dial(ctx, url, wire.Options{})
	if err != nil {
		return err
	}
	c.Close()
	return nil
}

// fromEnv fills what env provides and the caller left unset: the run's seed
// (the corpus's), the relay's sampler, and a progress reporter for total
// operations under label.
func (b *Base) fromEnv(env Env, label string, total int64) {
	if b.Seed == 0 && env.Corpus != nil {
		b.Seed = env.Corpus.Params.Seed
	}
	if b.Begin == nil {
		b.Begin = env.Sample
	}
	if b.Progress == nil && label != "" {
		b.Progress = env.progressFor(label, total)
	}
}

// onePhase adapts a single-phase workload's result: no phase when it
// measured nothing.
func onePhase(ph results.Phase, err error) ([]results.Phase, error) {
	if ph.Counts == nil {
		return nil, err
	}
	return []results.Phase{ph}, err
}
