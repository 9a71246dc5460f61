package schedule

import (
	"math"
	"slices"
	"testing"
	"time"
)

// must returns p; a constructor error fails the test (by panicking).
func must(p Pattern, err error) Pattern {
	if err != nil {
		panic(err)
	}
	return p
}

func times(p Pattern) []time.Duration { return slices.Collect(IntendedTimes(p)) }

// checkIntended checks, for every intended time of p, that it is the smallest
// nanosecond t with Hits(t) ≥ k (within float tolerance), that times never go
// backwards or past the duration, and that the count is ⌊Hits(D)⌋.
func checkIntended(t *testing.T, p Pattern) []time.Duration {
	t.Helper()
	ts := times(p)
	if want := int64(math.Floor(p.Hits(p.Duration()) + 1e-9)); int64(len(ts)) != want {
		t.Fatalf("%s: %d intended times, want ⌊Hits(D)⌋ = %d", p, len(ts), want)
	}
	const tol = 1e-6
	var prev time.Duration
	for i, it := range ts {
		k := float64(i + 1)
		if it < prev || it > p.Duration() {
			t.Fatalf("%s: op %d at %v after %v (duration %v)", p, i+1, it, prev, p.Duration())
		}
		prev = it
		if h := p.Hits(it); h < k-tol {
			t.Fatalf("%s: op %d at %v but Hits there is %v", p, i+1, it, h)
		}
		if it > 0 {
			if h := p.Hits(it - 1); h >= k+tol {
				t.Fatalf("%s: op %d at %v, but Hits(%v) = %v already reaches it", p, i+1, it, it-1, h)
			}
		}
	}
	return ts
}

// checkIntegral checks Hits against a numerical integral of Rate.
func checkIntegral(t *testing.T, p Pattern) {
	t.Helper()
	const n = 20000
	d := p.Duration()
	h := d.Seconds() / n
	var sum float64
	for i := 0; i < n; i++ {
		a := time.Duration(float64(d) * float64(i) / n)
		b := time.Duration(float64(d) * float64(i+1) / n)
		m := (a + b) / 2
		sum += h / 6 * (p.Rate(a) + 4*p.Rate(m) + p.Rate(b))
		if i%1000 == 999 {
			if got := p.Hits(b); math.Abs(got-sum) > 1e-6*math.Max(1, sum)+ratePeak(p)*h {
				t.Fatalf("%s: Hits(%v) = %v, integral of Rate = %v", p, b, got, sum)
			}
		}
	}
}

func ratePeak(p Pattern) float64 {
	var m float64
	for i := 0; i <= 1000; i++ {
		m = math.Max(m, p.Rate(p.Duration()*time.Duration(i)/1000))
	}
	return m
}

func TestConstantExact(t *testing.T) {
	p := must(Constant(1000, 60*time.Second))
	ts := checkIntended(t, p)
	if len(ts) != 60000 {
		t.Fatalf("constant 1000/s for 60 s: %d ops, want 60,000", len(ts))
	}
	for i, it := range ts {
		if want := time.Duration(i+1) * time.Millisecond; it != want {
			t.Fatalf("op %d at %v, want %v", i+1, it, want)
		}
	}
	// A rate that does not divide a second: 3/s over 1 s is ops at ⌈k/3 s⌉.
	ts = checkIntended(t, must(Constant(3, time.Second)))
	if !slices.Equal(ts, []time.Duration{333333334, 666666667, time.Second}) {
		t.Fatalf("3/s: %v", ts)
	}
	checkIntegral(t, p)
}

func TestRamp(t *testing.T) {
	p := must(Ramp(0, 100, 10*time.Second))
	ts := checkIntended(t, p)
	if len(ts) != 500 {
		t.Fatalf("ramp 0→100 over 10 s: %d ops, want 500", len(ts))
	}
	// Hits(t) = 5t², so op k is at √(k/5) s.
	for _, k := range []int{1, 2, 125, 499, 500} {
		want := math.Sqrt(float64(k)/5) * 1e9
		if got := float64(ts[k-1]); math.Abs(got-want) > 1 {
			t.Fatalf("op %d at %v, want %v ns", k, ts[k-1], want)
		}
	}
	if ts[499] != 10*time.Second {
		t.Fatalf("last op at %v, want 10s", ts[499])
	}
	down := must(Ramp(100, 0, 10*time.Second))
	if n := len(checkIntended(t, down)); n != 500 {
		t.Fatalf("ramp 100→0: %d ops, want 500", n)
	}
	checkIntegral(t, p)
	checkIntegral(t, down)
	if r := p.Rate(5 * time.Second); r != 50 {
		t.Fatalf("rate mid-ramp %v, want 50", r)
	}
}

