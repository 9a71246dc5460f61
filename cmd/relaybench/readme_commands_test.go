package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReadmeCommandTable: the README's command table (Usage) names every
// command relaybench --help lists, and nothing else.
func TestReadmeCommandTable(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "| command | what it does |\n")
	if !ok {
		t.Fatal("README has no command table (| command | what it does |)")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	row := regexp.MustCompile("^\\| `([a-z -]+(?:/[a-z-]+)*)` \\|")
	var listed []string
	for _, line := range strings.Split(table, "\n")[1:] { // past |---|
		m := row.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("README command table: row %q names no command", line)
		}
		// "relays list/install/start" is three commands.
		head, tails, _ := strings.Cut(m[1], " ")
		if tails == "" {
			listed = append(listed, head)
			continue
		}
		for _, sub := range strings.Split(tails, "/") {
			listed = append(listed, head+" "+sub)
		}
	}
	code, help, _ := runHere(t, "--help")
	_, help, _ = strings.Cut(help, "\nCommands:\n")
	if code != 0 || help == "" {
		t.Fatalf("--help: exit %d, no Commands section", code)
	}
	cmdLine := regexp.MustCompile(`(?m)^  ([a-z][a-z-]*(?: [a-z][a-z-]*)?)  `)
	var names []string
	for _, m := range cmdLine.FindAllStringSubmatch(help, -1) {
		names = append(names, m[1])
		if !slices.Contains(listed, m[1]) {
			t.Errorf("README's command table lacks %q", m[1])
		}
	}
	if len(names) < 20 {
		t.Fatalf("--help lists %d commands: %q", len(names), names)
	}
	for _, l := range listed {
		if !slices.Contains(names, l) {
			t.Errorf("README's command table names %q, which is no command", l)
		}
	}
}
