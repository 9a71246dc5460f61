package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/safe"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/threshold"
)

// figure is one comparable figure of a relay over its runs: a rate, or a
// latency percentile, of a phase or of a group of a phase.
type figure struct {
	phase, name, unit string
	values            []float64
	status            string
	lowerBetter       bool
	fmt               func(float64) string
}

// figures extracts, in a stable order, every rate and the p50/p99 of every
// latency of runs' phases and groups, one value per run that holds it.
func figures(runs []*results.Run) []*figure {
	var out []*figure
	idx := map[string]*figure{}
	phasesOf := map[string][]*results.Phase{}
	add := func(phase, name, unit string, v float64, lower bool, f func(float64) string, p *results.Phase) {
		k := phase + "\x00" + name
		fg := idx[k]
		if fg == nil {
			fg = &figure{phase: phase, name: name, unit: unit, lowerBetter: lower, fmt: f}
			idx[k] = fg
			out = append(out, fg)
		}
		fg.values = append(fg.values, v)
		phasesOf[k] = append(phasesOf[k], p)
	}
	lats := func(phase string, lat map[string]*results.Histogram, p *results.Phase) {
		names := sortedKeys(lat)
		prim := results.PrimaryLatency(lat)
		sort.SliceStable(names, func(i, j int) bool { return names[i] == prim && names[j] != prim })
		for _, n := range names {
			for _, q := range []float64{50, 99} {
				if v, ok := latQ(lat[n], q); ok {
					add(phase, fmt.Sprintf("%s p%g", latencyLabel(n), q), "ns", float64(v), true, fmtDur, p)
				}
			}
		}
	}
	for _, r := range runs {
		for i := range r.Phases {
			p := &r.Phases[i]
			for _, k := range sortedKeys(p.Rates) {
				add(p.Name, rateName(k), "1/s", shownRate(k, p.Rates[k]), false, shownFmt(k), p)
			}
			lats(p.Name, p.Latency, p)
			for _, g := range p.Groups {
				gp := p.Name + "/" + g.Name
				for _, k := range sortedKeys(g.Rates) {
					add(gp, rateName(k), "1/s", shownRate(k, g.Rates[k]), false, shownFmt(k), p)
				}
				lats(gp, g.Latency, p)
			}
		}
	}
	for k, fg := range idx {
		fg.status = aggStatus(phasesOf[k])
	}
	return out
}

// rateName shortens a rate key for tables: "events_per_sec" → "events/s".
func rateName(k string) string {
	if base, ok := strings.CutSuffix(k, "_per_sec"); ok {
		if base == "mb" {
			return "MiB/s" // its values through shownRate
		}
		return humanName(base) + "/s"
	}
	return humanName(k)
}

// alpha is the significance level of the Mann-Whitney U test.
const alpha = 0.05

// Compare writes a headline per relay present in both base and cand (the
// main figure's ratio, how many figures changed beyond noise), then, for
// each such relay, every figure (rates, latency p50/p99 of each phase and group): the baseline and
// candidate medians, their ratio, the change in percent and whether it is
// beyond run-to-run noise. With at least two runs on each side it uses a
// two-sided Mann-Whitney U test at α = 0.05 (as benchstat does) and prints
// "~" when the change is not significant; with one run on a side the noise
// is unknown and it says so. Each side's verdict is stated under what it
// ran. format is "text" (or "" or "summary") or "md"; CompareHTML writes
// the HTML page.
func Compare(w io.Writer, base, cand []*results.File, format string) error {
	if len(base) == 0 || len(cand) == 0 {
		return fmt.Errorf("compare needs baseline and candidate results files")
	}
	md := false
	switch format {
	case "", "text", "summary":
	case "md", "markdown":
		md = true
	default:
		return fmt.Errorf("unknown compare format %q (want text, md or html)", format)
	}
	ab, err := abTables(base, cand)
	if err != nil {
		return err
	}
	esc := inert
	if md {
		esc = mdText
	} else {
		w = &inertWriter{w: w} // no string in it acts on the terminal
	}
	bw := bufio.NewWriter(w)
	if md {
		fmt.Fprintln(bw, "# Baseline vs candidate")
	} else {
		fmt.Fprintln(bw, "=== Baseline vs Candidate ===")
	}
	fmt.Fprintln(bw)
	for _, h := range ab.heads {
		if md {
			fmt.Fprintf(bw, "**%s**\n\n", mdText(h))
		} else {
			fmt.Fprintln(bw, esc(h))
		}
	}
	if !md {
		fmt.Fprintln(bw)
	}
	for _, side := range abSides(base, cand) {
		if md {
			fmt.Fprintf(bw, "## %s\n\n", side.name)
			verdictMarkdown(bw, side.files)
		} else {
			fmt.Fprintf(bw, "%s:\n", side.name)
		}
		writeSide(bw, side.files, md)
		fmt.Fprintln(bw)
	}
	for _, t := range ab.tables {
		if md {
			t.markdown(bw)
		} else {
			fmt.Fprintf(bw, "%s:\n", t.title)
			t.text(bw, "  ")
			fmt.Fprintln(bw)
		}
	}
	fmt.Fprintln(bw, ab.legend())
	for _, k := range ab.onlyBase {
		fmt.Fprintf(bw, "Only in baseline: %s\n", esc(k))
	}
	for _, k := range ab.onlyCand {
		fmt.Fprintf(bw, "Only in candidate: %s\n", esc(k))
	}
	return bw.Flush()
}

