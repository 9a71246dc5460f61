package main

import (
	"context"
	"testing"
	"time"
)

// TestWebFlags: --web, --web-keep, --prometheus-rw and --relay-metrics
// refuse bad values as usage errors, on every measuring command (they are
// in outputFlags), before anything runs; a non-loopback --web needs
// --web-any-address.
func TestWebFlags(t *testing.T) {
	cases := []usageCase{}
	for _, cmd := range []string{"run", "subscribe", "load", "conformance"} {
		cases = append(cases,
			usageCase{[]string{cmd, "--web", "0.0.0.0:8080"}, []string{"--web 0.0.0.0:8080", "not a loopback address", "--web-any-address"}},
			usageCase{[]string{cmd, "--web", "abc"}, []string{`--web "abc"`, "want a port or HOST:PORT"}},
			usageCase{[]string{cmd, "--web-keep", "5s"}, []string{"need --web ADDR"}},
			usageCase{[]string{cmd, "--web", "0", "--web-keep", "-1s"}, []string{"--web-keep -1s: must not be negative"}},
			usageCase{[]string{cmd, "--prometheus-rw", "ftp://x"}, []string{`--prometheus-rw "ftp://x"`, "http(s) URL"}},
			usageCase{[]string{cmd, "--relay-metrics", "metrics"}, []string{`--relay-metrics "metrics"`, "/metrics"}},
			usageCase{[]string{cmd, "--web", ""}, []string{"--web: empty value"}},
			usageCase{[]string{cmd, "--prometheus-rw="}, []string{"--prometheus-rw: empty value"}},
			usageCase{[]string{cmd, "--relay-metrics", " "}, []string{"--relay-metrics: empty value"}},
		)
	}
	wantUsage(t, cases)
}

// TestInterruptedRunClosesTheLiveViewWithinASecond: once the run is
// interrupted (Ctrl-C, SIGTERM), the last remote-write push and the
// server's shutdown get closeBudgetInterrupted, not closeBudget (a
// receiver that does not answer held the exit 10 s).
func TestInterruptedRunClosesTheLiveViewWithinASecond(t *testing.T) {
	run, stop := context.WithCancel(context.Background())
	ctx, cancel := closeContext(run)
	dl, _ := ctx.Deadline()
	cancel()
	if time.Until(dl) <= closeBudgetInterrupted {
		t.Fatalf("a running run's close has less than %s", closeBudgetInterrupted)
	}
	stop()
	ctx, cancel = closeContext(run)
	defer cancel()
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > closeBudgetInterrupted || closeBudgetInterrupted > time.Second {
		t.Fatalf("an interrupted run's close may take %s", time.Until(dl))
	}
}
