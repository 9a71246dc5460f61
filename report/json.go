package report

import (
	"encoding/json"
	"io"
	"time"

	"github.com/relaybench/relaybench/results"
)

// JSONSchema identifies the condensed JSON summary written by JSON.
const JSONSchema = "relaybench/report/v1"

// JSONReport is the condensed summary JSON writes: the results files without
// histogram encodings, series, raw NIP-11 documents or counters read under
// their noise floor (results.BelowNoise), each latency reduced
// to its percentiles, plus a status per phase and, when runs were repeated or
// several relays compared, per-relay medians and spreads.
type JSONReport struct {
	Schema string     `json:"schema"` // JSONSchema
	Title  string     `json:"title"`
	Files  []JSONFile `json:"files"`
	// Relays aggregates every figure over the runs of each relay (medians
	// and spreads); present when a relay was run more than once or several
	// relays were measured.
	Relays []JSONRelay `json:"relays,omitempty"`
}

// JSONFile describes one results file: what was run, with what, on what, when.
type JSONFile struct {
	Command     string          `json:"command"`
	Args        []string        `json:"args,omitempty"`
	Tool        results.Tool    `json:"tool"`
	Machine     results.Machine `json:"machine"`
	StartedAt   time.Time       `json:"started_at"`
	FinishedAt  time.Time       `json:"finished_at"`
	Interrupted bool            `json:"interrupted,omitempty"`
	Runs        []JSONRun       `json:"runs"`
	// Merged is set when relaybench merge made the file from segments.
	Merged *results.Merged `json:"merged,omitempty"`
}

// JSONRun is one run of one relay.
type JSONRun struct {
	Relay    string         `json:"relay"`
	URL      string         `json:"url"`
	Software string         `json:"software,omitempty"`
	Version  string         `json:"version,omitempty"`
	Repeat   int            `json:"repeat,omitempty"`
	Corpus   results.Corpus `json:"corpus"`
	Params   map[string]any `json:"params,omitempty"`
	Phases   []JSONPhase    `json:"phases"`
	Errors   []string       `json:"errors,omitempty"`
	Notes    []string       `json:"notes,omitempty"`
	// Conformance are the run's conformance checks as the results file
	// holds them (the relay's words in Detail and Evidence unescaped, as
	// JSON encodes them).
	Conformance []results.Check `json:"conformance,omitempty"`
}

// JSONPhase is a phase's figures. Status is empty when nothing limits trust
// in them; else it lists "verification FAILED", "not verified",
// "client-limited", "N error(s)".
type JSONPhase struct {
	Name          string                 `json:"name"`
	Workload      string                 `json:"workload,omitempty"`
	DurationSecs  float64                `json:"duration_s"`
	Counts        map[string]int64       `json:"counts,omitempty"`
	Refused       map[string]int64       `json:"refused,omitempty"`
	Rates         map[string]float64     `json:"rates,omitempty"`
	Latency       map[string]JSONLatency `json:"latency,omitempty"`
	Groups        []JSONGroup            `json:"groups,omitempty"`
	Verification  *results.Verification  `json:"verification,omitempty"`
	Resources     *JSONResources         `json:"resources,omitempty"`
	ClientLimited bool                   `json:"client_limited,omitempty"`
	MaxRateBound  string                 `json:"max_rate_bound,omitempty"` // find-max: why max_rate is a lower bound (MaxRateBound)
	Status        []string               `json:"status,omitempty"`
	Notes         []string               `json:"notes,omitempty"`
	Errors        []string               `json:"errors,omitempty"`
}

// JSONGroup is a group's figures (a query shape, a payload size).
type JSONGroup struct {
	Name         string                 `json:"name"`
	Counts       map[string]int64       `json:"counts,omitempty"`
	Rates        map[string]float64     `json:"rates,omitempty"`
	Latency      map[string]JSONLatency `json:"latency,omitempty"`
	Verification *results.Verification  `json:"verification,omitempty"`
}

// JSONLatency is a latency distribution's summary in nanoseconds;
// Percentiles are keyed "50", "90", "95", "99", "99.9", "99.99".
type JSONLatency struct {
	Count       int64            `json:"count"`
	MeanNs      float64          `json:"mean_ns"`
	MinNs       int64            `json:"min_ns"`
	MaxNs       int64            `json:"max_ns"`
	Percentiles map[string]int64 `json:"percentiles_ns,omitempty"`
}

