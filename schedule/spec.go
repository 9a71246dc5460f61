package schedule

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Patterns lists the pattern names Spec accepts, in the order -help shows them.
var Patterns = []string{"constant", "ramp", "step", "spike", "burst", "sine", "poisson"}

// Spec is a pattern as the command line gives it. Field comments name the
// flag; zero durations and Steps take the defaults documented per pattern.
//
//	constant  Base ops/s.
//	ramp      Base → Peak over Duration (either direction).
//	step      Steps levels (default 5) evenly from Base to Peak, each Duration/Steps.
//	spike     Base, and Peak during Width (default Duration/10) starting at At
//	          (default: centred).
//	burst     Base, and Peak during the last Width (default Every/10) of every
//	          Every (default Duration/6).
//	sine      between Base and Peak (starting at Base), Period (default Duration).
//	poisson   Poisson arrivals at a mean of Base ops/s, Seed.
type Spec struct {
	Pattern  string        // --load-pattern
	Duration time.Duration // --load-duration
	Base     float64       // --load-base, ops/s
	Peak     float64       // --load-peak, ops/s
	Period   time.Duration // --load-period (sine)
	Every    time.Duration // --load-every (burst)
	Width    time.Duration // --load-width (spike, burst)
	At       time.Duration // --load-at (spike start)
	Steps    int           // --load-steps (step)
	Seed     int64         // --load-seed (poisson)
}

// DefaultSpec is the reference suite's defaults: constant, 60 s, base 50/s,
// peak 200/s.
func DefaultSpec() Spec {
	return Spec{Pattern: "constant", Duration: 60 * time.Second, Base: 50, Peak: 200}
}

// resolved fills the pattern-relative defaults.
func (s Spec) resolved() Spec {
	s.Pattern = strings.ToLower(strings.TrimSpace(s.Pattern))
	switch s.Pattern {
	case "step":
		if s.Steps == 0 {
			s.Steps = 5
		}
	case "spike":
		if s.Width == 0 {
			s.Width = s.Duration / 10
		}
		if s.At == 0 {
			s.At = (s.Duration - s.Width) / 2
		}
	case "burst":
		if s.Every == 0 {
			s.Every = s.Duration / 6
		}
		if s.Width == 0 {
			s.Width = s.Every / 10
		}
	case "sine":
		if s.Period == 0 {
			s.Period = s.Duration
		}
	}
	return s
}

// Validate reports every problem of the spec at once, one line each, naming
// the flag.
func (s Spec) Validate() error {
	s = s.resolved()
	var errs []error
	bad := func(flag, format string, args ...any) {
		errs = append(errs, fmt.Errorf("--load-"+flag+": "+format, args...))
	}
	known := false
	for _, p := range Patterns {
		known = known || s.Pattern == p
	}
	if !known {
		bad("pattern", "unknown pattern %q (want one of %s)", s.Pattern, strings.Join(Patterns, ", "))
	}
	if s.Duration <= 0 {
		bad("duration", "must be positive, got %v", s.Duration)
	}
	finite := func(flag string, v float64) bool {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			bad(flag, "must be a finite rate ≥ 0 ops/s, got %v", v)
			return false
		}
		return true
	}
	okBase := finite("base", s.Base)
	okPeak := true
	if s.Pattern != "constant" && s.Pattern != "poisson" {
		okPeak = finite("peak", s.Peak)
	}
	switch s.Pattern {
	case "constant", "poisson":
		if okBase && s.Base == 0 {
			bad("base", "must be > 0 for %s (it is the rate), got 0", s.Pattern)
		}
	case "ramp", "step":
		if okBase && okPeak && s.Base == 0 && s.Peak == 0 {
			bad("peak", "%s from 0 to 0 sends nothing", s.Pattern)
		}
	case "spike", "burst", "sine":
		if okBase && okPeak && s.Peak < s.Base {
			bad("peak", "must be ≥ --load-base (%g) for %s, got %g", s.Base, s.Pattern, s.Peak)
		}
		if okBase && okPeak && s.Peak == 0 {
			bad("peak", "must be > 0 for %s, got 0", s.Pattern)
		}
	}
	if s.Duration > 0 {
		switch s.Pattern {
		case "step":
			if s.Steps < 1 || s.Duration/time.Duration(s.Steps) <= 0 {
				bad("steps", "must be between 1 and the duration in ns, got %d", s.Steps)
			}
		case "spike":
			if s.Width <= 0 {
				bad("width", "must be positive, got %v", s.Width)
			}
			if s.At < 0 || s.At+s.Width > s.Duration {
				bad("at", "spike [%v, %v) must lie within --load-duration %v", s.At, s.At+s.Width, s.Duration)
			}
		case "burst":
			if s.Every <= 0 {
				bad("every", "must be positive, got %v", s.Every)
			}
			if s.Width <= 0 {
				bad("width", "must be positive, got %v", s.Width)
			} else if s.Every > 0 && s.Width > s.Every {
				bad("width", "must not exceed --load-every %v, got %v", s.Every, s.Width)
			}
		case "sine":
			if s.Period <= 0 {
				bad("period", "must be positive, got %v", s.Period)
			}
		}
	}
	return errors.Join(errs...)
}