// writeSide writes what a side's files ran: the header lines they all
// share once, then each file's own (with its verdict in text; Markdown
// lists the verdicts above).
func writeSide(w io.Writer, files []*results.File, md bool) {
	common, own := sideLines(files)
	line := func(indent string, l [2]string) {
		if md {
			fmt.Fprintf(w, "%s- **%s**: %s\n", indent, mdText(l[0]), mdText(l[1]))
		} else {
			fmt.Fprintf(w, "%s%-9s %s\n", indent, l[0]+":", l[1])
		}
	}
	in := "  "
	if md {
		in = ""
	}
	for _, l := range common {
		line(in, l)
	}
	for i, ls := range own {
		fin := in
		if len(own) > 1 {
			if md {
				fmt.Fprintf(w, "- **File %d**\n", i+1)
			} else {
				fmt.Fprintf(w, "  File %d:\n", i+1)
			}
			fin += "  "
		}
		for _, l := range ls {
			line(fin, l)
		}
		if !md {
			fmt.Fprintf(w, "%s%s\n", fin, verdictHead(files[i]))
		}
	}
}

// sideLines splits the header lines of a side's files into those every
// file has (the tool, machine, corpus and parameters of repeated runs:
// stated once) and each file's own (its command, time, relay URL).
func sideLines(files []*results.File) (common [][2]string, own [][][2]string) {
	all := make([][][2]string, len(files))
	n := map[[2]string]int{}
	for i, f := range files {
		all[i] = headerLines(f)
		seen := map[[2]string]bool{}
		for _, l := range all[i] {
			if !seen[l] {
				seen[l] = true
				n[l]++
			}
		}
	}
	if len(files) < 2 {
		return nil, all
	}
	for _, l := range all[0] {
		if n[l] == len(files) {
			common = append(common, l)
		}
	}
	for _, ls := range all {
		var o [][2]string
		for _, l := range ls {
			if n[l] < len(files) {
				o = append(o, l)
			}
		}
		own = append(own, o)
	}
	return common, own
}

// legend explains the cells of a comparison's tables; "~" only when a
// table has the Significance column.
func (ab abResult) legend() string {
	if !slices.ContainsFunc(ab.tables, func(t *table) bool { return slices.Contains(t.head, sigHead) }) {
		return "Cells are medians over runs; ratio = candidate / baseline. Latencies: lower is better."
	}
	return fmt.Sprintf("Cells are medians over runs (n = runs per side); ratio = candidate / baseline. \"~\": the difference is not significant (Mann-Whitney U, α=%.2f). Latencies: lower is better.", alpha)
}

// abSide is one side of a comparison.
type abSide struct {
	name  string
	files []*results.File
}

func abSides(base, cand []*results.File) []abSide {
	return []abSide{{"Baseline", base}, {"Candidate", cand}}
}

// abResult is a comparison's tables (one per relay on both sides) and the
// relays of one side only.
type abResult struct {
	tables             []*table
	heads              []string // one headline per table (abHead)
	onlyBase, onlyCand []string
}

// abTally counts a relay's figures by what the comparison can say of them.
type abTally struct {
	relay                     string
	main, ratio               string // the first figure ("publish events/s") and its ratio
	better, worse, same, noRe int    // noRe: no repeats on a side, noise unknown
	runs                      string // "n=2+2" of the main figure
}

