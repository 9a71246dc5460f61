package main

import (
	"context"
	"regexp"
	"testing"
)

// TestSignEstimate: the load command says how long signing will take
// whenever that is over signSaid, whatever the count (not from 200,000
// events only), in numfmt's units (never Go's "1h2m3s"), and nothing for a
// count too small to be worth a sample. A billion events take hours on any
// machine (the 2,048-event sample would have to sign in 4 µs to bring the
// estimate under 2 s), so the test does not depend on the machine's speed.
func TestSignEstimate(t *testing.T) {
	keys, err := liveKeyFlags{Seed: 1, Authors: 5, CacheDir: t.TempDir()}.keys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := signEstimate(context.Background(), keys, signProbed-1, 64); got != "" {
		t.Errorf("%d events: %q, want no estimate", signProbed-1, got)
	}
	got := signEstimate(context.Background(), keys, 1_000_000_000, 64)
	want := regexp.MustCompile(`^ \(about [0-9.]+(min|h) at this machine's signing rate, [0-9.]+ GiB in .+\)$`)
	if !want.MatchString(got) {
		t.Errorf("a billion events: %q, want %v", got, want)
	}
}
