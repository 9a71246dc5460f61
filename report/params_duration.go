package report

import (
	"time"

	"github.com/relaybench/relaybench/internal/numfmt"
)

// paramDuration is a duration parameter as every duration is printed for a
// reader (numfmt.Dur: "90.0s", "60.0s"); any other value as it is. The
// results file keeps the flag's form ("1m30s", "1m0s"): A/B (Comparable)
// and merge compare the run's parameters as stored, so files made before
// and after this still compare. Zero stays as stored ("0s").
func paramDuration(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	d, err := time.ParseDuration(s)
	if err != nil || d == 0 {
		return v
	}
	return numfmt.Dur(d)
}
