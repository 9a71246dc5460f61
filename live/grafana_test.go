package live

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
)

// grafanaExprs is every PromQL expression of deploy/grafana's dashboard,
// with its variables given values ($run: every run).
func grafanaExprs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "deploy", "grafana", "relaybench.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	var out []string
	r := strings.NewReplacer("$run", ".*", "$__rate_interval", "1m")
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			if tg.Expr != "" {
				out = append(out, r.Replace(tg.Expr))
			}
		}
	}
	if len(out) < 10 {
		t.Fatalf("dashboard has %d queries", len(out))
	}
	return out
}

// TestGrafanaDashboardNamesOnlyExportedMetrics: every relaybench_ name
// the dashboard queries is one /metrics exposes.
func TestGrafanaDashboardNamesOnlyExportedMetrics(t *testing.T) {
	st := New(Options{Run: "r"})
	defer st.Close()
	st.SetRelay("relay", os.Getpid()) // any process to sample
	ph := latencyPhase("publish", 1e6)
	ph.RelayChecks = []results.RelayCheck{{Series: "nostr_cmd_event_total", What: "EVENT messages received", Relay: 1, Low: 1, High: 2}}
	st.PhaseDone(ph)
	st.Progress("Querying", 10)(3) // the next phase, in flight
	outcome.New(results.OpEvent, 1).Add(outcome.Accepted, "")
	st.Tick()
	have := map[string]bool{}
	for _, s := range parseExposition(t, string(st.Exposition())) {
		have[s.name] = true
	}
	name := regexp.MustCompile(`relaybench_[a-z_]+`)
	for _, e := range grafanaExprs(t) {
		for _, n := range name.FindAllString(e, -1) {
			if !have[n] {
				t.Errorf("dashboard queries %s, which /metrics does not expose: %s", n, e)
			}
		}
	}
}
