package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/workload"
)

// TestWorkloadsHelpNamesEveryDeclared: run's and compare's --workloads
// help lists every declared workload (it is made from the declarations:
// a new workload's file is all it takes), where a hand-written list had
// left a newly declared one out.
func TestWorkloadsHelpNamesEveryDeclared(t *testing.T) {
	for _, cmd := range []string{"run", "compare"} {
		res := runCLI(t, cmd, "--help")
		if res.code != 0 {
			t.Fatalf("%s --help: exit %d: %s", cmd, res.code, res.stderr)
		}
		// the --workloads flag's lines: up to the next flag's
		var lines []string
		for _, l := range strings.Split(res.stdout, "\n") {
			l = strings.TrimSpace(l)
			if len(lines) > 0 && strings.HasPrefix(l, "-") {
				break
			}
			if len(lines) > 0 || strings.HasPrefix(l, "--workloads=") {
				lines = append(lines, l)
			}
		}
		if len(lines) == 0 {
			t.Fatalf("%s --help has no --workloads: %s", cmd, res.stdout)
		}
		help := strings.Join(lines, " ")
		for _, d := range workload.Registered() {
			if !regexp.MustCompile(`[ :,(]` + regexp.QuoteMeta(d.Name) + `[ ,.]`).MatchString(help) {
				t.Errorf("%s --workloads help leaves out the declared workload %q: %s", cmd, d.Name, help)
			}
		}
	}
}
