package verify

import (
	"fmt"

	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
)

// Reply is one complete answer to a REQ: the filter it answers (Filter, or
// Filters for a REQ with several: the answer owes their union, each event
// once; see answerUnion), its valid events in the order they came, and how
// many events were invalid.
type Reply struct {
	Filter  *nostr.Filter
	Filters []*nostr.Filter // a REQ's filters; when set, Filter is ignored
	Events  []*nostr.Event
	Invalid int64
}

// Judgement is the verification of a set of answers (a phase's) under the
// reading of the store chosen from all of them (see Judge).
type Judgement struct {
	Reading    Reading                // the reading the figures use
	Consistent bool                   // every answer fits Reading: no missing or extra event
	Answers    []results.Verification // one per reply, under Reading
	Cap        int                    // per-REQ cap inferred under Reading (0: none inferred)
	// StoredAfterAll is how many of the model's Unknown events (sent, no
	// decisive answer) turned up in the answers: judged as accepted in
	// the answers that returned them.
	StoredAfterAll int
	Unknown        int // the model's unknown events
	// Prior is how many events the run never published the answers of a
	// relay that held events before the run (Model.Prior) returned, each
	// answer counting its own: judged its earlier data, stored.
	Prior  int
	fits   [2][]bool // per reading, per answer: no missing or extra event
	held   []bool    // the answer returned superseded versions
	differ bool      // the reading changes some answer's figures
}

// Judge checks every reply against model under both readings of the store
// and picks the one that fits them all: latest only when it does (as a relay
// that discards older versions), else keeps superseded versions when that
// does, else (the relay fits neither consistently) the reading with fewer
// missing and extra events in all, latest only on a tie. An answer fits a
// reading when it has no missing and no extra event under it; answers with
// no replaceable event in play fit both alike. relayCap is the announced
// per-REQ cap (0: none); when it is 0 and inferCap is set, a cap is inferred
// under each reading from its own expectations (InferCapAs). With a nil
// model the answers are only checked for validity, filter match, order and
// duplicates. The model's unknown events (NewModelUnknown) that some answer
// returned count as accepted in every answer; the others are neither owed
// nor forbidden (see bounds).
func Judge(replies []Reply, model *Model, relayCap int, inferCap bool) *Judgement {
	j := &Judgement{Answers: make([]results.Verification, len(replies)), Consistent: true}
	if model == nil {
		for i, r := range replies {
			j.Answers[i] = r.judge(bounds{}, relayCap, LatestOnly)
		}
		toldAnswers(replies, j.Answers) // watch.go
		return j
	}
	// Each answer is judged between its own bounds: an unknown event that
	// answer returned was stored when it was sent; one it did not return
	// may not have been stored yet (a relay still working through its queue
	// stores events after its OKs timed out, between two answers). Answers
	// that returned no unknown event share the bounds of none seen.
	none := model.bounds(nil)
	bs := make([]bounds, len(replies))
	for i, r := range replies {
		bs[i] = none
		if len(seenUnknown(replies[i:i+1], model)) > 0 || len(priorIn(replies[i:i+1], model)) > 0 {
			bs[i] = model.bounds([]Reply{r})
		}
	}
	j.StoredAfterAll, j.Unknown = len(seenUnknown(replies, model)), len(model.Unknown)
	for i := range replies {
		j.Prior += len(priorIn(replies[i:i+1], model))
	}
	var answers [2][]results.Verification
	var caps [2]int
	var wrong [2]int64
	var fitAll [2]bool
	for _, rd := range []Reading{LatestOnly, KeepsSuperseded} {
		c := relayCap
		if c == 0 && inferCap {
			var filters []*nostr.Filter
			var parsed [][]*nostr.Event
			for _, r := range replies {
				if fs := r.filters(); len(fs) == 1 { // a cap shows on one filter's answer
					filters, parsed = append(filters, fs[0]), append(parsed, r.Events)
				}
			}
			caps[rd] = inferCapOf(filters, parsed, none.lo, rd)
			c = caps[rd]
		}
		answers[rd] = make([]results.Verification, len(replies))
		j.fits[rd] = make([]bool, len(replies))
		fitAll[rd] = true
		for i, r := range replies {
			v := r.judge(bs[i], c, rd)
			answers[rd][i] = v
			j.fits[rd][i] = v.Missing == 0 && v.Extra == 0
			fitAll[rd] = fitAll[rd] && j.fits[rd][i]
			wrong[rd] += v.Missing + v.Extra
		}
	}
	j.held = make([]bool, len(replies))
	for i, r := range replies {
		l, k := &answers[LatestOnly][i], &answers[KeepsSuperseded][i]
		if l.Missing != k.Missing || l.Extra != k.Extra {
			j.differ = true
		}
		j.held[i] = holdsSuperseded(r, bs[i].lo)
	}
	switch {
	case fitAll[LatestOnly]:
		j.Reading = LatestOnly
	case fitAll[KeepsSuperseded]:
		j.Reading = KeepsSuperseded
	case wrong[KeepsSuperseded] < wrong[LatestOnly]:
		j.Reading, j.Consistent = KeepsSuperseded, false
	default:
		j.Reading, j.Consistent = LatestOnly, false
	}
	j.Answers, j.Cap = answers[j.Reading], caps[j.Reading]
	toldAnswers(replies, j.Answers) // watch.go
	return j
}

