package workload

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/sysinfo"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
)

// Whys of a part's event (every one is scheduled before the part's end)
// still unsent 1s after the part's time ended: planned work that did not
// run, so the accounts request the plan announced before the run. Its
// publisher was held back by its in-flight window full of EVENTs awaiting
// the relay's OK or by writes the relay did not read (work the relay
// prevented: relay-limited, or relay- or machine-limited when other
// processes competed for the machine's cores, as load judges its drops),
// or late with room in the window (the client's limit), as subscribe's
// --rate judges it (senderLag).
const (
	mixedUnsentHead   = "not sent within 1s after the part's --duration ended"
	mixedUnsentRelay  = "the in-flight window (--window) was full of EVENTs awaiting the relay's OK, or the relay did not read what was written"
	mixedUnsentClient = "the client sent late with room in its in-flight window (its CPU or timer wake-ups, not the relay)"
	// relayMayHaveWaited is what a relay's limit on a busy machine adds
	// (mixed's and subscribe --rate's notes): the figures cannot tell a
	// slow relay from one waiting for a CPU.
	relayMayHaveWaited = "but on a busy machine the relay may have waited for a CPU rather than been slow, which these figures cannot tell apart (a quieter machine, or the relay on cores of its own, can)"
)

// mixedBehindWhy gives the why of the events a publisher left unsent when
// the part's time ended at rate (livePlan.behindWhy): "relay-limited: not
// sent within 1s after the part's --duration ended (--publish-rate
// 1,000/s): …" or "client-limited: …". Once the part is over, judgeUnsent
// books the relay's as relay- or machine-limited when the machine was
// busy.
func mixedBehindWhy(rate float64) func(relayLimited bool) string {
	head := fmt.Sprintf("%s (--publish-rate %s/s)", mixedUnsentHead, fmtRate(rate))
	return func(relayLimited bool) string {
		if relayLimited {
			return "relay-limited: " + head + ": " + mixedUnsentRelay
		}
		return outcome.WhyClientLimited + " " + head + ": " + mixedUnsentClient
	}
}

// isMixedUnsent says whether why is that of events a part's end left
// unsent (mixedBehindWhy's, or machineLimitedWhy's).
func isMixedUnsent(why string) bool { return strings.Contains(why, mixedUnsentHead) }

// machineLimitedWhy is relayWhy (a "relay-limited: …" why: mixedBehindWhy's,
// subscribe's behindWhy) on a machine where other processes competed for
// the cores (busy: the evidence, partBusy's, or sysinfo.OthersBusy's load
// average), worded as load's drops are (machineDropWhy): "relay- or
// machine-limited: … while other processes competed for the machine's
// cores (the machine's 1-minute load average was 18.1 on 2 cores, other
// processes kept 1.90 cores busy over the part; the relay may have waited
// for a CPU, not been slow)".
func machineLimitedWhy(relayWhy, busy string) string {
	rest := strings.TrimPrefix(relayWhy, "relay-limited: ")
	return RelayOrMachine + " " + rest + ", while other processes competed for the machine's cores (" + busy + "; the relay may have waited for a CPU, not been slow)"
}

// machineEvidence is what showed other processes competing for the
// machine's cores over a part: the machine's load average as every note
// quotes it (sysinfo.LoadClause's words; "" when unknown) and the cores
// the others kept busy (-1: unknown).
type machineEvidence struct {
	load   string
	others float64
}

// over is the evidence over what ("the part", "publish/alone"): "the
// machine's 1-minute load average was 18.1 on 2 cores, other processes
// kept 1.90 cores busy over the part"; "" for none (m nil: not busy).
func (m *machineEvidence) over(what string) string {
	if m == nil {
		return ""
	}
	var ev []string
	if m.load != "" {
		ev = append(ev, m.load)
	}
	if m.others >= 0 {
		ev = append(ev, fmt.Sprintf("other processes kept %.2f cores busy over %s", m.others, what))
	}
	return strings.Join(ev, ", ")
}

// partBusy is the evidence that other processes competed for the
// machine's cores over part p (nil when none did, or when the relay's CPU
// is unknown: relaybench did not start it, so what it used cannot be told
// from other processes, as load's machineBusy).
func (p *mixedPart) partBusy() *machineEvidence {
	secs := float64(p.end-p.start) / 1e9
	if p.relay == nil || secs <= 0 {
		return nil
	}
	sides := (p.cpu.Seconds() + p.relay.RelayCPUSecs) / secs
	return othersCompeting(machineOthersBusy(sides), machineLoadClause(), sides, p.others, float64(runtime.NumCPU()))
}

