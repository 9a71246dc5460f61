package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/relaybench/relaybench/results"
)

// The alone part of a mixed run is a fair baseline for its publishing
// side's OK p99 only when the client kept its schedule there. Events the
// client sent late (send_lateness, from each event's intended time) say it
// did not get the CPU it needed when it wanted it, and neither, on the same
// cores, did its reading of the OKs nor the relay: a p99 taken then times
// the machine's other work as much as the relay. On a shared 2-core machine
// whose other work came and went, publish/alone sent 7-73 ms late at p99
// while publish/together sent within 1-2 ms, and the headline read "OK p99
// 0.13× (faster together)"; under steady load every run read "slower
// together". The alone baseline is doubted when its lateness p99 is over
// lateFloor and either
//   - at least lateShareOfOK of its OK p99: the client could not keep its
//     schedule by as much as the latency it measured, or
//   - at least lateVsTogether times publish/together's: the machine was
//     busier during the alone part.
const (
	lateFloor      = int64(time.Millisecond) // the lateness note's "events went out late"
	lateShareOfOK  = 0.5
	lateVsTogether = 4.0
)

// mixedLateKey is the results key of a publishing group's send lateness.
const mixedLateKey = "send_lateness"

// busierBy is how many more cores other processes must have kept busy
// during a side's alone part than during together for its alone p99 to be
// doubted (results.RateOthersCores, measured per part).
const busierBy = 0.5

// busierAlone is why side's (publish, query) alone part ran on a busier
// machine than together, by the cores other processes kept busy in each;
// "" when it did not, or the figures are not there (a relay not observed,
// not Linux, an earlier results file).
func busierAlone(p *results.Phase, side string) string {
	alone, tog := groupNamed(p, side+"/alone"), groupNamed(p, side+"/together")
	if alone == nil || tog == nil {
		return ""
	}
	a, okA := alone.Rates[results.RateOthersCores]
	t, okT := tog.Rates[results.RateOthersCores]
	if !okA || !okT || a < t+busierBy {
		return ""
	}
	return fmt.Sprintf("other processes kept %.2f cores busy during %s/alone, %.2f during together: the machine was busier during the alone part", a, side, t)
}

// baselineDoubt is why side's alone p99 of mixed phase p is not a fair
// baseline, "" when its groups give no such evidence (or do not hold the
// figures: a results file of another kind): the machine busier during the
// alone part (busierAlone), or, publishing, a note saying its p99 came from
// one second (the preload's tail, a stall), or the client's lateness.
func baselineDoubt(p *results.Phase, side string) string {
	if why := busierAlone(p, side); why != "" {
		return why
	}
	if side == "query" {
		return lateQueries(p)
	}
	if side != "publish" {
		return ""
	}
	if oneSecondNote(p) != "" {
		return "publish/alone's OK p99 came from one second of the part (its note says which, and the other seconds' p99)"
	}
	alone, tog := groupNamed(p, "publish/alone"), groupNamed(p, "publish/together")
	if alone == nil {
		return ""
	}
	late, ok := latQ(alone.Latency[mixedLateKey], 99)
	if !ok || late <= lateFloor {
		return ""
	}
	okP99, _ := latQ(alone.Latency[results.LatencyOK], 99)
	if okP99 > 0 && float64(late) >= lateShareOfOK*float64(okP99) {
		return fmt.Sprintf("the client sent publish/alone's events late (p99 %s behind their schedule, against its OK p99 of %s): it could not keep its schedule, so the alone p99 times the machine's other work as much as the relay",
			fmtDur(float64(late)), fmtDur(float64(okP99)))
	}
	if tog == nil {
		return ""
	}
	togLate, _ := latQ(tog.Latency[mixedLateKey], 99)
	togLate = max(togLate, 1) // on schedule together: any lateness alone is more
	if float64(late) < lateVsTogether*float64(togLate) {
		return ""
	}
	return fmt.Sprintf("the client sent publish/alone's events late (p99 %s behind their schedule, %s publish/together's %s): the machine was busier during the alone part",
		fmtDur(float64(late)), fmtTimes(float64(late)/float64(togLate)), fmtDur(float64(togLate)))
}

