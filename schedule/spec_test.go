package schedule

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestSpecBuildsEveryPattern(t *testing.T) {
	want := map[string]int64{
		"constant": 50 * 60,
		"ramp":     (50 + 200) / 2 * 60,
		"step":     (50 + 87.5 + 125 + 162.5 + 200) * 12, // 5 levels of 12 s
		"spike":    50*60 + 150*6,                        // width Duration/10
		"burst":    50*60 + 6*150*1,                      // every 10 s, width 1 s
		"sine":     125 * 60,                             // one period: average (base+peak)/2
	}
	for _, name := range Patterns {
		s := DefaultSpec()
		s.Pattern = name
		p, err := s.Build()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.Duration() != time.Minute {
			t.Fatalf("%s: duration %v", name, p.Duration())
		}
		if name == "poisson" {
			if n := Count(p); n < 3000-5*55 || n > 3000+5*55 {
				t.Fatalf("poisson: %d ops, want ~3,000", n)
			}
			continue
		}
		if n := Count(p); n != want[name] {
			t.Errorf("%s (%s): %d ops, want %d", name, p, n, want[name])
		}
	}
}

func TestSpecValidateReportsAll(t *testing.T) {
	err := Spec{Pattern: "bogus", Duration: -time.Second, Base: -5, Peak: 1}.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 one-line errors, got %q", lines)
	}
	for i, flag := range []string{"--load-pattern:", "--load-duration:", "--load-base:"} {
		if !strings.HasPrefix(lines[i], flag) {
			t.Errorf("line %d %q does not name %s", i, lines[i], flag)
		}
	}
	for _, c := range []struct {
		s    Spec
		flag string
	}{
		{Spec{Pattern: "burst", Duration: time.Minute, Base: 1, Peak: 2, Every: time.Second, Width: 2 * time.Second}, "--load-width:"},
		{Spec{Pattern: "spike", Duration: time.Minute, Base: 1, Peak: 2, At: 55 * time.Second, Width: 10 * time.Second}, "--load-at:"},
		{Spec{Pattern: "sine", Duration: time.Minute, Base: 10, Peak: 2}, "--load-peak:"},
		{Spec{Pattern: "constant", Duration: time.Minute}, "--load-base:"},
		{Spec{Pattern: "step", Duration: time.Minute, Base: 1, Peak: 2, Steps: -1}, "--load-steps:"},
		{Spec{Pattern: "sine", Duration: time.Minute, Base: 1, Peak: 2, Period: -time.Second}, "--load-period:"},
	} {
		err := c.s.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), c.flag) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: got %v, want one line naming %s", c.s, err, c.flag)
		}
		noSingleDash(t, err)
	}
}

// singleDash finds a flag written with one dash, as no other flag error is.
var singleDash = regexp.MustCompile(`(^|[^-])-load-`)

func noSingleDash(t *testing.T, err error) {
	t.Helper()
	if err != nil && singleDash.MatchString(err.Error()) {
		t.Errorf("a flag named with one dash (the CLI's errors say --flag): %v", err)
	}
}

// Every error of the package names its flag as the CLI's other errors do:
// --load-NAME.
func TestFlagErrorsNameDoubleDash(t *testing.T) {
	_, err := Parse("spike,base=x,zap=1")
	if err == nil || !strings.HasPrefix(err.Error(), "--load-base: ") || !strings.Contains(err.Error(), "\n--load-zap: unknown key") {
		t.Errorf("Parse: %v", err)
	}
	noSingleDash(t, err)
	_, err = Suite("nope", 1, 2, time.Second)
	noSingleDash(t, err)
	_, err = Run(t.Context(), Config{Pool: -1, MaxLateness: -1, Warmup: -1}, nil)
	if err == nil || !strings.Contains(err.Error(), "--load-pool: ") || !strings.Contains(err.Error(), "--load-warmup: ") {
		t.Errorf("Run: %v", err)
	}
	noSingleDash(t, err)
	noSingleDash(t, Spec{Pattern: "sine", Duration: time.Minute, Base: 10, Peak: 2}.Validate())
}

func TestParse(t *testing.T) {
	p, err := Parse("spike,base=10,peak=110,duration=20s,width=2s,at=5s")
	if err != nil {
		t.Fatal(err)
	}
	if n := Count(p); n != 10*20+100*2 {
		t.Fatalf("%s: %d ops", p, n)
	}
	if p.Rate(6*time.Second) != 110 || p.Rate(8*time.Second) != 10 {
		t.Fatalf("%s: spike not at 5s–7s", p)
	}
	if _, err := Parse("ramp,base=x,colour=red,peak"); err == nil || len(strings.Split(err.Error(), "\n")) != 3 {
		t.Fatalf("want 3 errors, got %v", err)
	}
	a, _ := Parse("poisson,base=100,duration=5s,seed=9")
	b, _ := Parse("poisson,base=100,duration=5s,seed=9")
	if Count(a) != Count(b) {
		t.Fatal("poisson seed not applied")
	}
}

func TestSuite(t *testing.T) {
	ps, err := Suite("standard", 100, 1000, 100*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var total time.Duration
	for _, p := range ps {
		names = append(names, strings.Fields(p.String())[0])
		total += p.Duration()
		if p.Duration() != 20*time.Second {
			t.Errorf("%s: %v, want 20s", p, p.Duration())
		}
	}
	if strings.Join(names, " ") != "constant ramp spike sine burst" || total != 100*time.Second {
		t.Fatalf("suite %v over %v", names, total)
	}
	// Every part peaks at the peak (the trap of rate caps read as peaks).
	for _, p := range ps[1:] {
		if r := ratePeak(p); r < 999 {
			t.Errorf("%s peaks at %v/s, want 1000", p, r)
		}
	}
	if ps, err := Suite("staircase", 0, 900, 10*time.Second); err != nil || len(ps) != 1 || Count(ps[0]) != 4500 {
		t.Fatalf("staircase: %v %v", ps, err)
	}
	if _, err := Suite("nope", 1, 2, time.Second); err == nil || !strings.HasPrefix(err.Error(), "--load-suite:") {
		t.Fatalf("unknown suite: %v", err)
	}
}
