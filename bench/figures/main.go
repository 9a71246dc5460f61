// Command figures prints the benchmark record rows for results files made by
// bench/*.sh: one Markdown table row per phase with the figures the targets
// are about. It reads only what the results files hold.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/relaybench/relaybench/results"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: figures LABEL=RESULTS.json …")
		os.Exit(2)
	}
	fmt.Println("| run | phase | events | accepted/s | MB/s | OK p50 | OK p99 | client CPU µs/event | client cores busy | relay cores busy | limited by |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, arg := range os.Args[1:] {
		label, path, ok := strings.Cut(arg, "=")
		if !ok {
			path, label = arg, arg
		}
		f, err := results.Read(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "figures:", err)
			os.Exit(1)
		}
		for _, r := range f.Runs {
			for _, ph := range r.Phases {
				row(label, &ph)
			}
		}
	}
}

func row(label string, ph *results.Phase) {
	secs := float64(ph.Duration) / 1e9
	acc := ph.Counts[results.CountAccepted]
	rate := ph.Rates[results.RateEvents]
	if rate == 0 {
		rate = ph.Rates["accepted_per_sec"]
	}
	lat := ph.Latency[results.LatencyOK]
	p := func(k string) string {
		if lat == nil || lat.Count == 0 {
			return "–"
		}
		return fmt.Sprintf("%.3f ms", float64(lat.Percentiles[k])/1e6)
	}
	cpuPer, clientBusy, relayBusy := "–", "–", "–"
	if r := ph.Resources; r != nil && secs > 0 {
		if acc > 0 {
			cpuPer = fmt.Sprintf("%.2f", r.ClientCPUSecs/float64(acc)*1e6)
		}
		clientBusy = fmt.Sprintf("%.2f", r.ClientCPUSecs/secs)
		if r.RelayCPUSecs > 0 {
			relayBusy = fmt.Sprintf("%.2f", r.RelayCPUSecs/secs)
		}
	}
	limited := "relay (or machine)"
	if ph.ClientLimited {
		limited = "client"
	}
	fmt.Printf("| %s | %s | %d | %.0f | %.1f | %s | %s | %s | %s | %s | %s |\n",
		label, ph.Name, ph.Counts[results.CountSent], rate, ph.Rates[results.RateMB], p("50"), p("99"), cpuPer, clientBusy, relayBusy, limited)
}
