// Package owntemp makes temporary files and directories named after the
// process that made them, so that those a process killed outright (SIGKILL,
// the OOM killer) left behind are removed by the next one: a name is
// prefix, the process id, '-' and a random part.
package owntemp

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// File creates a temporary file in dir (os.TempDir() when empty) named
// after this process, after removing the files and directories of that
// prefix whose process is gone.
func File(dir, prefix string) (*os.File, error) {
	dir = orTemp(dir)
	Sweep(dir, prefix)
	return os.CreateTemp(dir, prefix+strconv.Itoa(os.Getpid())+"-*")
}

// Dir is File for a directory.
func Dir(dir, prefix string) (string, error) {
	dir = orTemp(dir)
	Sweep(dir, prefix)
	return os.MkdirTemp(dir, prefix+strconv.Itoa(os.Getpid())+"-*")
}

// Sweep removes the entries of dir named prefix, a process id and '-' whose
// process is gone. A pid reused by another process keeps its entry: nothing
// a live process may be using is removed.
func Sweep(dir, prefix string) {
	ents, err := os.ReadDir(orTemp(dir))
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		id, _, ok := strings.Cut(rest, "-")
		if !ok {
			continue
		}
		if pid, err := strconv.Atoi(id); err == nil && pid > 0 && pid != os.Getpid() && syscall.Kill(pid, 0) == syscall.ESRCH {
			os.RemoveAll(filepath.Join(orTemp(dir), e.Name()))
		}
	}
}

func orTemp(dir string) string {
	if dir == "" {
		return os.TempDir()
	}
	return dir
}
