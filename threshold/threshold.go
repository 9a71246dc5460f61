// Package threshold turns the figures of a results file into pass/fail
// criteria, for a relay's CI: thresholds ("publish.ok.p99<20ms") checked at
// the end of a run, and limits on the change from a baseline
// ("publish.rate:-10%") checked by report --base/--cand --fail-on.
//
// # Grammar
//
//	threshold := figure [ "{relay=" NAME "}" ] op limit
//	op        := "<" | "<=" | ">" | ">=" | "==" | "!="
//	figure    := "verification"               every verified phase passed (not
//	                                          verified when one checked nothing)
//	           | scope "." name
//	scope     := PHASE | PHASE "/" GROUP      e.g. publish, query/author, sweep/1024
//	                                          (each name as Slug writes it:
//	                                          publish_query_corpus for the
//	                                          phase "publish (query corpus)")
//	name      := LATENCY "." stat             publish.ok.p99, query.eose.p50
//	           | stat                         the primary latency (results.PrimaryLatency): publish.p99 = publish.ok.p99
//	           | "rate"                       the primary rate (results.PrimaryRate: events/s, else queries/s, …)
//	           | RATE | "rates." RATE         a key of Rates: publish.mb_per_sec
//	           | COUNT | "counts." COUNT      a key of Counts: publish.refused
//	           | "verification"               the phase's (or group's) verification
//	           | "conformance." CHECK         a conformance check's status:
//	                                          conformance.req.limit-zero==pass
//	           | "conformance." TALLY         how many checks ended so:
//	                                          conformance.failed==0 (TALLY: checks,
//	                                          passed, failed, named, not_announced,
//	                                          not_run, unknown)
//	stat      := p50 | p90 | p95 | p99 | p99.9 | p99.99 | min | max | mean | stddev | count
//	limit     := DURATION (20ms, 1.5s, 800us) for latencies (not count)
//	           | NUMBER [k|M] for rates and counts (5000, 5k)
//	           | passed | failed | not_verified for verification (with == or
//	             != only); a verification that checked no answer is
//	             not_verified, so verification==passed fails on it
//	           | pass | fail | named | not-announced | not-run | unknown for
//	             a conformance check (with == or != only); repeated runs
//	             give the worst status, in this order from worst: fail,
//	             unknown, not-run, named, not-announced, pass
//
// A phase's or group's name that has other characters than ASCII letters,
// digits, "_" and "-" (spaces, brackets, dots) is written as its Slug.
//
// A threshold without a relay applies to every relay of the results, each
// judged on its own; with repeated runs the value is the median of the
// relay's runs. A figure absent from the results is a usage error that
// lists what exists; one the command cannot write (Plan) is refused before
// it runs.
//
// # Change limits
//
//	fail-on := figure [ "{relay=" NAME "}" ] ":" ("+"|"-") PERCENT "%"
//
// "-10%" fails when the candidate is more than 10 % below the baseline,
// "+10%" when it is more than 10 % above; report --fail-on fails only when
// that change is also significant (Mann-Whitney U over the repeated runs).
package threshold

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/results"
)

// Values of a verification figure (UnitVerdict). Ordered so that the
// minimum over repeated runs is the worst state.
const (
	VerdictFailed      = 0.0
	VerdictNotVerified = 0.5
	VerdictPassed      = 1.0
)

// verdictValue is the figure value of a verification's state.
func verdictValue(v *results.Verification) float64 {
	switch v.Status() {
	case results.VerificationPassed:
		return VerdictPassed
	case results.VerificationNotVerified:
		return VerdictNotVerified
	}
	return VerdictFailed
}

// Units of figures.
const (
	UnitNs      = "ns"
	UnitRate    = "1/s"
	UnitCount   = "count"
	UnitVerdict = "verdict"
	// UnitCheck is a conformance check's status (see checkValues).
	UnitCheck = "check"
	// UnitMBps is mb_per_sec's: decimal megabytes (10⁶ bytes) per second,
	// where the summary shows MiB/s.
	UnitMBps = "MB/s"
)

// ConformanceScope is the scope of the conformance figures.
const ConformanceScope = "conformance"

// checkOrder lists the statuses of a conformance check from worst to best:
// a status's figure value is its index, so that the minimum over repeated
// runs is the worst status.
var checkOrder = []results.CheckStatus{results.CheckFail, results.CheckUnknown, results.CheckNotRun,
	results.CheckNamed, results.CheckNotAnnounced, results.CheckPass}