// head is the tally as one sentence, the headline of a relay's
// comparison: the main figure's ratio, then how many figures changed
// beyond noise, or why none could be judged.
func (t abTally) head() string {
	n := t.better + t.worse + t.same + t.noRe
	if n == 0 {
		return fmt.Sprintf("Relay %s: no figure is in both baseline and candidate.", t.relay)
	}
	s := fmt.Sprintf("Relay %s: %s of the candidate is %s the baseline's; ", t.relay, t.main, t.ratio)
	if t.noRe > 0 {
		return s + fmt.Sprintf("no change of its %d figures can be told from noise with %s runs (see the note above its table).", n, strings.TrimPrefix(t.runs, "n="))
	}
	return s + fmt.Sprintf("of %d figures, %d better, %d worse beyond noise, %d unchanged within noise (Mann-Whitney U, α=%.2f, %s).", n, t.better, t.worse, t.same, alpha, t.runs)
}

// abTables compares every relay of both base and cand; none in both is an
// error. Runs that Comparable refuses (compared with --force) are said so
// first, with what differs: a forced A/B of different content sizes read
// like any other.
func abTables(base, cand []*results.File) (abResult, error) {
	ab, err := pairTables(base, cand)
	if cerr := Comparable(base, cand); cerr != nil && err == nil {
		why := strings.TrimSuffix(cerr.Error(), ": refusing to compare (--force to compare anyway)")
		ab.heads = append([]string{"Compared with --force although " + why + ": differences below may come from that, not from the relay."}, ab.heads...)
	}
	return ab, err
}

// pairTables is abTables' pairing of relays and their tables.
func pairTables(base, cand []*results.File) (abResult, error) {
	var ab abResult
	bg, cg := groupRuns(base), groupRuns(cand)
	cidx, bidx := map[string]*relayRuns{}, map[string]bool{}
	for _, g := range cg {
		cidx[g.key] = g
	}
	for _, b := range bg {
		bidx[b.key] = true
		if c := cidx[b.key]; c != nil {
			t, tally := compareTable(b, c)
			ab.tables = append(ab.tables, t)
			ab.heads = append(ab.heads, tally.head())
		} else {
			ab.onlyBase = append(ab.onlyBase, b.key)
		}
	}
	for _, c := range cg {
		if !bidx[c.key] {
			ab.onlyCand = append(ab.onlyCand, c.key)
		}
	}
	if len(ab.tables) == 0 && len(bg) == 1 && len(cg) == 1 {
		return pairLone(bg[0], cg[0]), nil
	}
	if len(ab.tables) == 0 {
		return ab, unpaired(bg, cg)
	}
	return ab, nil
}

// pairLone compares the only relay of the baseline with the only one of
// the candidate, named differently (a store change: khatru-native vs
// khatru-badger), and says so first.
func pairLone(b, c *relayRuns) abResult {
	t, tally := compareTable(b, c)
	t.title = "Relay " + b.key + " (baseline) vs " + c.key + " (candidate)"
	tally.relay = b.key + " vs " + c.key
	return abResult{tables: []*table{t}, heads: []string{
		fmt.Sprintf("Paired %s (baseline) with %s (candidate): the only relay on each side.", b.key, c.key), tally.head()}}
}

// Pairable reports, before any work, whether Compare can pair the relays
// of base with those of cand: by relay name, or the only relay on each
// side with each other. Not pairable is a usage error naming both sides'
// relays.
func Pairable(base, cand []*results.File) error {
	bg, cg := groupRuns(base), groupRuns(cand)
	if len(bg) == 1 && len(cg) == 1 {
		return nil
	}
	for _, b := range bg {
		if slices.ContainsFunc(cg, func(c *relayRuns) bool { return c.key == b.key }) {
			return nil
		}
	}
	return unpaired(bg, cg)
}

// unpaired is the error of a comparison with no relay to pair.
func unpaired(bg, cg []*relayRuns) error {
	names := func(gs []*relayRuns) string {
		if len(gs) == 0 {
			return "none"
		}
		var ns []string
		for _, g := range gs {
			ns = append(ns, safe.Line(g.key))
		}
		return strings.Join(ns, ", ")
	}
	return fmt.Errorf("no relay is in both baseline (%s) and candidate (%s): A/B pairs runs by relay name; give both sides the same relays, or one relay on each side to pair those two", names(bg), names(cg))
}

