package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompareWritesWhatIsAsked: compare --json FILE writes FILE and no
// Markdown beside it (the user named the one file wanted); without --json
// it writes compare-<time>.json and compare-<time>.md in --out, as the
// README says, and that Markdown opens with the run's verdict (it was
// written before the run was judged: "Verdict: not recorded (… written by
// an older relaybench)").
func TestCompareWritesWhatIsAsked(t *testing.T) {
	args := []string{"compare", "--relays", "khatru-memory", "--events", "50", "--queries", "2",
		"--cache-dir", t.TempDir(), "--no-progress", "--quiet"}
	out := t.TempDir()
	file := filepath.Join(out, "c.json")
	if res := runCLI(t, append(args, "--out", out, "--json", file)...); res.code != 0 {
		t.Fatalf("--json: exit %d\n%s", res.code, res.stderr)
	} else if strings.Contains(res.stderr, "markdown:") {
		t.Errorf("--json: says it wrote Markdown:\n%s", res.stderr)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatal(err)
	}
	if mds, _ := filepath.Glob(filepath.Join(out, "*.md")); len(mds) > 0 {
		t.Errorf("--json %s also wrote %v", file, mds)
	}

	out = t.TempDir()
	if res := runCLI(t, append(args, "--out", out)...); res.code != 0 {
		t.Fatalf("default files: exit %d\n%s", res.code, res.stderr)
	}
	jsons, _ := filepath.Glob(filepath.Join(out, "compare-*.json"))
	mds, _ := filepath.Glob(filepath.Join(out, "compare-*.md"))
	if len(jsons) != 1 || len(mds) != 1 || strings.TrimSuffix(jsons[0], ".json") != strings.TrimSuffix(mds[0], ".md") {
		t.Fatalf("without --json: results %v, Markdown %v; want compare-<time>.json and .md", jsons, mds)
	}
	md, err := os.ReadFile(mds[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "\n**Verdict: PASSED (exit 0): ") {
		t.Errorf("the Markdown comparison does not open with the verdict:\n%s", md)
	}
}
