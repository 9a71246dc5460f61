package results

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
)

// names lists dir's entries.
func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
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
	if got := names(t, dir); len(got) != 1 || got[0] != "r.json" {
		t.Fatalf("left %v, want only r.json", got)
	}
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
	if got := names(t, dir); len(got) != 1 {
		t.Fatalf("left %v", got)
	}
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
	if got := names(t, dir); len(got) != 1 || got[0] != "sub" {
		t.Fatalf("left %v, want only sub (no sub.tmp)", got)
	}
	if got := names(t, sub); len(got) != 0 {
		t.Fatalf("left %v in sub", got)
	}
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
	if got := names(t, dir); len(got) != 1 {
		t.Fatalf("left %v", got)
	}
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
	want := []string{filepath.Base(p)}
	for n := 2; n <= 10; n++ {
		want = append(want, fmt.Sprintf("run-20261122-231100-%d.json", n))
	}
	sort.Strings(want)
	if got := names(t, dir); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("reserved %v, want %v", got, want)
	}
}