// checkValue is the figure value of a check's status (-1: not a status).
func checkValue(s results.CheckStatus) float64 {
	for i, c := range checkOrder {
		if c == s {
			return float64(i)
		}
	}
	return -1
}

// conformanceTallies name the counts of conformance.TALLY, by status
// ("checks" counts them all).
var conformanceTallies = map[string]results.CheckStatus{
	"passed": results.CheckPass, "failed": results.CheckFail, "named": results.CheckNamed,
	"not_announced": results.CheckNotAnnounced, "not_run": results.CheckNotRun, "unknown": results.CheckUnknown,
}

// isCheckFigure reports whether figure names one conformance check (not
// a tally).
func isCheckFigure(figure string) bool {
	rest, ok := strings.CutPrefix(figure, ConformanceScope+".")
	if !ok {
		return false
	}
	_, tally := conformanceTallies[rest]
	return !tally && rest != "checks"
}

// Threshold is one parsed threshold.
type Threshold struct {
	Expr   string  // as written
	Figure string  // figure name
	Relay  string  // "" for every relay
	Op     string  // <, <=, >, >=, ==, !=
	Limit  float64 // nanoseconds for durations; a Verdict* value for verification
	Unit   string  // unit the limit was given in (UnitNs, UnitCount (numbers), UnitVerdict)
}

var (
	exprRE   = regexp.MustCompile(`^\s*([A-Za-z0-9_./\-]+(?: [A-Za-z0-9_./\-]+)*)\s*(?:\{\s*relay\s*=\s*([^}]*?)\s*\})?\s*(<=|>=|==|!=|<|>)\s*(\S.*?)\s*$`)
	failOnRE = regexp.MustCompile(`^\s*([A-Za-z0-9_./\-]+)\s*(?:\{\s*relay\s*=\s*([^}]*?)\s*\})?\s*:\s*([+-])\s*([0-9]+(?:\.[0-9]+)?)\s*%\s*$`)
	statRE   = regexp.MustCompile(`^(p[0-9]+(\.[0-9]+)?|min|max|mean|stddev|count)$`)
)

// Kind of figure a name denotes, from its last part: a latency statistic
// (duration), a verification (verdict) or a number (rate, count).
func unitOf(figure string) string {
	if isCheckFigure(figure) {
		return UnitCheck
	}
	if figure == "verification" || strings.HasSuffix(figure, ".verification") {
		return UnitVerdict
	}
	last := figure[strings.LastIndex(figure, ".")+1:]
	// p99.9: the last part is "9"; look at the last two.
	if i := strings.LastIndex(figure, ".p"); i >= 0 && statRE.MatchString(figure[i+1:]) {
		last = figure[i+1:]
	}
	if last != "count" && statRE.MatchString(last) {
		return UnitNs
	}
	return UnitCount
}

