package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
)

// resultsPath returns where to write the results file, makes its folder and
// reserves the name (results.Reserve): a hidden reservation file is created
// exclusively, so that runs started in the same second, or at once by
// several processes, never write over each other (the default name gets a
// -2, -3, … suffix when taken), and no visible file exists until the
// results are complete. A reservation never written is released when the
// command returns (Globals.AfterRun) or on a forced exit; one left by a
// killed process is removed by the next run in that folder.
func (f outputFlags) resultsPath(command string, started time.Time) (string, error) {
	if f.JSON == "-" {
		pendingRun.Store(&pendingResults{command: command, started: started, path: "-"})
		return "-", nil
	}
	if st, err := os.Stat(f.JSON); f.JSON != "" && err == nil && notAResultsFile(st) {
		// /dev/null, a FIFO: nothing to reserve or overwrite (results.Write).
		pendingRun.Store(&pendingResults{command: command, started: started, path: f.JSON})
		return f.JSON, nil
	}
	p, unique := f.JSON, false
	if p == "" {
		p, unique = filepath.Join(f.Out, fmt.Sprintf("%s-%s.json", command, started.UTC().Format("20060102-150405"))), true
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("results folder: %v", pathErr(err))
	}
	got, err := results.Reserve(p, unique)
	if errors.Is(err, fs.ErrExist) {
		return "", withCode(judge.Usage, fmt.Errorf("--json %s: file exists: relaybench never overwrites a results file; give another name", p))
	}
	if err != nil {
		return "", fmt.Errorf("results file: %v", pathErr(err))
	}
	holdReserved(got)
	pendingRun.Store(&pendingResults{command: command, started: started, path: got})
	return got, nil
}

// pendingResults is the results file a command reserved, with what it
// needs to save a run interrupted before its first phase (see
// saveInterrupted).
type pendingResults struct {
	command string
	started time.Time
	path    string
}

var pendingRun atomic.Pointer[pendingResults]

// Reserved results files not written yet, each with the exit hook that
// removes it on a forced exit.
var (
	reservedMu sync.Mutex
	reserved   = map[string]func(){}
)

func holdReserved(path string) {
	remove := addExitHook(func() { results.Release(path) })
	reservedMu.Lock()
	reserved[path] = remove
	reservedMu.Unlock()
}

// releaseReserved releases the reserved results names (a no-op for those
// written: Write released them).
func releaseReserved() {
	reservedMu.Lock()
	defer reservedMu.Unlock()
	for p, remove := range reserved {
		results.Release(p)
		remove()
		delete(reserved, p)
	}
}
