package merge

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
)

// The cross-segment check. Each segment's relay holds every segment's
// events, so a segment can check only the validity of its answers; it
// records them (results.Answer) with the set of corpus indexes the relay
// stored for it (Phase.Stored). The merge rebuilds the corpus, takes the
// union of the stored sets as the model and judges every answer with the
// one verifier (verify.Judge). An answer to a REQ sent while another
// segment was still publishing may hold that segment's events or not: for
// it, the events of segments whose publish window had ended before the REQ
// are required, and those of segments still publishing are allowed (the
// model is the required events plus the allowed ones the relay returned).

// segWindow is one segment's publish window on the relay's clock (unix ns)
// and what the relay stored for it.
type segWindow struct {
	start, end int64
	stored     []int // corpus indexes
	unknown    []int // corpus indexes sent without a decisive answer
	tol        int64 // the segment's clock uncertainty
}

// indexes are the corpus indexes of an encoded index set ("": none), in
// order.
func indexes(encoded string, n int) ([]int, error) {
	if encoded == "" {
		return nil, nil
	}
	set, err := results.DecodeIndexSet(encoded, n)
	if err != nil {
		return nil, err
	}
	var out []int
	for idx, ok := range set {
		if ok {
			out = append(out, idx)
		}
	}
	return out, nil
}

// clock converts segment g's wall-clock unix ns to the relay's clock where
// its offset was measured.
func clock(g *results.Segment, t int64) int64 {
	if g != nil && g.ClockOffsetSource != "" {
		return t - g.ClockOffsetNs
	}
	return t
}

func clockErr(g *results.Segment) int64 {
	if g != nil && g.ClockOffsetSource != "" {
		return g.ClockOffsetErrNs
	}
	return 0
}

// crossCheck judges the merged run's query phases across segments; false
// when they could not be (a segment recorded no answers, no corpus).
func crossCheck(ctx context.Context, out *results.Run, runs []*results.Run, o Options) (bool, error) {
	n := len(runs)
	if n < 2 {
		return true, nil
	}
	var queries []int
	for pi := range out.Phases {
		if out.Phases[pi].Workload == "query" {
			queries = append(queries, pi)
		}
	}
	if len(queries) == 0 {
		return true, nil
	}
	pub := -1
	for pi := range out.Phases {
		if out.Phases[pi].Workload == "publish" {
			pub = pi
			break
		}
	}
	unverified := func(why string) (bool, error) {
		for _, pi := range queries {
			ph := &out.Phases[pi]
			if ph.Verification == nil {
				continue
			}
			ph.Verification.Verified = false
			ph.Verification.Notes = verify.AppendUnique(ph.Verification.Notes, "not checked across segments: "+why)
			verify.Finish(ph.Verification)
		}
		return false, nil
	}
	if pub < 0 {
		// Nothing was published in this test: the answers could only be
		// checked for validity, which each segment did.
		return true, nil
	}
	for i, r := range runs {
		if r.Phases[pub].Stored == "" && r.Phases[pub].Counts[results.CountAccepted] > 0 {
			return unverified(fmt.Sprintf("segment %d's results hold no record of the events the relay stored (a relaybench without answer records?)", i))
		}
		for _, pi := range queries {
			if ph := &r.Phases[pi]; len(ph.Answers) == 0 && ph.Counts[results.CountQueries] > 0 {
				return unverified(fmt.Sprintf("segment %d's results hold no query answers (a relaybench without answer records?)", i))
			}
		}
	}
	if o.Corpus == nil {
		return unverified("the corpus was not rebuilt")
	}
	evs, err := o.Corpus(ctx, runs[0])
	if err != nil {
		return false, fmt.Errorf("rebuild the corpus to check the answers across segments: %w", err)
	}
	if want := runs[0].Corpus; len(evs) != want.Events {
		return false, fmt.Errorf("the rebuilt corpus has %d events, the segments' %d", len(evs), want.Events)
	}
	wins := make([]segWindow, n)
	var union, unknown []*nostr.Event
	for i, r := range runs {
		ph := &r.Phases[pub]
		w := segWindow{tol: clockErr(r.Segment)}
		w.start = clock(r.Segment, ph.Start.UnixNano())
		w.end = clock(r.Segment, ph.Start.UnixNano()+ph.Duration)
		var err error
		if w.stored, err = indexes(ph.Stored, len(evs)); err != nil {
			return false, fmt.Errorf("segment %d: publish phase: %w", i, err)
		}
		if w.unknown, err = indexes(ph.Unknown, len(evs)); err != nil {
			return false, fmt.Errorf("segment %d: publish phase: unknown: %w", i, err)
		}
		union, unknown = appendAt(union, evs, w.stored), appendAt(unknown, evs, w.unknown)
		wins[i] = w
	}
	byKey := make(map[string]*nostr.Event, len(evs))
	for _, e := range evs {
		byKey[results.IDKey(e.ID)] = e
	}
	// Events a segment sent without a decisive answer are neither required
	// nor forbidden (another segment's copy, if accepted, is required).
	model := priorModel(verify.NewModelUnknown(union, unknown), runs)
	relayCap := runs[0].Relay.MaxLimit
	for _, pi := range queries {
		if err := judgePhase(&out.Phases[pi], runs, pi, wins, evs, byKey, model, relayCap, o.ClockTolerance); err != nil {
			return false, err
		}
	}
	return true, nil
}