// Parse parses one threshold. Errors are usage errors and quote s.
func Parse(s string) (Threshold, error) {
	m := exprRE.FindStringSubmatch(s)
	if m == nil {
		return Threshold{}, fmt.Errorf("threshold %q: want FIGURE OP LIMIT, e.g. publish.ok.p99<20ms, publish.rate>5000, verification==passed", s)
	}
	t := Threshold{Expr: strings.TrimSpace(s), Figure: m[1], Relay: m[2], Op: m[3]}
	if strings.Contains(t.Figure, "..") || strings.HasPrefix(t.Figure, ".") || strings.HasSuffix(t.Figure, ".") {
		return Threshold{}, fmt.Errorf("threshold %q: bad figure name %q", s, t.Figure)
	}
	if t.Figure != "verification" && !strings.Contains(t.Figure, ".") {
		return Threshold{}, fmt.Errorf("threshold %q: a figure is PHASE.NAME (e.g. publish.rate, query.eose.p99) or verification", s)
	}
	if err := checkName(t.Figure); err != nil {
		return Threshold{}, fmt.Errorf("threshold %q: no figure %s: %v", s, t.Figure, err)
	}
	lim := m[4]
	switch unitOf(t.Figure) {
	case UnitVerdict:
		if t.Op != "==" && t.Op != "!=" {
			return Threshold{}, fmt.Errorf("threshold %q: verification takes == or != (verification==passed)", s)
		}
		switch lim {
		case "passed":
			t.Limit = VerdictPassed
		case "failed":
			t.Limit = VerdictFailed
		case "not_verified", "not-verified", "not verified":
			t.Limit = VerdictNotVerified
		default:
			return Threshold{}, fmt.Errorf("threshold %q: verification is passed, failed or not_verified, not %q", s, lim)
		}
		t.Unit = UnitVerdict
	case UnitCheck:
		if t.Op != "==" && t.Op != "!=" {
			return Threshold{}, fmt.Errorf("threshold %q: a conformance check takes == or != (%s==pass)", s, t.Figure)
		}
		v := checkValue(results.CheckStatus(strings.ReplaceAll(lim, "_", "-")))
		if v < 0 {
			return Threshold{}, fmt.Errorf("threshold %q: a conformance check is pass, fail, named, not-announced, not-run or unknown, not %q", s, lim)
		}
		t.Limit, t.Unit = v, UnitCheck
	case UnitNs:
		d, err := time.ParseDuration(lim)
		if err != nil || d < 0 {
			return Threshold{}, fmt.Errorf("threshold %q: %s is a latency: the limit is a duration with its unit (20ms, 1.5s, 800us), not %q", s, t.Figure, lim)
		}
		t.Limit, t.Unit = float64(d.Nanoseconds()), UnitNs
	default:
		v, err := parseNumber(lim)
		if err != nil {
			return Threshold{}, fmt.Errorf("threshold %q: %s is a number: the limit is a number (5000, 5k, 1.5M), not %q", s, t.Figure, lim)
		}
		t.Limit, t.Unit = v, UnitCount
	}
	return t, nil
}

// keyRE is a key of a phase's Counts, Rates or Latency.
var keyRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// figureForms lists the forms of a figure name, once, for error messages.
const figureForms = "a figure is PHASE.LATENCY.STAT (publish.ok.p99), PHASE.STAT (the main latency's), PHASE.rate, " +
	"PHASE.KEY of a rate or count (publish.mb_per_sec, publish.refused), PHASE.verification, verification or conformance.CHECK; " +
	"STAT is " + statNames + " (README: In a relay's CI)"

// statNames are the statistics every latency of a results file has.
const statNames = "p50, p90, p95, p99, p99.9, p99.99, min, max, mean, stddev or count"

// storedPercentile reports whether a results file holds percentile stat
// ("p99.9"): the ones metrics.Percentiles lists.
func storedPercentile(stat string) bool {
	for _, q := range metrics.Percentiles {
		if stat == "p"+metrics.PercentileKey(q) {
			return true
		}
	}
	return false
}

// checkName refuses, before any work, a figure name no results file can
// hold: a percentile that is not stored (p99.5, p75), a statistic with a
// unit or typo (p99ms), a name of the wrong shape. Which phases, latencies
// and keys exist depends on what runs: those are checked against the
// results (Missing).
func checkName(figure string) error {
	scope, name, _ := strings.Cut(figure, ".")
	if figure == "verification" || scope == ConformanceScope || name == "rate" || name == "verification" {
		return nil
	}
	if k, ok := strings.CutPrefix(name, "rates."); ok && keyRE.MatchString(k) {
		return nil
	}
	if k, ok := strings.CutPrefix(name, "counts."); ok && keyRE.MatchString(k) {
		return nil
	}
	lat, stat := "", ""
	// Only a group has a latency named "latency" (lifecycle's stages:
	// lifecycle/ok.latency.p99); a phase's PHASE.latency.STAT lacks its
	// latency's name.
	switch {
	case statRE.MatchString(name):
		stat = name
	default:
		if i := strings.Index(name, "."); i > 0 && statRE.MatchString(name[i+1:]) {
			lat, stat = name[:i], name[i+1:]
		} else if l, ok := strings.CutPrefix(name, "latency."); ok {
			if i := strings.Index(l, "."); i > 0 && statRE.MatchString(l[i+1:]) {
				lat, stat = l[:i], l[i+1:]
			}
		}
	}
	switch {
	case stat == "" && keyRE.MatchString(name):
		return nil // a rate or count key
	case stat == "":
		return fmt.Errorf("%s", figureForms)
	case strings.HasPrefix(stat, "p") && !storedPercentile(stat):
		return fmt.Errorf("%s is not a stored statistic: a latency has %s", stat, statNames)
	case lat != "" && (!keyRE.MatchString(lat) || lat == "latency" && !strings.Contains(scope, "/")):
		return fmt.Errorf("%s", figureForms)
	}
	return nil
}

