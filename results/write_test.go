package results

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
)

// holds fails t unless dir holds exactly the files named (in any order).
func holds(t *testing.T, dir string, want ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Fatalf("%s holds %q, want %q", dir, got, want)
	}
}

func sample() *File {
	return &File{Command: "run", Runs: []Run{{Relay: Relay{URL: "ws://127.0.0.1:1"}}}}
}

func TestWriteLeavesOnlyTheFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.json")
	if err := Write(p, sample()); err != nil {
		t.Fatal(err)
	}
	holds(t, dir, "r.json")
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, %v", st.Mode(), err)
	}
	if f, err := Read(p); err != nil || len(f.Runs) != 1 {
		t.Fatalf("read back: %v", err)
	}
}

func TestWriteNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.json")
	if err := os.WriteFile(p, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, sample()); err == nil {
		t.Fatal("an existing results file was overwritten")
	}
	if b, _ := os.ReadFile(p); string(b) != "keep" {
		t.Fatalf("content changed to %q", b)
	}
	holds(t, dir, "r.json")
}

func TestWriteFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{sub, filepath.Join(dir, "missing", "r.json")} {
		if err := Write(p, sample()); err == nil {
			t.Errorf("%s: written", p)
		}
	}
	holds(t, dir, "sub") // no sub.tmp
	holds(t, sub)
}

func TestReserveThenWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run-1.json")
	got, err := Reserve(p, false)
	if err != nil || got != p {
		t.Fatalf("Reserve = %q, %v", got, err)
	}
	if _, err := Reserve(p, false); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second exclusive Reserve: %v, want fs.ErrExist", err)
	}
	if err := Write(p, sample()); err != nil {
		t.Fatalf("writing the reserved name: %v", err)
	}
	if err := Write(p, sample()); err == nil {
		t.Fatal("written twice")
	}
	holds(t, dir, "run-1.json")
}

func TestReserveUniqueAtOnce(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run-20261122-231100.json")
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := Reserve(p, true)
			mu.Lock()
			defer mu.Unlock()
			if err != nil || seen[got] {
				t.Errorf("Reserve = %q, %v", got, err)
			}
			seen[got] = true
		}()
	}
	wg.Wait()
	var want, hidden, got []string
	want = append(want, p)
	hidden = append(hidden, ".run-20261122-231100.json.tmp")
	for n := 2; n <= 10; n++ {
		want = append(want, filepath.Join(dir, fmt.Sprintf("run-20261122-231100-%d.json", n)))
		hidden = append(hidden, fmt.Sprintf(".run-20261122-231100-%d.json.tmp", n))
	}
	for name := range seen {
		got = append(got, name)
	}
	sort.Strings(want)
	sort.Strings(got)
	sort.Strings(hidden)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("reserved %v, want %v", got, want)
	}
	// Held by hidden files only: no visible file before the results are whole.
	holds(t, dir, hidden...)
	for _, p := range want {
		Release(p)
	}
	holds(t, dir) // released
}

// TestReserveShowsNothingUntilWritten: a reserved name is held by a hidden
// file only, so a process killed before writing (SIGKILL) leaves no empty
// or partial results file for `report *.json` to trip on; the written file
// is whole, and the reservation gone with the write.
func TestReserveShowsNothingUntilWritten(t *testing.T) {
	dir := t.TempDir()
	p, err := Reserve(filepath.Join(dir, "run-1.json"), true)
	if err != nil {
		t.Fatal(err)
	}
	holds(t, dir, ".run-1.json.tmp")
	if m, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(m) != 0 {
		t.Fatalf("*.json matches %v before the results are written", m)
	}
	if err := Write(p, sample()); err != nil {
		t.Fatal(err)
	}
	holds(t, dir, "run-1.json")
	if _, err := Read(p); err != nil {
		t.Fatal(err)
	}
	// A name written meanwhile by another process is not reserved again.
	if _, err := Reserve(p, false); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("reserving a written name: %v, want fs.ErrExist", err)
	}
}

// TestStaleHiddenFilesCleaned: the hidden reservation and temporary files
// of a process that is gone (killed) are removed by the next Reserve in the
// folder; those of a live process stay.
func TestStaleHiddenFilesCleaned(t *testing.T) {
	dir := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead, live := gone.Process.Pid, os.Getpid()
	files := map[string]string{
		".run-a.json.tmp": fmt.Sprintf("%d\n", dead), fmt.Sprintf(".run-b.json.%d-123.tmp", dead): "{\"partial",
		".run-c.json.tmp": fmt.Sprintf("%d\n", live), fmt.Sprintf(".run-d.json.%d-456.tmp", live): "{",
		"keep.json": "{}", ".other.tmp": "x",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The dead process's reservation no longer holds run-a.json.
	got, err := Reserve(filepath.Join(dir, "run-a.json"), false)
	if err != nil {
		t.Fatalf("a dead process's reservation still holds the name: %v", err)
	}
	Release(got)
	want := []string{".other.tmp", ".run-c.json.tmp", fmt.Sprintf(".run-d.json.%d-456.tmp", live), "keep.json"}
	holds(t, dir, want...)
}