// othersCompeting judges whether other processes competed for the
// machine's cores over a part, by load's rule (byLoad: sysinfo.OthersBusy's
// clause for the two sides' cores, "" when the load average shows no
// contention) or by the cores the others kept busy over the part (others,
// -1: unknown): at least one core, with the two sides' (sides) making at
// least nine tenths of the machine's cores. The evidence quotes the load
// average (from byLoad, else loadClause: sysinfo.LoadClause) and the
// others' cores when known; nil when they did not compete.
func othersCompeting(byLoad, loadClause string, sides, others, cores float64) *machineEvidence {
	kept := others >= 1 && sides+others >= 0.9*cores
	if byLoad == "" && !kept {
		return nil
	}
	load, _, _ := strings.Cut(byLoad, ": ")
	if load == "" {
		load = loadClause
	}
	return &machineEvidence{load: load, others: others}
}

// machineUnsent says whether why is machineLimitedWhy's of events a
// part's end left unsent.
func machineUnsent(why string) bool {
	return isMixedUnsent(why) && strings.HasPrefix(why, RelayOrMachine)
}

// coalesceUnsent books the events the publishing parts left unsent as
// relay- or machine-limited (each part's machineLimitedWhy, with its own
// figures) under one why in a, the phase's event account: the verdict
// then gives one reason, each part's figures in it ("… over publish/alone;
// the machine's … over publish/together; …"). rate is --publish-rate.
func coalesceUnsent(a *results.Account, parts []*mixedPart, rate float64) {
	var n int64
	var keys, ev []string
	for why, c := range a.NotRunBy {
		if c > 0 && machineUnsent(why) {
			n += c
			keys = append(keys, why)
		}
	}
	if len(keys) < 2 {
		return
	}
	for _, p := range parts {
		if p.pub != nil && p.busy != nil && slices.ContainsFunc(slices.Collect(maps.Keys(p.pub.Account(results.OpEvent).NotRunBy)), machineUnsent) {
			ev = append(ev, p.busy.over("publish/"+strings.TrimPrefix(p.name, "publish/"))) // its group's name
		}
	}
	for _, k := range keys {
		delete(a.NotRunBy, k)
	}
	a.NotRunBy[machineLimitedWhy(mixedBehindWhy(rate)(true), strings.Join(ev, "; "))] += n
}

// judgeUnsent books the events part p's publishers left unsent at its end
// (n scheduled) by who limited them, now that the machine's load over the
// part is known (busy: partBusy's evidence): the relay's as relay- or
// machine-limited on a busy machine (machineLimitedWhy), and says so in one
// note of the part.
func (p *mixedPart) judgeUnsent(n int, busy string) {
	a := p.pub.Account(results.OpEvent)
	if a == nil {
		return
	}
	var relay, client int64
	var rebook []string
	for why, c := range a.NotRunBy {
		switch {
		case c <= 0 || !isMixedUnsent(why):
		case strings.HasPrefix(why, outcome.WhyClientLimited):
			client += c
		default:
			relay += c
			if busy != "" && !strings.HasPrefix(why, RelayOrMachine) {
				rebook = append(rebook, why)
			}
		}
	}
	for _, why := range rebook {
		a.NotRunBy[machineLimitedWhy(why, busy)] += a.NotRunBy[why]
		delete(a.NotRunBy, why)
	}
	if relay+client > 0 {
		p.pub.Notes = append(p.pub.Notes, mixedUnsentNote(relay, client, n, busy))
	}
}

// mixedUnsentNote says how many of a part's n events were left unsent at
// its end and who held them back: relay events the relay (relay- or
// machine-limited on a busy machine: busy, partBusy's evidence, ends the
// note as sysinfo.OthersBusy's clause does), client events the client.
func mixedUnsentNote(relay, client int64, n int, busy string) string {
	head := fmt.Sprintf("%s of the %s events scheduled in the part were still unsent 1s after its --duration ended (not run)", numfmt.Group(relay+client), numfmt.Group(int64(n)))
	who, why := "relay-limited", mixedUnsentRelay
	if busy != "" {
		who, why = strings.TrimSuffix(RelayOrMachine, ":"), why+", "+relayMayHaveWaited
	}
	var s string
	switch {
	case client == 0:
		s = fmt.Sprintf("%s: %s: %s", who, head, why)
	case relay == 0:
		s = fmt.Sprintf("%s %s: %s", outcome.WhyClientLimited, head, mixedUnsentClient)
	default:
		s = fmt.Sprintf("%s: %s %s: %s; %s client-limited: %s", head, numfmt.Group(relay), who, why, numfmt.Group(client), mixedUnsentClient)
	}
	if busy != "" {
		s += "; " + busy + ": " + sysinfo.OthersCompeted + ", and their waits count in these figures"
	}
	return s
}