// judged is one answer prepared for the verifier.
type judged struct {
	shape   string
	reply   verify.Reply
	unknown int64                     // returned ids that are no corpus event
	full    bool                      // they took every place its limits give (priorPlaces)
	model   *verify.Model             // nil: the whole model (no segment was publishing)
	may     []*nostr.Event            // in flight: stored events of segments still publishing
	keys    map[string][]*nostr.Event // in flight: the required events by replace key
}

// split is what a REQ that overlapped some segment's publishing is judged
// against.
type split struct {
	model *verify.Model
	may   []*nostr.Event
	keys  map[string][]*nostr.Event // the must events by replace key
}

// newSplit makes the split of mustSet (a byte per segment window): the
// events stored by an 'm' segment must be returned (its unknown ones are
// neither required nor forbidden), those of a 'p' segment may be.
func newSplit(wins []segWindow, mustSet []byte, evs []*nostr.Event) *split {
	sp := &split{keys: map[string][]*nostr.Event{}}
	var must, unknown []*nostr.Event
	for j, w := range wins {
		switch mustSet[j] {
		case 'm':
			must = appendAt(must, evs, w.stored)
			unknown = appendAt(unknown, evs, w.unknown)
		case 'p':
			sp.may = appendAt(appendAt(sp.may, evs, w.stored), evs, w.unknown)
		}
	}
	sp.model = verify.NewModelUnknown(must, unknown)
	for _, e := range must {
		if k, ok := verify.ReplaceKey(e); ok {
			sp.keys[k] = append(sp.keys[k], e)
		}
	}
	return sp
}

// appendAt appends the events of evs at the indexes given.
func appendAt(dst, evs []*nostr.Event, idxs []int) []*nostr.Event {
	for _, idx := range idxs {
		dst = append(dst, evs[idx])
	}
	return dst
}

