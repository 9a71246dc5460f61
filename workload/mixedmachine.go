package workload

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/relaybench/relaybench/results"
)

// cpuTicks is the machine's CPU time from /proc/stat's first line: busy
// (user, nice, system, irq, softirq, steal) and total (those and idle,
// iowait), in ticks; ok false when it cannot be read (not Linux).
type cpuTicks struct {
	busy, total int64
	ok          bool
}

// readCPUTicks reads the machine's CPU time now.
func readCPUTicks() cpuTicks {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTicks{}
	}
	return parseCPUTicks(b)
}

// parseCPUTicks reads the "cpu" line of /proc/stat's text b.
func parseCPUTicks(b []byte) cpuTicks {
	line, _ := bufio.NewReader(bytes.NewReader(b)).ReadString('\n')
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTicks{}
	}
	var v [8]int64 // user nice system idle iowait irq softirq steal
	for i := range v {
		n, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil || n < 0 {
			return cpuTicks{}
		}
		v[i] = n
	}
	busy := v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
	return cpuTicks{busy: busy, total: busy + v[3] + v[4], ok: true}
}

// othersCores is the cores other processes kept busy between a and b:
// the machine's busy share of its cores, less clientSecs and relay's CPU
// over secs; ok false when the machine's or the relay's figures are
// unknown (a relay relaybench does not observe is one of the others).
func othersCores(a, b cpuTicks, clientSecs float64, relay *results.Resources, secs float64) (float64, bool) {
	if !a.ok || !b.ok || b.total <= a.total || relay == nil || secs <= 0 {
		return 0, false
	}
	busy := float64(b.busy-a.busy) / float64(b.total-a.total) * float64(runtime.NumCPU())
	return max(0, busy-(clientSecs+relay.RelayCPUSecs)/secs), true
}

// addOthers gives group g its part's cores busy with other processes,
// when known (results.RateOthersCores). Other work that comes and goes on
// a shared machine can land on one part and not the other: a
// together/alone ratio then compares two machines, and the reports say so
// (report/mixedbaseline.go).
func addOthers(g *results.Group, p *mixedPart) {
	if p.others < 0 {
		return
	}
	if g.Rates == nil {
		g.Rates = map[string]float64{}
	}
	g.Rates[results.RateOthersCores] = p.others
}
