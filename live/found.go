package live

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/relaybench/relaybench/verify"
)

// foundKinds are the faults the verifier tells as it finds them, in the
// order the page and /metrics give them (verify.Found's kinds).
var foundKinds = [...]string{verify.FoundInvalid, verify.FoundNotMatching, verify.FoundDuplicated, verify.FoundMissing, verify.FoundExtra}

// foundLabels are foundKinds as Prometheus label values.
var foundLabels = [...]string{"invalid", "not_matching", "duplicated", "missing", "extra"}

// faultFound counts a fault the verifier found (verify.WatchFaults): on
// the measuring goroutine, so one atomic add, and for the first
// maxExamples faults of the run an example kept under exMu (a lock no
// tick holds while it encodes).
func (s *State) faultFound(f verify.Found) {
	k := foundIndex(f.Kind)
	s.found[k].Add(f.N)
	if s.examples.Load() >= maxExamples || s.examples.Add(1) > maxExamples {
		return
	}
	st, _ := s.current(nil, 0, true) // a fault found: something measures
	line := exampleLine(st.label, f)
	s.exMu.Lock()
	s.exList = append(s.exList, line)
	s.exMu.Unlock()
}

func foundIndex(kind string) int {
	for i, k := range foundKinds {
		if k == kind {
			return i
		}
	}
	return len(foundKinds) - 1
}

// exampleLine says what a fault was: the step it came in, the kind, and
// the relay's bytes of the event (or the filter of the answer), clipped
// to exampleLen and made printable (the page shows it as text; no control
// character reaches any output).
func exampleLine(label string, f verify.Found) string {
	step := "—"
	if label != "" {
		step = clipText(label, 80)
	}
	switch {
	case f.Raw != nil:
		return fmt.Sprintf("%s: %s event: %s", step, f.Kind, clipText(string(f.Raw), exampleLen))
	case f.Filter != nil:
		return fmt.Sprintf("%s: %d %s in an answer to %s", step, f.N, f.Kind, clipText(string(f.Filter.AppendJSON(nil)), exampleLen))
	}
	return fmt.Sprintf("%s: %d %s", step, f.N, f.Kind)
}

// clipText is s cut to n bytes (an ellipsis says so), valid UTF-8, with
// control characters replaced.
func clipText(s string, n int) string {
	more := ""
	if len(s) > n {
		s, more = s[:n], "…"
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '\uFFFD'
		}
		return r
	}, s)
	return s + more
}

// relayFound is the faults found while relay was under test, by kind.
type relayFound struct {
	relay string
	n     [len(foundKinds)]int64
}

// foundNow reads the run's faults so far by kind.
func (s *State) foundNow() (n [len(foundKinds)]int64) {
	for i := range n {
		n[i] = s.found[i].Load()
	}
	return n
}

// foundOf is foundPast with the current relay's faults so far added
// (s.mu held): what /metrics gives per relay, since compare measures one
// relay after another and a relay's counter must not carry another's.
func (s *State) foundOf(relay string) []relayFound {
	cur := relayFound{relay: relay, n: s.foundNow()}
	for i := range cur.n {
		cur.n[i] -= s.foundBase[i]
	}
	out := append([]relayFound{}, s.foundPast...)
	for i := range out {
		if out[i].relay == relay { // the same relay again: one series goes on
			for k := range cur.n {
				out[i].n[k] += cur.n[k]
			}
			return out
		}
	}
	return append(out, cur)
}

// foundSoFar is the faults found so far by kind (page labels) and the
// examples kept.
func (s *State) foundSoFar() (map[string]int64, []string) {
	m := make(map[string]int64, len(foundKinds))
	for i := range foundKinds {
		m[foundLabels[i]] = s.found[i].Load()
	}
	s.exMu.Lock()
	defer s.exMu.Unlock()
	return m, append([]string{}, s.exList...)
}