// Build validates the spec and returns its pattern.
func (s Spec) Build() (Pattern, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	s = s.resolved()
	switch s.Pattern {
	case "constant":
		return Constant(s.Base, s.Duration)
	case "ramp":
		return Ramp(s.Base, s.Peak, s.Duration)
	case "step":
		return Step(s.Base, s.Peak, s.Steps, s.Duration)
	case "spike":
		return Spike(s.Base, s.Peak, s.At, s.Width, s.Duration)
	case "burst":
		return Burst(s.Base, s.Peak, s.Every, s.Width, s.Duration)
	case "sine":
		return Sine(s.Base, s.Peak, s.Period, s.Duration)
	default: // poisson; Validate rejected anything else
		c, err := Constant(s.Base, s.Duration)
		if err != nil {
			return nil, err
		}
		return Poisson(c, s.Seed)
	}
}

// Parse builds a pattern from a compact form: the pattern name, then
// comma-separated key=value pairs named like the flags without "--load-",
// over DefaultSpec. Example: "spike,base=50,peak=200,duration=60s,width=5s".
func Parse(spec string) (Pattern, error) {
	parts := strings.Split(spec, ",")
	s := DefaultSpec()
	s.Pattern = parts[0]
	var errs []error
	for _, kv := range parts[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			errs = append(errs, fmt.Errorf("%q: want key=value", kv))
			continue
		}
		var err error
		dur := func(d *time.Duration) { *d, err = time.ParseDuration(v) }
		num := func(f *float64) { *f, err = strconv.ParseFloat(v, 64) }
		switch strings.ToLower(k) {
		case "duration":
			dur(&s.Duration)
		case "base":
			num(&s.Base)
		case "peak":
			num(&s.Peak)
		case "period":
			dur(&s.Period)
		case "every":
			dur(&s.Every)
		case "width":
			dur(&s.Width)
		case "at":
			dur(&s.At)
		case "steps":
			s.Steps, err = strconv.Atoi(v)
		case "seed":
			s.Seed, err = strconv.ParseInt(v, 10, 64)
		default:
			err = fmt.Errorf("unknown key (want duration, base, peak, period, every, width, at, steps, seed)")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("--load-%s: %v", k, err))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s.Build()
}

// Suites lists the suite names Suite accepts.
var Suites = []string{"standard", "staircase"}

// Suite returns the patterns of a named suite (--load-suite), run one after the
// other and reported as separate phases, sharing total between them:
//
//	standard   constant at base, ramp base→peak, spike to peak (centred, a
//	           tenth of its part), sine base↔peak (one period), burst to peak
//	           (every fifth of its part, a tenth of that long); total/5 each.
//	staircase  10 steps from base to peak over total.
func Suite(name string, base, peak float64, total time.Duration) ([]Pattern, error) {
	var specs []Spec
	switch name {
	case "standard":
		part := total / 5
		for _, p := range []string{"constant", "ramp", "spike", "sine", "burst"} {
			sp := Spec{Pattern: p, Duration: part, Base: base, Peak: peak}
			if p == "burst" {
				sp.Every = part / 5
			}
			specs = append(specs, sp)
		}
	case "staircase":
		specs = []Spec{{Pattern: "step", Duration: total, Base: base, Peak: peak, Steps: 10}}
	default:
		return nil, fmt.Errorf("--load-suite: unknown suite %q (want one of %s)", name, strings.Join(Suites, ", "))
	}
	var out []Pattern
	var errs []error
	for _, sp := range specs {
		p, err := sp.Build()
		if err != nil {
			errs = append(errs, fmt.Errorf("suite %s, %s part: %w", name, sp.Pattern, err))
			continue
		}
		out = append(out, p)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}