// The querying side has no send lateness figure, but counts the REQs it
// started more than 1 ms after their scheduled time (late_start: a query
// connection still awaiting an EOSE, or a client that woke late). The EOSE
// p99 reads the slowest 1 % of the REQs: when more than that share of
// query/alone's REQs started late (and at least 2), the alone p99 can be a
// late REQ's, timing the client's wake-up as much as the relay, and its
// alone part is doubted when it also started a larger share late than
// together did (together counted as at least one late REQ). Walks' runs
// read "EOSE p99 0.0659× (faster together)" at load average 15 with 29 of
// 100 REQs late alone, 1 together; "0.58×" with 16 of 250 alone, 4
// together; "0.27×" at load 17 with 7 of 150 alone, 1 together; "0.68×" at
// load 3.8 with 65 of 500 alone, 24 together, the EOSE p50 slower together
// (an earlier rule asked for 4× together's share).
const (
	lateQueryShare = 0.01 // above the p99: the share of REQs the p99 reads
	lateQueryMin   = 2
)

// lateQueries is why query/alone's EOSE p99 is not a fair baseline by its
// late starts ("" when it is, or the figures are not there).
func lateQueries(p *results.Phase) string {
	alone, tog := groupNamed(p, "query/alone"), groupNamed(p, "query/together")
	if alone == nil || tog == nil {
		return ""
	}
	la, na := alone.Counts["late_start"], alone.Counts["requested"]
	lt, nt := tog.Counts["late_start"], tog.Counts["requested"]
	if na <= 0 || nt <= 0 || la < lateQueryMin || float64(la) <= lateQueryShare*float64(na) {
		return ""
	}
	shareA, shareT := float64(la)/float64(na), float64(max(lt, 1))/float64(nt)
	if shareA <= shareT {
		return ""
	}
	return fmt.Sprintf("the client started %d of query/alone's %d REQs late (more than 1 ms after their schedule; more than the 1%% a p99 reads), against %d of %d together: the alone p99 times the client's late starts as much as the relay", la, na, lt, nt)
}

// groupNamed is p's group called name (nil: none).
func groupNamed(p *results.Phase, name string) *results.Group {
	for i := range p.Groups {
		if p.Groups[i].Name == name {
			return &p.Groups[i]
		}
	}
	return nil
}

// notAFinding is what the headline says of side s's p99 ratio below 1
// when its alone baseline is doubted: the ratio, and why it is no finding.
func notAFinding(s mixedSide) string {
	return fmt.Sprintf("%s p99 %s together/alone is not a finding: %s", s.lat, fmtTimes(s.p99Ratio), s.doubt)
}

// noFinding is what a side's p99 ratio adds where it is shown on its own
// (the summary's side row, the reports' table): ", within noise" when the
// two p99s' intervals overlap (mixedSide.noise), ", not a finding" when it
// is below 1 against a doubted baseline; "" otherwise.
func noFinding(s mixedSide) string {
	switch {
	case s.p99Ratio <= 0 || fmtTimes(s.p99Ratio) == fmtTimes(1):
		return ""
	case s.noise:
		return ", within noise"
	case notAFindingShown(s):
		return ", not a finding"
	}
	return ""
}

// notAFindingShown reports whether side s's p99 ratio is said to be no
// finding (notAFinding): below 1, beyond noise, against a doubted baseline.
func notAFindingShown(s mixedSide) bool {
	return s.doubt != "" && !s.noise && s.p99Ratio > 0 && s.p99Ratio < 1 && fmtTimes(s.p99Ratio) != fmtTimes(1)
}

// mixedDoubts are the caveats of a relay's mixed phases in the reports'
// together-vs-alone table: per side, what its p99 ratio cell adds, and the
// notes under the table that say why (each once).
type mixedDoubts struct {
	cell  map[string]string // side → " (not a finding: see below)"
	notes []string
}

// mixedTableNotes gives the table what the terminal's headline says of
// the phases ps of relay key: a p99 ratio below 1 against a doubted
// baseline is no finding, and the headline's caveats (busy machine, the
// alone p99 its first second's) follow the table.
func mixedTableNotes(key string, ps []*results.Phase) mixedDoubts {
	d := mixedDoubts{cell: map[string]string{}}
	add := func(n string) {
		if !slices.Contains(d.notes, n) {
			d.notes = append(d.notes, n)
		}
	}
	for _, p := range ps {
		sides := mixedSides(p)
		for _, s := range sides {
			switch {
			case s.noise && noFinding(s) != "":
				d.cell[s.name] = " (within noise)"
			case notAFindingShown(s):
				d.cell[s.name] = " (not a finding: see below)"
				add(key + ", " + s.name + ": " + notAFinding(s))
			}
		}
		if c := strings.TrimSpace(mixedCaveat(p, sides)); c != "" {
			add(key + ": " + strings.TrimSuffix(strings.TrimPrefix(c, "("), ")"))
		}
	}
	return d
}