func TestStep(t *testing.T) {
	p := must(Step(100, 500, 5, 10*time.Second))
	ts := checkIntended(t, p)
	if len(ts) != 3000 { // 2 s each at 100, 200, 300, 400, 500
		t.Fatalf("step: %d ops, want 3,000", len(ts))
	}
	if r := p.Rate(3 * time.Second); r != 200 {
		t.Fatalf("rate in the second step %v, want 200", r)
	}
	// The first op of the second level is 1/200 s after it starts.
	if ts[200] != 2*time.Second+5*time.Millisecond {
		t.Fatalf("op 201 at %v, want 2.005s", ts[200])
	}
	checkIntegral(t, p)
}

func TestSpikeAndBurstExtraOps(t *testing.T) {
	spike := must(Spike(50, 200, 25*time.Second, 10*time.Second, 60*time.Second))
	if n := len(checkIntended(t, spike)); n != 50*60+150*10 {
		t.Fatalf("spike: %d ops, want %d", n, 50*60+150*10)
	}
	if spike.Rate(30*time.Second) != 200 || spike.Rate(10*time.Second) != 50 || spike.Rate(40*time.Second) != 50 {
		t.Fatalf("spike rates wrong")
	}
	checkIntegral(t, spike)

	burst := must(Burst(50, 250, 10*time.Second, time.Second, 60*time.Second))
	if n := len(checkIntended(t, burst)); n != 50*60+6*200 {
		t.Fatalf("burst: %d ops, want %d", n, 50*60+6*200)
	}
	if burst.Rate(9500*time.Millisecond) != 250 || burst.Rate(10500*time.Millisecond) != 50 {
		t.Fatalf("burst rates wrong")
	}
	// A run ending inside a burst counts only its part.
	part := must(Burst(0, 100, 10*time.Second, 2*time.Second, 19*time.Second))
	if n := Count(part); n != 200+100 {
		t.Fatalf("partial burst: %d ops, want 300", n)
	}
	checkIntegral(t, burst)
}

func TestSine(t *testing.T) {
	p := must(Sine(100, 300, 10*time.Second, 60*time.Second))
	ts := checkIntended(t, p)
	if len(ts) != 12000 { // whole periods: average base+(peak-base)/2 = 200/s
		t.Fatalf("sine over whole periods: %d ops, want 12,000", len(ts))
	}
	if r := p.Rate(0); math.Abs(r-100) > 1e-9 {
		t.Fatalf("sine starts at %v, want base", r)
	}
	if r := p.Rate(5 * time.Second); math.Abs(r-300) > 1e-9 {
		t.Fatalf("sine at half period %v, want peak", r)
	}
	// First half period: 200·5 − 100·10/(2π)·sin(π) = 1000 ops.
	if h := p.Hits(5 * time.Second); math.Abs(h-1000) > 1e-6 {
		t.Fatalf("Hits(5s) = %v, want 1000", h)
	}
	checkIntegral(t, p)
	// From zero (rate 0 at t = 0) the inversion must still converge.
	z := must(Sine(0, 1000, 2*time.Second, 4*time.Second))
	if n := len(checkIntended(t, z)); n != 2000 {
		t.Fatalf("sine 0↔1000: %d ops, want 2,000", n)
	}
}

