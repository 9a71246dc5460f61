package main

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/cli.md from the commands' --help")

// TestCLIReferenceUpToDate keeps docs/cli.md, the flag reference the README
// points to, identical to what the commands print for --help.
func TestCLIReferenceUpToDate(t *testing.T) {
	top := runCLI(t, "--help")
	if top.code != 0 {
		t.Fatalf("--help exit %d", top.code)
	}
	var b strings.Builder
	b.WriteString("# relaybench command reference\n\nGenerated from `relaybench <command> --help` by\n`go test ./cmd/relaybench -run TestCLIReferenceUpToDate -update-docs`; a test fails when it is stale.\n\n")
	b.WriteString("```\n" + top.stdout + "```\n")
	cmdLine := regexp.MustCompile(`^  ([a-z][a-z-]*(?: [a-z][a-z-]*)?)  `)
	inCommands := false
	for _, line := range strings.Split(top.stdout, "\n") {
		if strings.HasPrefix(line, "Commands:") {
			inCommands = true
			continue
		}
		if !inCommands {
			continue
		}
		m := cmdLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name := m[1]
		res := runCLI(t, append(strings.Fields(name), "--help")...)
		if res.code != 0 {
			t.Fatalf("%s --help: exit %d: %s", name, res.code, res.stderr)
		}
		b.WriteString("\n## relaybench " + name + "\n\n```\n" + res.stdout + "```\n")
	}
	const path = "../../docs/cli.md"
	if *updateDocs {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(path)
	if err != nil || string(have) != b.String() {
		t.Fatalf("docs/cli.md is stale: run go test ./cmd/relaybench -run TestCLIReferenceUpToDate -update-docs")
	}
}