// judgePhase judges every segment's answers of phase pi and replaces the
// merged phase's verification (total and per shape) with the result.
func judgePhase(ph *results.Phase, runs []*results.Run, pi int, wins []segWindow, evs []*nostr.Event,
	byKey map[string]*nostr.Event, model *verify.Model, relayCap int, tolerance time.Duration) error {
	var all []judged
	overlapped := 0
	splits := map[string]*split{}
	for i, r := range runs {
		g := r.Segment
		for ai, a := range r.Phases[pi].Answers {
			jd, err := decodeAnswer(a, byKey)
			if err != nil {
				return fmt.Errorf("segment %d query answer %d: %w", i, ai+1, err)
			}
			sent, eose := clock(g, a.SentNs), clock(g, a.EOSENs)
			tol := int64(tolerance) + clockErr(g)
			// Which segments had stored everything before the REQ (must),
			// which were still publishing (may): the models are cached
			// by that split, shared by the answers that have it.
			mustSet := make([]byte, len(wins))
			inFlight := false
			for j, w := range wins {
				t := tol + w.tol
				switch {
				case j == i || w.end+t <= sent:
					// Stored before the REQ (a segment's own publishing
					// ends before its queries start): required.
					mustSet[j] = 'm'
				case w.start-t >= eose: // published after the EOSE: cannot be there
					mustSet[j], inFlight = 'a', true
				default: // publishing during the REQ: allowed, not required
					mustSet[j], inFlight = 'p', true
				}
			}
			if inFlight {
				overlapped++
				sp := splits[string(mustSet)]
				if sp == nil {
					sp = newSplit(wins, mustSet, evs)
					priorModel(sp.model, runs)
					splits[string(mustSet)] = sp
				}
				jd.model, jd.may, jd.keys = sp.model, sp.may, sp.keys
			}
			all = append(all, jd)
		}
	}
	prior := heldBefore(runs)
	if prior {
		priorPlaces(all, relayCap)
	}
	// The answers of REQs sent after every segment's publishing are judged
	// together (the reading of replaceable events and the relay's cap are
	// chosen from all of them); the others one by one, with that cap.
	var main []verify.Reply
	var mainAt []int
	for i, jd := range all {
		if jd.model == nil && !jd.full {
			main = append(main, jd.reply)
			mainAt = append(mainAt, i)
		}
	}
	j := verify.Judge(main, model, relayCap, true)
	answers := make([]results.Verification, len(all))
	for k, i := range mainAt {
		answers[i] = j.Answers[k]
	}
	capUsed := relayCap
	if capUsed == 0 {
		capUsed = j.Cap
	}
	for i, jd := range all {
		switch {
		case jd.full: // earlier data took every place: nothing of the corpus owed
			answers[i] = verify.Judge([]verify.Reply{jd.reply}, nil, 0, false).Answers[0]
		case jd.model != nil:
			answers[i] = judgeInFlight(jd, capUsed)
		}
	}
	total := &results.Verification{Verified: true}
	byShape := map[string]*results.Verification{}
	shapeMain := map[string][]int{} // positions in main, per shape
	for k, i := range mainAt {
		shapeMain[all[i].shape] = append(shapeMain[all[i].shape], k)
	}
	for i, jd := range all {
		v := &answers[i]
		switch {
		case jd.unknown > 0 && prior:
			v.Returned += jd.unknown
			v.HeldBefore += jd.unknown
		case jd.unknown > 0:
			v.Returned += jd.unknown
			v.Extra += jd.unknown
			v.Notes = verify.AppendUnique(v.Notes, "returned events no segment published, from a relay that held none when the segments began")
		}
		s := byShape[jd.shape]
		if s == nil {
			s = &results.Verification{Verified: true}
			byShape[jd.shape] = s
		}
		verify.Add(s, v)
		verify.Add(total, v)
	}
	j.Apply(total)
	for s, v := range byShape {
		if len(shapeMain[s]) > 0 {
			j.Apply(v, shapeMain[s]...)
		}
	}
	if j.Cap > 0 && relayCap == 0 {
		total.Notes = verify.AppendUnique(total.Notes, verify.CapNote(j.Cap))
	}
	if total.HeldBefore > 0 {
		total.Notes = verify.AppendUnique(total.Notes, verify.PriorNote(int(total.HeldBefore)))
	}
	total.Notes = verify.AppendUnique(total.Notes, fmt.Sprintf("checked across %d segments by relaybench merge: every segment's answers against the events all segments' relay stored", len(runs)))
	if overlapped > 0 {
		total.Notes = verify.AppendUnique(total.Notes, fmt.Sprintf("%d of %d queries were sent while another segment was still publishing: that segment's events were allowed in their answers, not required", overlapped, len(all)))
	}
	if n := ph.Counts[results.CountFailed]; n > 0 {
		total.Notes = verify.AppendUnique(total.Notes, fmt.Sprintf("%d queries did not end with EOSE (CLOSED, timeout or connection loss): their answers are incomplete and were not verified; the outcomes line says which", n))
	}
	verify.Finish(total)
	if local := ph.Verification; local != nil && local.Status() == results.VerificationFailed {
		// A segment's own check failed (validity, filter match,
		// duplicates): the merge cannot pass what a segment failed.
		total.Fail()
		total.Notes = verify.AppendUnique(total.Notes, "a segment's own check of its answers failed: "+strings.Join(local.Notes, "; "))
	}
	ph.Verification = total
	for gi := range ph.Groups {
		if v := byShape[ph.Groups[gi].Name]; v != nil {
			verify.Finish(v)
			ph.Groups[gi].Verification = v
		}
	}
	return nil
}

