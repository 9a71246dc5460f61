package owntemp

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// A corpus file left by a process that is gone (killed outright while
// signing) is removed when the next one is created; files of live
// processes, this one's included, are kept.
func TestFileRemovesThoseOfGoneProcesses(t *testing.T) {
	dir := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	names := map[string]bool{ // name → kept
		"relaybench-corpus-" + strconv.Itoa(gone.Process.Pid) + "-123": false,
		"relaybench-corpus-1-456":                                      true, // init: alive
		"relaybench-corpus-" + strconv.Itoa(os.Getpid()) + "-789":      true,
		"relaybench-fresh-" + strconv.Itoa(gone.Process.Pid) + "-1":    true, // another prefix
		"relaybench-corpus-old.tmp":                                    true, // no pid: an older build's
	}
	for n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f, err := File(dir, "relaybench-corpus-")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	for n, kept := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); (err == nil) != kept {
			t.Errorf("%s: kept %v, want %v", n, err == nil, kept)
		}
	}
}