// holdsSuperseded reports whether a reply returned a matching accepted
// event that a newer version had replaced.
func holdsSuperseded(r Reply, lo *view) bool {
	for _, e := range r.Events {
		if acc, replaced := lo.accepted(e.ID); acc && replaced && matchesAny(r.filters(), e) {
			return true
		}
	}
	return false
}

// SupersededNote explains a relay found to keep superseded versions: held
// of n answers returned some.
func SupersededNote(held, n int) string {
	return fmt.Sprintf("the relay keeps superseded versions of replaceable and addressable events (kinds 0, 3, 10000–19999, 30000–39999) and returns them next to the newest one (%d of %d answers held superseded versions): NIP-01 allows it (only the latest MUST be stored, older versions MAY be discarded), so every accepted version was expected; clients that expect only the newest version must pick it themselves", held, n)
}

// Apply names the semantics found and explains the reading on v, a
// verification made of the answers of j numbered in answers (all of them
// when none is given; give the subset for per-group figures). When the
// relay consistently keeps superseded versions, v.Semantics is set and a
// note says how many answers held some (a subset where none did gets the
// semantics only). When the answers fit neither reading consistently and
// the reading mattered, a note gives the counts. When the reading changed
// nothing, v is left alone. For the whole set (no answers given), a note
// names the unknown events that turned up and sets v.StoredUnknown. Call
// before Finish.
func (j *Judgement) Apply(v *results.Verification, answers ...int) {
	if j == nil {
		return
	}
	subset := len(answers) > 0
	if !subset && j.Unknown > 0 {
		v.StoredUnknown += int64(j.StoredAfterAll)
		v.Notes = AppendUnique(v.Notes, UnknownNote(j.StoredAfterAll, j.Unknown))
	}
	if !subset && j.Prior > 0 {
		v.HeldBefore += int64(j.Prior)
		v.Notes = AppendUnique(v.Notes, PriorNote(j.Prior))
	}
	if !j.differ {
		return
	}
	if !subset {
		answers = make([]int, len(j.Answers))
		for i := range answers {
			answers[i] = i
		}
	}
	var held, onlyL, onlyK, neither int
	for _, i := range answers {
		if j.held[i] {
			held++
		}
		fl, fk := j.fits[LatestOnly][i], j.fits[KeepsSuperseded][i]
		switch {
		case fl && !fk:
			onlyL++
		case fk && !fl:
			onlyK++
		case !fl && !fk:
			neither++
		}
	}
	switch {
	case j.Consistent && j.Reading == KeepsSuperseded:
		v.Semantics = KeepsSuperseded.String()
		if held > 0 || !subset {
			v.Notes = AppendUnique(v.Notes, SupersededNote(held, len(answers)))
		}
	case !j.Consistent && onlyL+onlyK+neither > 0:
		v.Notes = AppendUnique(v.Notes, fmt.Sprintf("answers fit neither reading of replaceable events consistently: %d of %d answers fit only %q (older versions hidden), %d only %q, %d neither; %d held superseded versions; the figures use the reading that fits better (%s)",
			onlyL, len(answers), LatestOnly.String(), onlyK, KeepsSuperseded.String(), neither, held, j.Reading))
	}
}
