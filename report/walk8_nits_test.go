package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/internal/sysinfo"
	"github.com/relaybench/relaybench/results"
)

// A results file of a build with no version information (go run) shows
// that in every report's Tool line, without --version's advice on how to
// stamp one: the Markdown and HTML reports carried "…: go build in a git
// checkout or go install …@VERSION stamps the version".
func TestToolLineUnstampedWithoutAdvice(t *testing.T) {
	f := oneRun("run", nil, results.Phase{Name: "publish", Duration: 1e9, Counts: map[string]int64{"sent": 5, "accepted": 5}})
	f.Tool = results.Tool{Name: "relaybench", Version: sysinfo.Unstamped, GoVersion: "go1.26.8"}
	const want = "relaybench dev, built without version control information (go1.26.8)"
	var md, h bytes.Buffer
	if err := Markdown(&md, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&h, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"markdown": md.String(), "html": h.String(), "summary -v": summaryText(t, f, SummaryOptions{})} {
		if !strings.Contains(out, want) || strings.Contains(out, "stamps the version") {
			t.Errorf("%s: want the Tool line %q without the advice:\n%s", name, want, out)
		}
	}
	f.Tool.Version = "v0.1.0"
	if s := summaryText(t, f, SummaryOptions{}); !strings.Contains(s, "Tool:     relaybench v0.1.0 (go1.26.8)") {
		t.Errorf("a stamped version changed:\n%s", s)
	}
}
