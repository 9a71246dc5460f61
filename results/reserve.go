package results

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Results files are whole or absent: a name is reserved by a hidden file
// next to it (.NAME.tmp, holding the reserving process's id), the JSON is
// written to another hidden file (.NAME.<pid>-<random>.tmp) and linked to
// NAME only when complete. A process killed at any point (SIGKILL, a lost
// machine) leaves no visible file that is not a whole results file; its
// hidden files are removed by the next Reserve in that folder once their
// process is gone, and are never matched by *.json.

// reservation is the hidden file that holds path's name.
func reservation(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
}

// Reserve takes path's name for this process without creating path: a
// hidden reservation file is created exclusively (O_EXCL), so no other
// process can take the name before Write fills it, and a results file
// already there is refused. With unique, a taken name is no error: Reserve
// tries NAME-2.EXT, NAME-3.EXT, … and returns the name it reserved.
// Without unique, a taken name is an error that wraps fs.ErrExist. Call
// Release if the name is never written; Write releases it.
func Reserve(path string, unique bool) (string, error) {
	CleanStale(filepath.Dir(path))
	ext := filepath.Ext(path)
	stem := strings.TrimSuffix(path, ext)
	for n := 1; n <= 10000; n++ {
		p := path
		if n > 1 {
			p = fmt.Sprintf("%s-%d%s", stem, n, ext)
		}
		err := reserveOne(p)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, fs.ErrExist) || !unique {
			return "", err
		}
	}
	return "", fmt.Errorf("%s: no free name (tried 10000)", path)
}

// reserveOne reserves p, or fails with an error wrapping fs.ErrExist when
// p or its reservation exists.
func reserveOne(p string) error {
	r := reservation(p)
	fh, err := os.OpenFile(r, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, werr := fmt.Fprintf(fh, "%d\n", os.Getpid())
	if cerr := fh.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(r)
		return werr
	}
	// Checked after the reservation exists: a writer links NAME before it
	// removes its reservation, so a name written meanwhile is seen here.
	if _, err := os.Lstat(p); err == nil {
		os.Remove(r)
		return &fs.PathError{Op: "reserve", Path: p, Err: fs.ErrExist}
	}
	return nil
}

// Release gives up the reservation of path made by this process (nothing
// when there is none, or another process holds it). Write calls it.
func Release(path string) {
	r := reservation(path)
	if pid, ok := reservedBy(r); ok && pid == os.Getpid() {
		os.Remove(r)
	}
}

// reservedBy reads the process id a reservation file holds.
func reservedBy(r string) (int, bool) {
	b, err := os.ReadFile(r)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b)))
	return pid, err == nil && pid > 0
}

// tempPrefix starts the name of the hidden file Write writes path's JSON
// to before linking it into place.
func tempPrefix(path string) string {
	return "." + filepath.Base(path) + "." + strconv.Itoa(os.Getpid()) + "-"
}

// CleanStale removes the hidden reservation and temporary files of results
// files in dir whose process is gone (killed before it wrote or released
// them). Files of a live process, and files it cannot attribute, stay (an
// unattributed one older than an hour goes).
func CleanStale(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".tmp") || !strings.Contains(name, ".json.") || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, name)
		pid, ok := stalePID(p, name)
		if ok && processGone(pid) {
			os.Remove(p)
		} else if !ok {
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Hour {
				os.Remove(p)
			}
		}
	}
}

// stalePID is the process that made a hidden results file: in the
// reservation's content, or in a temporary file's name (.NAME.<pid>-R.tmp).
func stalePID(p, name string) (int, bool) {
	rest := strings.TrimSuffix(name, ".tmp")
	if strings.HasSuffix(rest, ".json") {
		return reservedBy(p)
	}
	i := strings.LastIndex(rest, ".json.")
	if i < 0 {
		return 0, false
	}
	id, _, _ := strings.Cut(rest[i+len(".json."):], "-")
	pid, err := strconv.Atoi(id)
	return pid, err == nil && pid > 0
}

// processGone reports whether no process has this id.
func processGone(pid int) bool {
	return syscall.Kill(pid, 0) == syscall.ESRCH
}