// compareTable compares the figures of one relay's baseline and candidate runs.
func compareTable(b, c *relayRuns) (*table, abTally) {
	t := &table{title: "Relay " + b.key, head: []string{"Phase", "Figure", "Baseline", "Candidate", "Ratio", "Delta", sigHead, "Phase status"},
		left: map[int]bool{1: true, 6: true, 7: true}}
	tally := abTally{relay: b.key}
	cf := map[string]*figure{}
	for _, f := range figures(c.runs) {
		cf[f.phase+"\x00"+f.name] = f
	}
	for _, bf := range figures(b.runs) {
		c := cf[bf.phase+"\x00"+bf.name]
		if c == nil {
			continue
		}
		bm := median(append([]float64(nil), bf.values...))
		cm := median(append([]float64(nil), c.values...))
		sig := significance(bf.values, c.values)
		delta := fmtDelta(bm, cm)
		if tally.main == "" {
			tally.main, tally.ratio = bf.phase+" "+bf.name, fmtRatio(bm, cm)
			tally.runs = fmt.Sprintf("n=%d+%d", len(bf.values), len(c.values))
		}
		switch {
		case len(bf.values) < 2 || len(c.values) < 2 || minP(len(bf.values), len(c.values)) >= alpha:
			tally.noRe++
		case strings.HasPrefix(sig, "p=") && bm != cm && (cm < bm) == bf.lowerBetter:
			delta += " better"
			tally.better++
		case strings.HasPrefix(sig, "p=") && bm != cm:
			delta += " worse"
			tally.worse++
		default:
			tally.same++
		}
		status := "ok"
		if bf.status != "ok" || c.status != "ok" {
			status = "baseline: " + bf.status + "; candidate: " + c.status
		}
		t.add(bf.phase, bf.name, bf.fmt(bm), c.fmt(cm), fmtRatio(bm, cm), delta, sig, status)
	}
	if len(t.rows) > 0 && tally.noRe == len(t.rows) {
		// No row can be judged: say why once, above the table, instead
		// of in every row.
		t.dropColumn(slices.Index(t.head, sigHead))
		t.lead = append(t.lead, unjudged(len(b.runs), len(c.runs)))
	}
	return t, tally
}

// sigHead is the head of a comparison table's significance column.
const sigHead = "Significance"

// unjudged says why no figure of a comparison with nb baseline and nc
// candidate runs can be told from noise, and how many runs it takes.
func unjudged(nb, nc int) string {
	need := 2
	for minP(need, need) >= alpha {
		need++
	}
	sides := fmt.Sprintf("the baseline has %s and the candidate %d", numfmt.Count(nb, "run"), nc)
	why := fmt.Sprintf("too few for Mann-Whitney U to ever reach α=%.2f", alpha)
	if nb < 2 || nc < 2 {
		why = "so the run-to-run noise is unknown"
	}
	return fmt.Sprintf("Significance not judged (n=%d+%d): %s, %s; it takes %d runs on each side (--repeat %d or more). Any difference below may be noise.", nb, nc, sides, why, need, need)
}

// significance describes whether two samples differ beyond noise.
func significance(x, y []float64) string {
	n := fmt.Sprintf("n=%d+%d", len(x), len(y))
	if len(x) < 2 || len(y) < 2 {
		return "no repeats: noise unknown (" + n + ")"
	}
	p := mannWhitneyP(x, y)
	if p < alpha {
		return fmt.Sprintf("p=%.3f %s", p, n)
	}
	if minP(len(x), len(y)) >= alpha {
		return fmt.Sprintf("~ (p=%.3f %s: too few runs to ever reach α=%.2f)", p, n, alpha)
	}
	return fmt.Sprintf("~ (p=%.3f %s)", p, n)
}

// mannWhitneyP returns the two-sided p-value of the Mann-Whitney U test of
// samples x and y. Without ties and for small samples it uses the exact
// distribution of U; otherwise the normal approximation with tie and
// continuity corrections.
func mannWhitneyP(x, y []float64) float64 {
	n1, n2 := len(x), len(y)
	type obs struct {
		v float64
		x bool
	}
	all := make([]obs, 0, n1+n2)
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	// Mid-ranks, and the tie correction term Σ(t³ - t).
	var r1, tie float64
	ties := false
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // ranks i+1 … j, averaged
		for k := i; k < j; k++ {
			if all[k].x {
				r1 += rank
			}
		}
		if t := float64(j - i); t > 1 {
			ties = true
			tie += t*t*t - t
		}
		i = j
	}
	u1 := r1 - float64(n1*(n1+1))/2
	u := math.Min(u1, float64(n1*n2)-u1)
	if !ties && n1*n2 <= 400 {
		return math.Min(1, 2*exactUCDF(n1, n2, int(math.Round(u))))
	}
	m := float64(n1 * n2)
	mu := m / 2
	nn := float64(n1 + n2)
	sigma := math.Sqrt(m / 12 * ((nn + 1) - tie/(nn*(nn-1))))
	if sigma == 0 {
		return 1
	}
	z := (math.Abs(u-mu) - 0.5) / sigma
	if z < 0 {
		z = 0
	}
	return math.Min(1, math.Erfc(z/math.Sqrt2))
}

