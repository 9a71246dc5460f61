package harness

import (
	"strings"
	"testing"
)

// TestLimitReportDeathApart: what the limits did (Usage) and how the relay
// died (Death) are apart, so a reader can say each once: the OOM kill and
// the exit only in Death, the limits' figures only in Usage.
func TestLimitReportDeathApart(t *testing.T) {
	r := LimitReport{Limits: Limits{CPU: 0.5, Memory: 256 << 20}, Mechanism: "cgroup v2", OOMKills: 1, MemPeak: 256 << 20,
		CPUThrottled: 4, Exited: true, ExitErr: "khatru-native exited unexpectedly: signal: killed\nlast log lines: listening"}
	u, d := r.Usage(), r.Death()
	if strings.Contains(u, "OOM") || strings.Contains(u, "killed") || strings.Contains(u, "exited") || !strings.Contains(u, "memory peak 256 MiB") {
		t.Errorf("usage %q: want the limits' figures and nothing of the death", u)
	}
	if !strings.HasPrefix(d, "OOM-killed under cpu=0.5,mem=256M") || !strings.HasSuffix(d, ": khatru-native exited unexpectedly: signal: killed") {
		t.Errorf("death %q", d)
	}
	if s := r.Summary(); strings.Count(s, "OOM") != 1 || !strings.Contains(s, "relay died: OOM-killed") {
		t.Errorf("summary %q", s)
	}
	alive := LimitReport{Limits: Limits{Memory: 256 << 20}, Mechanism: "cgroup v2", MemLimitHits: 3}
	if alive.Death() != "" || alive.Summary() != alive.Usage() {
		t.Errorf("a living relay: death %q, summary %q", alive.Death(), alive.Summary())
	}
}

// TestLimitReportZeroThrottled: a CPU limit whose cpu.stat was read and
// never throttled says so ("0 CPU-throttled periods"), as the README
// promises each phase's note gives; an unread counter says nothing.
func TestLimitReportZeroThrottled(t *testing.T) {
	r := LimitReport{Limits: Limits{CPU: 0.5, Memory: 256 << 20}, Mechanism: "cgroup v1", MemPeak: 28 << 20, CPUCounted: true}
	if u := r.Usage(); u != "relay under cpu=0.5,mem=256M (cgroup v1): 0 CPU-throttled periods; memory peak 28.0 MiB" {
		t.Errorf("usage %q", u)
	}
	r.CPUCounted = false
	if u := r.Usage(); strings.Contains(u, "throttled") {
		t.Errorf("an unread counter: usage %q", u)
	}
	mem := LimitReport{Limits: Limits{Memory: 256 << 20}, Mechanism: "cgroup v1", CPUCounted: true}
	if u := mem.Usage(); strings.Contains(u, "throttled") {
		t.Errorf("no CPU limit: usage %q", u)
	}
}
