package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
)

// TestJSONToAFileThatHoldsNone: --json to a file that can hold no results
// file to overwrite (a FIFO, /dev/null) is written as it is: the results
// reach the FIFO's reader, nothing is reserved beside it, and merge -o
// /dev/null passes its check. An existing regular file stays refused
// (TestOutputPathCheckedBeforeTheRun).
func TestJSONToAFileThatHoldsNone(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "results.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo) // blocks until the writer opens it (or the guard below)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	res := runCLI(t, "run", "--store", "sink", "--events", "50", "--skip-query", "--json", fifo, "--no-progress",
		"--cache-dir", filepath.Join(dir, "cache"), "--out", filepath.Join(dir, "out"))
	if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		w.Close() // the reader still waits (nothing was written): end its read
	}
	var b []byte
	select {
	case b = <-got:
	case <-time.After(time.Minute): // a hang guard only
		t.Fatal("the FIFO's reader never returned")
	}
	if res.code == 2 {
		t.Fatalf("--json FIFO refused: %s", res.stderr)
	}
	var f results.File
	if err := json.Unmarshal(b, &f); err != nil || len(f.Runs) != 1 {
		t.Fatalf("the FIFO got no results file (%v), exit %d:\n%s\nstderr: %s", err, res.code, b, res.stderr)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if n := e.Name(); n != "results.fifo" && n != "cache" && n != "out" {
			t.Errorf("left beside the FIFO: %s", n)
		}
	}
	if js, _ := filepath.Glob(filepath.Join(dir, "out", "*.json")); len(js) > 0 {
		t.Errorf("a results file was written to --out too: %v", js)
	}
	if err := (&outputFlags{JSON: os.DevNull, Out: filepath.Join(dir, "out")}).validate(); err != nil {
		t.Errorf("--json %s: %v", os.DevNull, err)
	}
	if err := (&mergeCmd{Files: []string{"a.json"}, Output: os.DevNull}).checkFlags(); err != nil {
		t.Errorf("merge -o %s: %v", os.DevNull, err)
	}
}