func TestPoisson(t *testing.T) {
	base := must(Constant(1000, 60*time.Second))
	p := must(Poisson(base, 42))
	a, b := times(p), times(must(Poisson(base, 42)))
	if !slices.Equal(a, b) {
		t.Fatal("same seed, different arrivals")
	}
	if c := times(must(Poisson(base, 43))); slices.Equal(a, c) {
		t.Fatal("different seeds, same arrivals")
	}
	// Count ~ Poisson(60,000): σ ≈ 245; allow 5σ.
	if n := float64(len(a)); math.Abs(n-60000) > 5*245 {
		t.Fatalf("poisson count %v, want 60,000 ± 1,225", n)
	}
	// Exponential gaps: mean 1 ms, coefficient of variation 1.
	var sum, sq float64
	prev := time.Duration(0)
	for _, it := range a {
		g := (it - prev).Seconds()
		prev = it
		sum += g
		sq += g * g
	}
	n := float64(len(a))
	mean := sum / n
	cv := math.Sqrt(sq/n-mean*mean) / mean
	if math.Abs(mean-1e-3) > 2e-5 || math.Abs(cv-1) > 0.03 {
		t.Fatalf("gaps mean %v cv %v, want 1ms and 1", mean, cv)
	}
	if h := p.Hits(30 * time.Second); math.Abs(h-30000) > 5*173 {
		t.Fatalf("poisson Hits(30s) = %v", h)
	}
	if Count(p) != int64(len(a)) {
		t.Fatalf("Count %d, arrivals %d", Count(p), len(a))
	}
	// Poisson over a ramp follows the ramp: ~500 arrivals, most in the second half.
	r := must(Poisson(must(Ramp(0, 100, 10*time.Second)), 7))
	ts := times(r)
	late := 0
	for _, it := range ts {
		if it > 5*time.Second {
			late++
		}
	}
	if math.Abs(float64(len(ts))-500) > 5*22.4 || math.Abs(float64(late)-375) > 5*20 {
		t.Fatalf("poisson ramp: %d arrivals, %d after 5s; want ~500 and ~375", len(ts), late)
	}
}

func TestConstructorErrors(t *testing.T) {
	for name, err := range map[string]error{
		"negative rate":  second(Constant(-1, time.Second)),
		"NaN rate":       second(Ramp(math.NaN(), 1, time.Second)),
		"zero duration":  second(Constant(1, 0)),
		"spike outside":  second(Spike(1, 2, 9*time.Second, 2*time.Second, 10*time.Second)),
		"burst too wide": second(Burst(1, 2, time.Second, 2*time.Second, 10*time.Second)),
		"sine inverted":  second(Sine(5, 1, time.Second, time.Second)),
		"zero steps":     second(Step(1, 2, 0, time.Second)),
		"poisson nil":    second(Poisson(nil, 1)),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func second(_ Pattern, err error) error { return err }

// otherPattern is a Pattern from outside the package (no closed-form
// inverse): intended times come from numeric inversion.
type otherPattern struct{ Pattern }

func TestNumericInversionMatchesClosedForm(t *testing.T) {
	for _, p := range []Pattern{
		must(Ramp(10, 1000, 3*time.Second)),
		must(Ramp(1000, 0, 3*time.Second)),
		must(Spike(100, 2000, time.Second, 500*time.Millisecond, 3*time.Second)),
	} {
		a, b := times(p), times(otherPattern{p})
		if len(a) != len(b) {
			t.Fatalf("%s: %d vs %d ops", p, len(a), len(b))
		}
		for i := range a {
			// Equal to the ns, or (where the rate is ~0, as at the end of
			// a ramp down) equal in Hits to float precision.
			if d := a[i] - b[i]; (d < -1 || d > 1) && math.Abs(p.Hits(a[i])-p.Hits(b[i])) > 1e-9 {
				t.Fatalf("%s: op %d closed form %v, numeric %v", p, i+1, a[i], b[i])
			}
		}
	}
}

// A pattern's description, printed as the load plan, groups thousands as
// the summary does, keeps a fraction as given, and gives its durations as
// every duration is printed (numfmt.Dur): "60.0s", "90.0s", never Go's
// "1m0s" or "1m30s".
func TestPatternDescriptionGroupsThousands(t *testing.T) {
	must := func(p Pattern, err error) Pattern {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	c := must(Constant(3000, 3*time.Second))
	r := must(Ramp(1500.5, 1e6, time.Minute))
	s := must(Sine(2.5, 12000, 10*time.Second, time.Minute))
	for _, c := range []struct{ got, want string }{
		{c.String(), "constant 3,000/s for 3.00s"},
		{r.String(), "ramp 1,500.5→1,000,000/s over 60.0s"},
		{s.String(), "sine 2.5↔12,000/s, period 10.0s, over 60.0s"},
		{must(Constant(10, 90*time.Second)).String(), "constant 10/s for 90.0s"},
		{must(Step(10, 100, 4, 20*time.Minute)).String(), "step 10→100/s in 4 steps of 300s"},
		{must(Spike(500, 5000, 2500*time.Millisecond, time.Second, 6*time.Second)).String(), "spike 500/s, 5,000/s at 2.50s for 1.00s, over 6.00s"},
		{must(Burst(10, 100, 20*time.Second, 500*time.Millisecond, 1000*time.Second)).String(), "burst 10/s, 100/s for 500ms every 20.0s, over 16.7min"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
