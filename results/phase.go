package results

// NewPhase is the one constructor of a phase: its name, its workload and
// empty counters, refusals and latencies, ready to be filled (every map a
// workload writes to exists). A timed phase is built by the workload
// package's Window.Phase, which also sets its clock.
func NewPhase(name, workload string) Phase {
	return Phase{Name: name, Workload: workload, Counts: map[string]int64{},
		Refused: map[string]int64{}, Latency: map[string]*Histogram{}}
}
