package report

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/internal/sysinfo"
)

// The together-vs-alone headline of a mixed run says when its ratios are
// not the relay's alone: a busy machine (the phase's notes judged that
// other processes competed for the cores), or an alone part's p99 a note
// says came from one second (its first, or a stall), whatever the ratio
// (a 4.36× slowdown was 55× against the later seconds); below 1 that OK
// ratio is no finding, said in its place. Neither otherwise: a load average
// that is no sign of competition, an extreme ratio without the note.
func TestMixedHeadlineCaveat(t *testing.T) {
	busy := "neither side saturated its CPU (client 0.40, relay 0.30 cores): not CPU-bound on average; the machine's 1-minute load average was 7.7 on 2 cores: " + sysinfo.OthersCompeted + ", and their waits count in these figures"
	calm := "neither side saturated its CPU (client 0.40, relay 0.30 cores): not CPU-bound on average; the machine's 1-minute load average was 0.6 on 2 cores"
	first := "publish/alone: OK p99 173ms in the part's first second, 60× the median of its later seconds (2.9ms): the part's p99 173ms is that second's"
	// a walk's: 40 of 2,000 events alone in one 30-50 ms stall, read as "OK p99 0.0947× (faster together)"
	stall := "publish/alone: OK p99 48.9ms in the part's second 2 (from 1 s to 2 s), 130× the median of its other seconds (376µs): the part's p99 33.4ms is that second's, one stall of the relay or the machine"
	const oneSecondDoubt = "publish/alone's OK p99 came from one second of the part (its note says which, and the other seconds' p99)"
	const busyCaveat, firstCaveat = "(busy machine: load average 7.7 on 2 cores)", "(the alone OK p99 is its first second's: the notes give the fairer baseline)"
	for _, c := range []struct {
		name  string
		ratio float64
		notes []string
		want  string // "" for no caveat
	}{
		{"busy", 0.81, []string{busy}, busyCaveat},
		{"calm", 0.81, []string{calm}, ""},
		{"first second, extreme", 0.02, []string{first}, "OK p99 0.0200× together/alone is not a finding: " + oneSecondDoubt},
		{"first second, modest", 4.36, []string{first}, firstCaveat},
		{"a later second's stall, faster together", 0.0947, []string{stall}, "OK p99 0.0947× together/alone is not a finding: " + oneSecondDoubt},
		{"a later second's stall, slower together", 4.36, []string{stall}, "(the alone OK p99 is one second's: the notes give the fairer baseline)"},
		{"extreme, no note", 0.02, nil, ""},
		{"both", 0.02, []string{busy, first}, oneSecondDoubt + " (busy machine: load average 7.7 on 2 cores)"},
		{"both, slower together", 4.36, []string{busy, first}, "(busy machine: load average 7.7 on 2 cores; the alone OK p99 is its first second's: the notes give the fairer baseline)"},
	} {
		p := mixedPhase()
		p.Rates["ok_p99_ratio"] = c.ratio
		p.Notes = append(p.Notes, c.notes...)
		s := summaryText(t, oneRun("mixed", nil, p), SummaryOptions{Brief: true})
		i := strings.Index(s, "Together vs alone: ")
		if i < 0 {
			t.Fatalf("%s: no headline:\n%s", c.name, s)
		}
		head, _, _ := strings.Cut(s[i:], "\n")
		if c.want != "" && !strings.HasSuffix(head, " "+c.want) {
			t.Errorf("%s: headline %q, want it to end %q", c.name, head, c.want)
		}
		if c.want == "" && (strings.Contains(head, "busy machine") || strings.Contains(head, "see notes")) {
			t.Errorf("%s: headline %q, want no caveat", c.name, head)
		}
	}
}