// exactUCDF returns P(U ≤ u) for samples of sizes n1 and n2 without ties,
// counting the rank arrangements that give each U.
func exactUCDF(n1, n2, u int) float64 {
	// f[i][j][k]: arrangements of i x's and j y's with U = k.
	maxU := n1 * n2
	f := make([][][]float64, n1+1)
	for i := range f {
		f[i] = make([][]float64, n2+1)
		for j := range f[i] {
			f[i][j] = make([]float64, maxU+1)
		}
	}
	for j := 0; j <= n2; j++ {
		f[0][j][0] = 1
	}
	for i := 1; i <= n1; i++ {
		f[i][0][0] = 1
		for j := 1; j <= n2; j++ {
			for k := 0; k <= i*j; k++ {
				// The largest value is an x (it beats all j y's) or a y.
				var a float64
				if k-j >= 0 {
					a = f[i-1][j][k-j]
				}
				f[i][j][k] = a + f[i][j-1][k]
			}
		}
	}
	var le, total float64
	for k := 0; k <= maxU; k++ {
		total += f[n1][n2][k]
		if k <= u {
			le += f[n1][n2][k]
		}
	}
	return le / total
}

// minP is the smallest two-sided p-value the exact test can give for
// samples of sizes n1 and n2: 2 / C(n1+n2, n1).
func minP(n1, n2 int) float64 {
	c := 1.0
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return math.Min(1, 2/c)
}

// FailOnResult is one --fail-on limit checked for one relay.
type FailOnResult struct {
	FailOn      string
	Relay       string
	Figure      string
	Unit        string
	Base, Cand  float64 // medians
	N1, N2      int
	P           float64
	Significant bool // p < α
	Crossed     bool // the change is beyond the limit
	Failed      bool // both
	Error       string
}

// CheckFailOn checks each limit for every relay in both base and cand (or
// the relay it names), or, as the comparison pairs them, the only relay of
// each side with each other (a store change: "khatru-native vs
// khatru-badger"): it fails only when the change of the medians is beyond
// the limit and significant by the Mann-Whitney U test (α = 0.05); a
// change that is not significant ("~") never fails. Too few runs to ever
// reach significance, a figure absent, or no relay to judge is an Error (a
// usage error): a limit that judged nothing never passes.
func CheckFailOn(base, cand []*results.File, fos []threshold.FailOn) []FailOnResult {
	both, bruns, cruns, names := failOnPairs(base, cand)
	var out []FailOnResult
	for _, fo := range fos {
		sel := both
		if fo.Relay != "" {
			sel = nil
			for _, k := range both {
				if slices.Contains(names[k], fo.Relay) {
					sel = append(sel, k)
				}
			}
		}
		if len(sel) == 0 {
			why := fmt.Sprintf("no relay %q in both baseline and candidate; there are: %s", fo.Relay, strings.Join(both, ", "))
			if len(both) == 0 {
				why = "no relay of the baseline is in the candidate to judge (A/B pairs runs by relay name, or the only relay on each side)"
			}
			out = append(out, FailOnResult{FailOn: fo.Expr, Relay: fo.Relay, Figure: fo.Figure, Error: why})
			continue
		}
		for _, k := range sel {
			r := FailOnResult{FailOn: fo.Expr, Relay: k, Figure: fo.Figure}
			bv, unit := threshold.Values(bruns[k], fo.Figure)
			cv, _ := threshold.Values(cruns[k], fo.Figure)
			r.Unit, r.N1, r.N2 = unit, len(bv), len(cv)
			switch {
			case len(bv) == 0:
				r.Error = "baseline: " + threshold.Missing(bruns[k], fo.Figure)
			case len(cv) == 0:
				r.Error = "candidate: " + threshold.Missing(cruns[k], fo.Figure)
			case minP(len(bv), len(cv)) >= alpha:
				r.Error = fmt.Sprintf("%d+%d runs can never show a significant change (α=%.2f): give each side at least 4 runs (compare --repeat 4)", len(bv), len(cv), alpha)
			}
			if r.Error != "" {
				out = append(out, r)
				continue
			}
			r.Base, r.Cand = threshold.Median(bv), threshold.Median(cv)
			r.P = mannWhitneyP(bv, cv)
			r.Significant = r.P < alpha
			r.Crossed = fo.Crossed(r.Base, r.Cand)
			r.Failed = r.Significant && r.Crossed
			out = append(out, r)
		}
	}
	return out
}