// heldBefore says whether the relay may have held events before the
// segments began: some segment found it so, or could not tell
// (results.Relay.Before). A segment that began after another published
// may take those events for earlier data: the merge then judges as for a
// relay that held some, which never counts a right answer wrong.
func heldBefore(runs []*results.Run) bool {
	for _, r := range runs {
		if b := r.Relay.Before; b == results.BeforeHeld || b == results.BeforeUnknown {
			return true
		}
	}
	return false
}

// priorModel is m for segments against a relay that may have held events
// before them (heldBefore): an accepted replaceable event may be hidden by
// a newer version the relay held, so none is certainly owed under the
// latest-only reading (verify.Model.Prior). The answers hold only corpus
// events (the others are counted apart, see priorPlaces), so none of
// theirs is earlier data.
func priorModel(m *verify.Model, runs []*results.Run) *verify.Model {
	m.Prior, m.NoForeign = heldBefore(runs), true
	return m
}

// priorPlaces, for a relay that held events before the segments began,
// gives each answer holding events no segment published (known by id
// only) the places they took: its filters' limits (or the relay's cap)
// lowered by their number, so that the corpus events it returned are
// judged as the newest of what is left. An answer where they could fill a
// filter's every place owes nothing of the corpus (full): it is checked
// for validity, filter match and duplicates only.
func priorPlaces(all []judged, relayCap int) {
	for i := range all {
		jd := &all[i]
		if jd.unknown == 0 {
			continue
		}
		full := false // a limit they could fill: judged without the corpus (never wrong)
		for k, f := range jd.reply.Filters {
			lim := effectiveLimit(f.Limit, relayCap)
			full = full || (lim > 0 && lim <= int(jd.unknown))
			if lim > int(jd.unknown) {
				fl := *f
				fl.Limit = lim - int(jd.unknown)
				jd.reply.Filters[k] = &fl
			}
		}
		jd.reply.Filter, jd.full = jd.reply.Filters[0], full
	}
}

// decodeAnswer is a recorded answer as the verifier takes it: its REQ's
// filters (several: the answer owes their union, each event once) and the
// corpus events its ids name (jd.unknown counts the others).
func decodeAnswer(a results.Answer, byKey map[string]*nostr.Event) (judged, error) {
	jd := judged{shape: a.Shape, reply: verify.Reply{Invalid: a.Invalid}}
	for k, raw := range append([]json.RawMessage{a.Filter}, a.More...) {
		var f nostr.Filter
		if err := json.Unmarshal(raw, &f); err != nil {
			return jd, fmt.Errorf("filter %d: %w", k+1, err)
		}
		jd.reply.Filters = append(jd.reply.Filters, &f)
	}
	jd.reply.Filter = jd.reply.Filters[0]
	keys, err := results.DecodeIDs(a.IDs)
	if err != nil {
		return jd, err
	}
	for _, k := range keys {
		e := byKey[k]
		if e == nil {
			jd.unknown++
			continue
		}
		jd.reply.Events = append(jd.reply.Events, e)
	}
	return jd, nil
}