// JSONResources are the resource figures without their time series.
type JSONResources struct {
	RelayCPUSecs   float64 `json:"relay_cpu_secs,omitempty"`
	RelayPeakRSS   int64   `json:"relay_peak_rss,omitempty"`
	RelayDataBytes int64   `json:"relay_data_bytes,omitempty"`
	ClientCPUSecs  float64 `json:"client_cpu_secs"`
	ClientCPUUtil  float64 `json:"client_cpu_util,omitempty"`
}

// JSONRelay aggregates one relay's runs: for each figure ("publish
// events_per_sec", "query eose p99_ns", …) the median and spread.
type JSONRelay struct {
	Relay   string       `json:"relay"`
	Runs    int          `json:"runs"`
	Figures []JSONFigure `json:"figures"`
}

// JSONFigure is one figure over the runs of a relay. Status merges the
// statuses of the phases it comes from.
type JSONFigure struct {
	Phase  string    `json:"phase"`
	Name   string    `json:"name"`
	Unit   string    `json:"unit"`
	N      int       `json:"n"`
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	Values []float64 `json:"values"`
	Status string    `json:"status,omitempty"`
}

func jsonLatency(m map[string]*results.Histogram) map[string]JSONLatency {
	if len(m) == 0 {
		return nil
	}
	out := map[string]JSONLatency{}
	for k, h := range m {
		if h == nil {
			continue
		}
		out[k] = JSONLatency{Count: h.Count, MeanNs: h.Mean, MinNs: h.Min, MaxNs: h.Max, Percentiles: h.Percentiles}
	}
	return out
}

// JSON writes the condensed summary of files (see JSONReport), indented.
func JSON(w io.Writer, files []*results.File, o Options) error {
	rep := JSONReport{Schema: JSONSchema, Title: o.title(files)}
	for _, f := range files {
		jf := JSONFile{Command: f.Command, Args: f.Args, Tool: f.Tool, Machine: f.Machine, StartedAt: f.StartedAt, FinishedAt: f.FinishedAt, Interrupted: f.Interrupted, Merged: f.Merged}
		for i := range f.Runs {
			r := &f.Runs[i]
			jr := JSONRun{Relay: relayKey(&r.Relay), URL: r.Relay.URL, Software: r.Relay.Software, Version: r.Relay.Version,
				Repeat: r.Repeat, Corpus: r.Corpus, Params: r.Params, Errors: r.Errors, Notes: r.Notes, Conformance: r.Conformance}
			for j := range r.Phases {
				p := &r.Phases[j]
				jp := JSONPhase{Name: p.Name, Workload: p.Workload, DurationSecs: float64(p.Duration) / 1e9, Counts: figureCounts(p.Counts), Refused: p.Refused,
					Rates: p.Rates, Latency: jsonLatency(p.Latency), Verification: settled(p.Verification), ClientLimited: p.ClientLimited, MaxRateBound: MaxRateBound(p),
					Status: phaseStatus(p), Notes: p.Notes, Errors: p.Errors}
				if rs := p.Resources; rs != nil {
					jp.Resources = &JSONResources{rs.RelayCPUSecs, rs.RelayPeakRSS, rs.RelayDataBytes, rs.ClientCPUSecs, rs.ClientCPUUtil}
				}
				for _, g := range p.Groups {
					jp.Groups = append(jp.Groups, JSONGroup{Name: g.Name, Counts: figureCounts(g.Counts), Rates: g.Rates, Latency: jsonLatency(g.Latency), Verification: settled(g.Verification)})
				}
				jr.Phases = append(jr.Phases, jp)
			}
			jf.Runs = append(jf.Runs, jr)
		}
		rep.Files = append(rep.Files, jf)
	}
	groups := groupRuns(files)
	if len(groups) > 1 || repeated(groups) {
		for _, g := range groups {
			jr := JSONRelay{Relay: g.key, Runs: len(g.runs)}
			for _, fig := range figures(g.runs) {
				lo, hi := minMax(fig.values)
				jr.Figures = append(jr.Figures, JSONFigure{Phase: fig.phase, Name: fig.name, Unit: fig.unit, N: len(fig.values),
					Median: median(append([]float64(nil), fig.values...)), Min: lo, Max: hi, Values: fig.values, Status: fig.status})
			}
			rep.Relays = append(rep.Relays, jr)
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// settled is a copy of v with its state set (a file written before the
// state existed lacks it; passed with nothing checked is not verified).
func settled(v *results.Verification) *results.Verification {
	if v == nil {
		return nil
	}
	c := *v
	c.Settle()
	return &c
}