func parseNumber(s string) (float64, error) {
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "k"):
		mult, s = 1e3, strings.TrimSuffix(s, "k")
	case strings.HasSuffix(s, "M"):
		mult, s = 1e6, strings.TrimSuffix(s, "M")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("not a number")
	}
	return v * mult, nil
}

// ParseAll parses thresholds given on the command line and in TOML files
// (see ParseFile), in that order.
func ParseAll(exprs []string, files ...string) ([]Threshold, error) {
	out, err := parseEach(exprs, Parse)
	if err != nil {
		return nil, err
	}
	ts, err := fromFiles(files, ParseFile)
	if err != nil {
		return nil, err
	}
	return append(out, ts...), nil
}

// fromFiles collects what read takes from each file named ("": none).
func fromFiles[T any](files []string, read func(path string) ([]T, error)) ([]T, error) {
	var out []T
	for _, f := range files {
		if f == "" {
			continue
		}
		vs, err := read(f)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

// fileFormat is the TOML thresholds file:
//
//	thresholds = ["publish.ok.p99<20ms", "verification==passed"]
//	fail_on    = ["publish.rate:-10%"]   # used by report --base/--cand
type fileFormat struct {
	Thresholds []string `toml:"thresholds"`
	FailOn     []string `toml:"fail_on"`
}

func readFile(path string) (fileFormat, error) {
	var ff fileFormat
	data, err := os.ReadFile(path)
	if err != nil {
		return ff, fmt.Errorf("--thresholds %s: %w", path, err)
	}
	dec := toml.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ff); err != nil {
		return ff, fmt.Errorf("--thresholds %s: %s (want thresholds = [\"publish.ok.p99<20ms\", …] and/or fail_on = [\"publish.rate:-10%%\", …])", path, strings.Join(strings.Fields(err.Error()), " "))
	}
	return ff, nil
}

// ParseFile reads the thresholds of a TOML file (its "thresholds" array).
func ParseFile(path string) ([]Threshold, error) {
	ff, err := readFile(path)
	if err != nil {
		return nil, err
	}
	out, err := parseEach(ff.Thresholds, Parse)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// parseEach parses every expression with parse, stopping at the first
// error.
func parseEach[T any](exprs []string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, e := range exprs {
		v, err := parse(e)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Figure is one figure of a run.
type Figure struct {
	Value float64
	Unit  string
	// Alias is true for a second name of a figure (publish.rate,
	// publish.p99, publish.counts.sent, …): not listed in error messages.
	Alias bool
}

var stats = []string{"min", "max", "mean", "stddev", "count"}

// Figures returns every figure of run r by name (see the package grammar),
// aliases included.
func Figures(r *results.Run) map[string]Figure {
	out := map[string]Figure{}
	put := func(name string, v float64, unit string, alias bool) {
		if old, ok := out[name]; ok && !old.Alias {
			return // the first phase of a name wins; a canonical name wins over an alias
		}
		out[name] = Figure{Value: v, Unit: unit, Alias: alias}
	}
	scope := func(written string, counts map[string]int64, rates map[string]float64, lat map[string]*results.Histogram, ver *results.Verification) {
		// Named by its slug; its name as written stays an alias when it
		// parses (a group name with spaces).
		slug := Slug(written)
		at := func(rest string, v float64, unit string, alias bool) {
			put(slug+rest, v, unit, alias)
			if written != slug {
				put(written+rest, v, unit, true)
			}
		}
		for k, v := range rates {
			at("."+k, v, rateUnit(k), false)
			at(".rates."+k, v, rateUnit(k), true)
		}
		if k := results.PrimaryRate(rates); k != "" {
			at(".rate", rates[k], rateUnit(k), true)
		}
		for k, v := range counts {
			if _, clash := rates[k]; !clash {
				at("."+k, float64(v), UnitCount, false)
			}
			at(".counts."+k, float64(v), UnitCount, true)
		}
		prim := results.PrimaryLatency(lat)
		for name, h := range lat {
			if h == nil {
				continue
			}
			add := func(stat string, v float64, unit string) {
				at("."+name+"."+stat, v, unit, false)
				at(".latency."+name+"."+stat, v, unit, true)
				if name == prim {
					at("."+stat, v, unit, true)
				}
			}
			for q, v := range h.Percentiles {
				add("p"+q, float64(v), UnitNs)
			}
			if h.Count > 0 {
				add("min", float64(h.Min), UnitNs)
				add("max", float64(h.Max), UnitNs)
				add("mean", h.Mean, UnitNs)
				add("stddev", h.StdDev, UnitNs)
			}
			add("count", float64(h.Count), UnitCount)
		}
		if judged(ver) {
			at(".verification", verdictValue(ver), UnitVerdict, false)
		}
	}
	all, any := VerdictPassed, false
	for i := range r.Phases {
		p := &r.Phases[i]
		scope(p.Name, p.Counts, p.Rates, p.Latency, p.Verification)
		for _, g := range p.Groups {
			scope(p.Name+"/"+g.Name, g.Counts, g.Rates, g.Latency, g.Verification)
		}
		if v := p.Verification; judged(v) {
			any = true
			all = math.Min(all, verdictValue(v))
		}
	}
	if any {
		put("verification", all, UnitVerdict, false)
	}
	conformanceFigures(r.Conformance, put)
	return out
}

// Slug is how a figure names a phase or a group (PHASE/GROUP): each run of
// characters other than ASCII letters, digits, "_" and "-" becomes one
// "_", and none is left at either end of a name, so that a name with
// spaces, brackets or dots can be written in a threshold: "publish (query
// corpus)" is publish_query_corpus. Other names are unchanged.
func Slug(scope string) string {
	parts := strings.Split(scope, "/")
	for i, part := range parts {
		var b strings.Builder
		gap := false
		for _, c := range part {
			if c < 128 && (c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				if gap && b.Len() > 0 {
					b.WriteByte('_')
				}
				b.WriteRune(c)
				gap = false
				continue
			}
			gap = true
		}
		parts[i] = b.String()
	}
	return strings.Join(parts, "/")
}

// conformanceFigures puts the figures of a run's conformance checks: each
// check's status, and the tallies (when any check ran).
func conformanceFigures(checks []results.Check, put func(name string, v float64, unit string, alias bool)) {
	if len(checks) == 0 {
		return
	}
	n := map[results.CheckStatus]int{}
	for _, c := range checks {
		n[c.Status]++
		put(ConformanceScope+"."+c.ID, checkValue(c.Status), UnitCheck, false)
	}
	put(ConformanceScope+".checks", float64(len(checks)), UnitCount, false)
	for name, st := range conformanceTallies {
		put(ConformanceScope+"."+name, float64(n[st]), UnitCount, false)
	}
}

// judged reports whether v has a verification figure: a full verification
// (Verified), or one that checked no answer (not verified). A check of
// validity alone (nothing published in this run) has none.
func judged(v *results.Verification) bool {
	return v != nil && (v.Verified || v.Status() == results.VerificationNotVerified)
}

// RelayKey names a run's relay: its catalog name, else its URL.
func RelayKey(r *results.Run) string {
	if r.Relay.Name != "" {
		return r.Relay.Name
	}
	return r.Relay.URL
}

// Relays groups the runs of files by relay, in order of appearance,
// leaving out relays that were skipped.
func Relays(files ...*results.File) (keys []string, runs map[string][]*results.Run) {
	runs = map[string][]*results.Run{}
	for _, f := range files {
		for i := range f.Runs {
			r := &f.Runs[i]
			if r.Skipped != "" {
				continue
			}
			k := RelayKey(r)
			if _, ok := runs[k]; !ok {
				keys = append(keys, k)
			}
			runs[k] = append(runs[k], r)
		}
	}
	return keys, runs
}

// Values returns the figure's value in each run that has it.
func Values(runs []*results.Run, figure string) (vs []float64, unit string) {
	for _, r := range runs {
		if f, ok := Figures(r)[figure]; ok {
			vs = append(vs, f.Value)
			unit = f.Unit
		}
	}
	return vs, unit
}

// Median of vs (vs is not changed); NaN when empty.
func Median(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Missing explains that figure is not in runs, naming what is: the
// figures of the same scope when it exists, else the scopes.
func Missing(runs []*results.Run, figure string) string {
	names := map[string]bool{}
	for _, r := range runs {
		for n, f := range Figures(r) {
			if !f.Alias {
				names[n] = true
			}
		}
	}
	scope, _, _ := strings.Cut(figure, ".")
	var same, scopes []string
	seen := map[string]bool{}
	for n := range names {
		s, _, _ := strings.Cut(n, ".")
		if s == scope {
			same = append(same, n)
		}
		if !seen[s] {
			seen[s] = true
			scopes = append(scopes, s)
		}
	}
	sort.Strings(same)
	sort.Strings(scopes)
	if len(same) > 0 && scope == ConformanceScope {
		return fmt.Sprintf("no figure %s in the results (no such check was run); %s has: %s", figure, scope, strings.Join(same, ", "))
	}
	if len(same) > 0 {
		return fmt.Sprintf("no figure %s in the results; %s has %s", figure, scope, compactNames(scope, same))
	}
	if len(scopes) == 0 {
		return fmt.Sprintf("no figure %s in the results: they hold no figures", figure)
	}
	return fmt.Sprintf("no figure %s in the results: no phase or group %q; there are: %s", figure, scope, strings.Join(scopes, ", "))
}

// compactNames lists the figures of one scope once and briefly: each
// latency by name (its statistics are always the same), then the rate and
// count keys, without the scope repeated: "latencies ok, eose (each with
// p50 … count); keys accepted, events_per_sec, …".
func compactNames(scope string, names []string) string {
	var lats, keys []string
	seen := map[string]bool{}
	for _, n := range names {
		rest := strings.TrimPrefix(n, scope+".")
		if i := strings.Index(rest, "."); i > 0 && statRE.MatchString(rest[i+1:]) {
			if l := rest[:i]; !seen[l] {
				seen[l] = true
				lats = append(lats, l)
			}
			continue
		}
		keys = append(keys, rest)
	}
	var parts []string
	if len(lats) > 0 {
		parts = append(parts, "latencies "+strings.Join(lats, ", ")+" (each "+scope+"."+lats[0]+".STAT, STAT "+statNames+")")
	}
	if len(keys) > 0 {
		parts = append(parts, "keys "+strings.Join(keys, ", "))
	}
	return strings.Join(parts, "; ") + "; and " + scope + ".rate, " + scope + ".p99 …"
}

// Compare applies op.
func Compare(v float64, op string, limit float64) bool {
	switch op {
	case "<":
		return v < limit
	case "<=":
		return v <= limit
	case ">":
		return v > limit
	case ">=":
		return v >= limit
	case "==":
		return v == limit
	case "!=":
		return v != limit
	}
	return false
}

// Evaluate evaluates ts over the runs of f, one result per threshold and
// relay. A threshold whose figure or relay is absent gives a result with
// Error set (a usage error: it names what exists).
func Evaluate(f *results.File, ts []Threshold) []results.ThresholdResult {
	keys, runs := Relays(f)
	var out []results.ThresholdResult
	for _, t := range ts {
		res := results.ThresholdResult{Threshold: t.Expr, Figure: t.Figure, Op: t.Op, Limit: t.Limit, Unit: t.Unit}
		sel := keys
		if t.Relay != "" {
			sel = nil
			for _, k := range keys {
				if k == t.Relay || (len(runs[k]) > 0 && runs[k][0].Relay.URL == t.Relay) {
					sel = append(sel, k)
				}
			}
			if len(sel) == 0 {
				res.Relay = t.Relay
				res.Error = fmt.Sprintf("no relay %q in the results; there are: %s", t.Relay, strings.Join(keys, ", "))
				out = append(out, res)
				continue
			}
		}
		if len(sel) == 0 {
			res.Error = "the results hold no run to judge"
			out = append(out, res)
			continue
		}
		for _, k := range sel {
			r := res
			r.Relay = k
			vs, unit := Values(runs[k], t.Figure)
			if len(vs) == 0 {
				r.Error = Missing(runs[k], t.Figure)
				out = append(out, r)
				continue
			}
			if (unit == UnitRate || unit == UnitMBps) && t.Unit == UnitCount {
				r.Unit = unit
			} else if unit != t.Unit && !(unit == UnitCount && t.Unit == UnitCount) {
				r.Error = fmt.Sprintf("%s is in %s, the limit in %s", t.Figure, unit, t.Unit)
				out = append(out, r)
				continue
			}
			r.Runs = len(vs)
			r.Value = Median(vs)
			if t.Unit == UnitVerdict || t.Unit == UnitCheck {
				// Repeated: the verification (the check) passed only if
				// it passed every time; the worst state wins.
				r.Value = math.Inf(1)
				for _, v := range vs {
					r.Value = math.Min(r.Value, v)
				}
			}
			r.Passed = Compare(r.Value, t.Op, t.Limit)
			out = append(out, r)
		}
	}
	return out
}

// Failed counts the results that failed and those in error.
func Failed(rs []results.ThresholdResult) (failed, errs int) {
	for _, r := range rs {
		switch {
		case r.Error != "":
			errs++
		case !r.Passed:
			failed++
		}
	}
	return failed, errs
}

// rateUnit is rate k's unit: mb_per_sec's is decimal MB/s, not "/s".
func rateUnit(k string) string {
	if k == results.RateMB {
		return UnitMBps
	}
	return UnitRate
}

// Format formats a value in unit for tables: 12.3ms, 5,210/s, 9.06 MB/s,
// 42, passed.
func Format(v float64, unit string) string {
	if math.IsNaN(v) {
		return "–"
	}
	switch unit {
	case UnitNs:
		return time.Duration(math.Round(v)).Round(roundTo(v)).String()
	case UnitCheck:
		if i := int(v); float64(i) == v && i >= 0 && i < len(checkOrder) {
			return string(checkOrder[i])
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	case UnitVerdict:
		switch v {
		case VerdictPassed:
			return "passed"
		case VerdictNotVerified:
			return "not verified"
		}
		return "failed"
	case UnitRate:
		return number(v) + "/s"
	case UnitMBps:
		return number(v) + " MB/s"
	}
	return number(v)
}

// FormatValue is the measured value of r as the summary prints its
// figures: a duration with three significant digits ("2.89ms", not
// "2.894ms"), unless so rounded it would seem to meet a limit it missed or
// miss one it met (1.6444ms against < 1.644ms): then with the digits the
// comparison needs.
func FormatValue(r results.ThresholdResult) string {
	if math.IsNaN(r.Value) {
		return Format(r.Value, r.Unit)
	}
	switch r.Unit {
	case UnitNs:
		rounded := float64(numfmt.Round(time.Duration(math.Round(r.Value))))
		if Compare(rounded, r.Op, r.Limit) != Compare(r.Value, r.Op, r.Limit) {
			return time.Duration(math.Round(r.Value)).String()
		}
	case UnitRate, UnitMBps:
		// "13.4 MB/s", not "13.38 MB/s", unless the rounding would seem
		// to flip the comparison with the limit
		if Compare(numfmt.Round3(r.Value), r.Op, r.Limit) != Compare(r.Value, r.Op, r.Limit) {
			return Format(r.Value, r.Unit)
		}
	default:
		return Format(r.Value, r.Unit)
	}
	return FormatFigure(r.Value, r.Unit)
}

// FormatFigure formats a measured figure in unit with three significant
// digits, as the summary's figures are ("3.62ms", "13.4 MB/s", "5,210/s"),
// where Format keeps a limit as the user gave it ("3.617ms").
func FormatFigure(v float64, unit string) string {
	if math.IsNaN(v) {
		return Format(v, unit)
	}
	switch unit {
	case UnitNs:
		return numfmt.DurNs(v)
	case UnitRate:
		return numfmt.Fig3(v) + "/s"
	case UnitMBps:
		return numfmt.Fig3(v) + " MB/s"
	}
	return Format(v, unit)
}

// number is v as the summary prints figures: a whole number (or one of 100
// and more) with thousands separators ("5,446"), else two decimals.
func number(v float64) string {
	if decimals(v) == 0 && math.Abs(v) < 1e18 {
		return numfmt.Group(int64(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'f', decimals(v), 64)
}

func roundTo(ns float64) time.Duration {
	switch a := math.Abs(ns); {
	case a >= 1e9:
		return time.Millisecond
	case a >= 1e6:
		return time.Microsecond
	}
	return 1
}

func decimals(v float64) int {
	if v == math.Trunc(v) || math.Abs(v) >= 100 {
		return 0
	}
	return 2
}

// FailOn is one limit on the change from baseline to candidate.
type FailOn struct {
	Expr    string
	Figure  string
	Relay   string
	Percent float64 // signed: -10 fails on a drop of more than 10 %, +10 on a rise of more than 10 %
}

// ParseFailOn parses FIGURE[{relay=NAME}]:±N%.
func ParseFailOn(s string) (FailOn, error) {
	m := failOnRE.FindStringSubmatch(s)
	if m == nil {
		return FailOn{}, fmt.Errorf("--fail-on %q: want FIGURE:-N%% or FIGURE:+N%%, e.g. publish.rate:-10%% (fails on a significant drop of more than 10 %%) or publish.ok.p99:+20%%", s)
	}
	p, _ := strconv.ParseFloat(m[4], 64)
	if m[3] == "-" {
		p = -p
	}
	if u := unitOf(m[1]); u == UnitVerdict || u == UnitCheck {
		return FailOn{}, fmt.Errorf("--fail-on %q: %s is a verdict, not a measure that changes by a percentage; use a --threshold (verification==passed, conformance.failed==0)", s, m[1])
	}
	return FailOn{Expr: strings.TrimSpace(s), Figure: m[1], Relay: m[2], Percent: p}, nil
}

// ParseFailOns parses --fail-on values and the fail_on array of TOML files.
func ParseFailOns(exprs []string, files ...string) ([]FailOn, error) {
	more, err := fromFiles(files, func(path string) ([]string, error) {
		ff, err := readFile(path)
		return ff.FailOn, err
	})
	if err != nil {
		return nil, err
	}
	return parseEach(append(exprs, more...), ParseFailOn)
}

// Crossed reports whether a change from base to cand crosses the limit.
func (f FailOn) Crossed(base, cand float64) bool {
	if base == 0 {
		return false
	}
	d := (cand - base) / math.Abs(base) * 100
	if f.Percent < 0 {
		return d < f.Percent
	}
	return d > f.Percent
}

// Plan is what a command will write, known before it runs: its phases by
// family (the part of a phase's name before its first "/": sweep for
// sweep/1024, query for query/author) and, where known, the latencies each
// family writes, its groups' included (nil: not known). A Plan without
// phases knows nothing: every well-formed figure is accepted before the run
// and looked up in the results after it (Missing).
type Plan struct {
	Command string              // the command, for messages ("run")
	Phases  map[string][]string // family → latency names (nil: any)
}

// Check refuses, before any work, the first threshold whose figure no
// results of the plan's command can hold: a phase the command does not
// write (qurey.eose.p99), or a latency its phase does not write
// (publish.okk.p99). Names it cannot know (a rate or count key, a
// conformance check, a phase whose latencies are not declared) are
// accepted: a figure the command writes is never refused.
func (p Plan) Check(ts []Threshold) error {
	if len(p.Phases) == 0 {
		return nil
	}
	for _, t := range ts {
		if err := p.check(t.Figure); err != nil {
			return fmt.Errorf("threshold %q: %v", t.Expr, err)
		}
	}
	return nil
}

func (p Plan) check(figure string) error {
	scope, name, _ := strings.Cut(figure, ".")
	if figure == "verification" || scope == ConformanceScope {
		return nil
	}
	family, _, _ := strings.Cut(scope, "/")
	phases := map[string][]string{}
	for name, lats := range p.Phases {
		phases[Slug(name)] = lats
	}
	lats, ok := phases[family]
	if !ok {
		return fmt.Errorf("%s writes no phase %s; its phases are %s", p.Command, family, strings.Join(sortedKeys(phases), ", "))
	}
	lat := latencyOf(name)
	if lats == nil || lat == "" || slices.Contains(lats, lat) {
		return nil
	}
	return fmt.Errorf("%s's phase %s writes no latency %s; its latencies are %s (each with STAT %s)",
		p.Command, family, lat, strings.Join(lats, ", "), statNames)
}

// latencyOf is the latency a figure's name (after its scope) names:
// "ok" for ok.p99 and latency.ok.p99; "" for a rate, a count, a bare
// statistic (the primary latency) or a verification.
func latencyOf(name string) string {
	if strings.HasPrefix(name, "rates.") || strings.HasPrefix(name, "counts.") {
		return ""
	}
	if i := strings.Index(name, "."); i > 0 && statRE.MatchString(name[i+1:]) {
		return name[:i] // latency.p99: the latency named "latency"
	}
	if l, ok := strings.CutPrefix(name, "latency."); ok {
		return latencyOf(l)
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