// judgeInFlight judges an answer to a REQ sent while other segments were
// still publishing (jd.may holds what they stored). The relay may have
// stored some of those events before the REQ and returned them as stored
// events, and may deliver others live before EOSE (khatru, for one,
// registers the subscription before it queries its store): they are
// allowed, not required, and a live one takes no place under the limit.
// So the answer is judged in two parts: its events of segments still
// publishing only for validity, filter match and duplicates; the others
// against the events stored before the REQ, whose newest m (m the number
// returned) must all be there, where m may fall short of the limit by at
// most the number of in-flight events returned (those that took a place).
func judgeInFlight(jd judged, relayCap int) results.Verification {
	inMay := make(map[*nostr.Event]bool, len(jd.may))
	for _, e := range jd.may {
		inMay[e] = true
	}
	fs := jd.reply.Filters
	var stored, live []*nostr.Event
	k := make([]int, len(fs)) // per filter: in-flight events that may have taken a place
	for _, e := range jd.reply.Events {
		if !inMay[e] {
			stored = append(stored, e)
			continue
		}
		live = append(live, e)
		for i, f := range fs {
			if f.Matches(e) {
				k[i]++
			}
		}
	}
	// The model: events stored before the REQ, and in-flight events that
	// may have replaced some of them; the latter are never expected.
	extra := allowed(fs, jd.may, live, stored, jd.keys)
	model := jd.model
	if len(extra) > 0 {
		hide := make(map[*nostr.Event]bool, len(extra))
		for _, e := range extra {
			hide[e] = true
		}
		model = verify.NewModelUnknown(append(append([]*nostr.Event{}, jd.model.All...), extra...), jd.model.Unknown)
		model.Prior, model.NoForeign = jd.model.Prior, jd.model.NoForeign
		model.Live = without(model.Live, hide)
		model.All = without(model.All, hide)
	}
	fls := make([]*nostr.Filter, len(fs))
	for i, f := range fs {
		fl := *f
		if lim := effectiveLimit(f.Limit, relayCap); lim > 0 {
			m := 0
			for _, e := range stored {
				if acc, _ := model.Accepted(e.ID); (acc || model.IsUnknown(e.ID)) && fl.Matches(e) {
					m++
				}
			}
			fl.Limit = min(lim, max(m, lim-k[i]))
		}
		fls[i] = &fl
	}
	v := verify.Judge([]verify.Reply{{Filter: fls[0], Filters: fls, Events: stored, Invalid: jd.reply.Invalid}}, model, 0, false).Answers[0]
	lv := verify.Judge([]verify.Reply{{Filter: fs[0], Filters: fs, Events: live}}, nil, 0, false).Answers[0]
	v.Returned += lv.Returned
	v.NotMatching += lv.NotMatching
	v.Duplicated += lv.Duplicated
	return v
}

func effectiveLimit(limit, relayCap int) int {
	if relayCap > 0 && (limit == 0 || relayCap < limit) {
		return relayCap
	}
	return limit
}

func without(evs []*nostr.Event, hide map[*nostr.Event]bool) []*nostr.Event {
	out := evs[:0:0]
	for _, e := range evs {
		if !hide[e] {
			out = append(out, e)
		}
	}
	return out
}

// allowed are the events of segments still publishing during a REQ that
// the relay is taken to have held and that may have replaced an older
// version of a replaceable event, so that the older one is not required:
// those returned (live), and those that do not match the filter, of keys
// none of whose stored versions came back. Matching events it did not
// return are taken as not yet stored.
func allowed(fs []*nostr.Filter, may, live, stored []*nostr.Event, required map[string][]*nostr.Event) []*nostr.Event {
	got := make(map[*nostr.Event]bool, len(live))
	for _, e := range live {
		got[e] = true
	}
	keys := map[string]bool{}
	for _, e := range stored {
		if k, ok := verify.ReplaceKey(e); ok {
			keys[k] = true
		}
	}
	var out []*nostr.Event
	for _, e := range may {
		if k, ok := verify.ReplaceKey(e); ok && !keys[k] && (got[e] || !matchesAny(fs, e)) && hidesMatch(fs, e, required[k]) {
			out = append(out, e)
		}
	}
	return out
}

// hidesMatch reports whether e may hide a required version of its key that
// matches one of fs (only then does it change what is expected).
func hidesMatch(fs []*nostr.Filter, e *nostr.Event, versions []*nostr.Event) bool {
	for _, v := range versions {
		if v != e && matchesAny(fs, v) {
			return true
		}
	}
	return false
}

// matchesAny reports whether e matches one of fs.
func matchesAny(fs []*nostr.Filter, e *nostr.Event) bool {
	for _, f := range fs {
		if f.Matches(e) {
			return true
		}
	}
	return false
}
