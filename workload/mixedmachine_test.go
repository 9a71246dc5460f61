package workload

import (
	"runtime"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// parseCPUTicks reads /proc/stat's cpu line: busy is user, nice, system,
// irq, softirq and steal; idle and iowait count in the total only; any
// other text is unknown.
func TestParseCPUTicks(t *testing.T) {
	got := parseCPUTicks([]byte("cpu  100 2 30 500 40 0 5 3 0 0\ncpu0 50 1 15 250 20 0 2 1 0 0\n"))
	if want := (cpuTicks{busy: 140, total: 680, ok: true}); got != want {
		t.Errorf("parseCPUTicks = %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "intr 1 2 3\n", "cpu 1 2 3\n", "cpu x 2 3 4 5 6 7 8\n"} {
		if c := parseCPUTicks([]byte(bad)); c.ok {
			t.Errorf("parseCPUTicks(%q) = %+v, want unknown", bad, c)
		}
	}
}

// othersCores is the machine's busy cores less the client's and the
// relay's; unknown without the relay's figure (an external relay is one of
// the others) or the machine's; never below zero (ticks of different
// clocks).
func TestOthersCores(t *testing.T) {
	n := float64(runtime.NumCPU())
	a := cpuTicks{busy: 0, total: 0, ok: true}
	b := cpuTicks{busy: 600, total: 1000, ok: true} // 60% of the machine busy
	relay := &results.Resources{RelayCPUSecs: 0.5}
	got, ok := othersCores(a, b, 0.25, relay, 2) // client 0.125 cores, relay 0.25
	if want := 0.6*n - 0.375; !ok || got < want-1e-9 || got > want+1e-9 {
		t.Errorf("othersCores = %v, %v; want %v", got, ok, want)
	}
	if v, ok := othersCores(a, cpuTicks{busy: 0, total: 1000, ok: true}, 1, relay, 1); !ok || v != 0 {
		t.Errorf("an idle machine: %v, %v; want 0, true", v, ok)
	}
	if _, ok := othersCores(a, b, 0.25, nil, 2); ok {
		t.Error("known without the relay's CPU")
	}
	if _, ok := othersCores(cpuTicks{}, b, 0.25, relay, 2); ok {
		t.Error("known without the machine's ticks")
	}
}
