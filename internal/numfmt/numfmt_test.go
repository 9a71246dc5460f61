package numfmt

import (
	"testing"
	"time"
)

// wantEach checks name's fn on each input against the string it wants.
func wantEach[K comparable](t *testing.T, name string, fn func(K) string, want map[K]string) {
	t.Helper()
	for in, w := range want {
		if got := fn(in); got != w {
			t.Errorf("%s(%v) = %q, want %q", name, in, got, w)
		}
	}
}

func TestGroup(t *testing.T) {
	wantEach(t, "Group", Group, map[int64]string{0: "0", 999: "999", 1000: "1,000", 3120: "3,120", 1234567: "1,234,567", -4500: "-4,500", -1234567: "-1,234,567"})
}

func TestDur(t *testing.T) {
	wantEach(t, "Dur", Dur, map[time.Duration]string{
		0: "0s", 950: "950ns", 12345 * time.Nanosecond: "12.3µs", 668360 * time.Nanosecond: "668µs",
		999600 * time.Nanosecond: "1.00ms", 1250303 * time.Nanosecond: "1.25ms", 257163 * time.Microsecond: "257ms",
		1700790 * time.Microsecond: "1.70s", 74400 * time.Millisecond: "74.4s", -2500 * time.Microsecond: "-2.50ms",
		time.Minute: "60.0s", 5 * time.Minute: "300s", 999600 * time.Millisecond: "16.7min", time.Hour: "60.0min",
		1000 * time.Minute: "16.7h", 150 * time.Hour: "150h", 1200 * time.Hour: "1200h", 59999999 * time.Nanosecond: "60.0ms",
	})
}

func TestRound(t *testing.T) {
	wantEach(t, "Round", func(d time.Duration) string { return Round(d).String() }, map[time.Duration]string{
		950: "950ns", 1250303 * time.Nanosecond: "1.25ms", 1700790 * time.Microsecond: "1.7s",
		668360 * time.Nanosecond: "668µs", 2304117 * time.Nanosecond: "2.3ms", 257163 * time.Microsecond: "257ms",
	})
}

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		noun string
		want string
	}{{1, "publisher", "1 publisher"}, {0, "subscriber", "0 subscribers"}, {3, "connection", "3 connections"},
		{1, "query", "1 query"}, {1200, "query", "1,200 queries"}, {2, "day", "2 days"}, {2, "process", "2 processes"}} {
		if got := Count(c.n, c.noun); got != c.want {
			t.Errorf("Count(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}

func TestBytes(t *testing.T) {
	wantEach(t, "Bytes", Bytes, map[float64]string{0: "0 B", 512: "512 B", 1023: "1,023 B", 1024: "1.00 KiB", 57344: "56.0 KiB",
		1524 * 1024: "1.49 MiB", 1<<20 - 1: "1.00 MiB", 3 << 30: "3.00 GiB", -2048: "-2.00 KiB",
		// three significant digits, as durations: no ".00" on a figure of
		// hundreds (subscribe's notes said 332.00 KiB)
		332 << 10: "332 KiB", 272 << 10: "272 KiB", 16 << 10: "16.0 KiB", 8 << 20: "8.00 MiB", 130296791: "124 MiB",
		1023.6 * 1024: "1.00 MiB", 1000 << 10: "1,000 KiB", 999.96 * 1024: "1,000 KiB", 9.996 * 1024: "10.0 KiB"})
}

func TestRatio(t *testing.T) {
	for r, want := range map[float64]string{0.7: "0.70", 1.1749: "1.17", 12.345: "12.3", 11.62: "11.6", 123.4: "123", 0.1: "0.10", 0.0448: "0.0448", 0.004483: "0.00448", 0: "0.00"} {
		if got := Ratio(r); got != want {
			t.Errorf("Ratio(%v) = %q, want %q", r, got, want)
		}
	}
}

func TestFig3(t *testing.T) {
	for v, want := range map[float64]string{13.38: "13.4", 3.617: "3.62", 0.1234: "0.123", 0.01234: "0.0123", 10: "10", 1234.6: "1,235", 999.6: "1,000", 0: "0", 250: "250", 99.96: "100"} {
		if got := Fig3(v); got != want {
			t.Errorf("Fig3(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestAllOf(t *testing.T) {
	for n, want := range map[int]string{1: "the one in-flight slot was", 2: "both in-flight slots were", 10: "all 10 in-flight slots were"} {
		if got := AllOf(n, "in-flight slot") + " " + Were(n); got != want {
			t.Errorf("AllOf(%d) = %q, want %q", n, got, want)
		}
	}
	if got := Bytes(1006 << 20); got != "1,006 MiB" {
		t.Errorf("Bytes(1006 MiB) = %q, want grouped", got)
	}
}
