package main

import "testing"

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
		)
	}
	wantUsage(t, cases)
}