// failOnPairs are the relays --fail-on judges, as the comparison pairs
// them (abTables): each relay in both base and cand by name, else the only
// relay of each side with each other, keyed "BASE vs CAND". Their runs on
// each side are bruns and cruns; names are the relay names a limit's
// {relay=NAME} may give for each key.
func failOnPairs(base, cand []*results.File) (keys []string, bruns, cruns map[string][]*results.Run, names map[string][]string) {
	bk, bruns := threshold.Relays(base...)
	ck, cruns := threshold.Relays(cand...)
	names = map[string][]string{}
	for _, k := range bk {
		if len(cruns[k]) > 0 {
			keys = append(keys, k)
			names[k] = []string{k}
		}
	}
	if len(keys) > 0 || len(bk) != 1 || len(ck) != 1 {
		return keys, bruns, cruns, names
	}
	k := bk[0] + " vs " + ck[0]
	names[k] = []string{k, bk[0], ck[0]}
	return []string{k}, map[string][]*results.Run{k: bruns[bk[0]]}, map[string][]*results.Run{k: cruns[ck[0]]}, names
}

// WriteFailOn writes the --fail-on results as a table (Markdown with md).
func WriteFailOn(w io.Writer, rs []FailOnResult, md bool) {
	t := failOnTable(rs)
	fmt.Fprintln(w)
	if md {
		t.markdown(w)
		return
	}
	fmt.Fprintf(w, "%s:\n", t.title)
	t.text(w, "  ")
}

// failOnTable is the table of --fail-on results.
func failOnTable(rs []FailOnResult) *table {
	t := &table{title: "Fail-on limits", head: []string{"Limit", "Relay", "Baseline", "Candidate", "Delta", "Significance", "Result"}, left: map[int]bool{1: true, 5: true, 6: true}}
	for _, r := range rs {
		if r.Error != "" {
			t.add(r.FailOn, r.Relay, dash, dash, dash, dash, "ERROR: "+r.Error)
			continue
		}
		sig := fmt.Sprintf("p=%.3f n=%d+%d", r.P, r.N1, r.N2)
		if !r.Significant {
			sig = "~ (" + sig + ")"
		}
		res := "pass"
		switch {
		case r.Failed:
			res = "FAIL"
		case r.Crossed:
			res = "pass (~: beyond the limit, not significant)"
		}
		t.add(r.FailOn, r.Relay, threshold.FormatFigure(r.Base, r.Unit), threshold.FormatFigure(r.Cand, r.Unit), fmtDelta(r.Base, r.Cand), sig, res)
	}
	return t
}

// FailOnJUnit are the --fail-on results as JUnit test cases (suite "fail-on").
func FailOnJUnit(rs []FailOnResult) []JUnitCase {
	var cases []JUnitCase
	for _, r := range rs {
		c := JUnitCase{Suite: "fail-on", Name: r.FailOn, Classname: "relaybench.fail-on." + r.Relay}
		msg := fmt.Sprintf("%s: baseline %s, candidate %s (%s, p=%.3f, n=%d+%d)", r.Figure, threshold.FormatFigure(r.Base, r.Unit), threshold.FormatFigure(r.Cand, r.Unit), fmtDelta(r.Base, r.Cand), r.P, r.N1, r.N2)
		switch {
		case r.Error != "":
			c.Err(r.Error)
		case r.Failed:
			c.Fail(msg)
		default:
			c.Output = msg
		}
		cases = append(cases, c)
	}
	return cases
}

// fmtRatio formats candidate / baseline: "1.23×"; a dash when the baseline
// is zero.
func fmtRatio(base, cand float64) string {
	if base == 0 || math.IsNaN(base) || math.IsNaN(cand) {
		return dash
	}
	return strconv.FormatFloat(cand/base, 'f', 2, 64) + "×"
}
