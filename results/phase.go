package results

// NewPhase is the one constructor of a phase: its name, its workload and
// empty counters, refusals, latencies and rates, ready to be filled (every
// map a workload writes to exists; empty ones are left out of the file). A timed phase is built by the workload
// package's Window.Phase, which also sets its clock.
func NewPhase(name, workload string) Phase {
	return Phase{Name: name, Workload: workload, Counts: map[string]int64{},
		Refused: map[string]int64{}, Latency: map[string]*Histogram{}, Rates: map[string]float64{}}
}
