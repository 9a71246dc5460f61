package embedded

import (
	"slices"
	"strings"
	"testing"
)

// The lmdb and sqlite3 stores are in a build with the cgostores tag (and
// cgo) and in no other: without them, Stores lacks them, NotBuilt names
// them, and asking for one is a one-line error saying how to build them in.
func TestCgoStoresTag(t *testing.T) {
	for _, name := range []string{"lmdb", "sqlite3"} {
		hint, left := NotBuilt[name]
		if in := slices.Contains(Stores, name); in == left {
			t.Fatalf("%s: in Stores %v, in NotBuilt %v: exactly one must hold", name, in, left)
		}
		_, err := New(Options{Store: name, DataDir: t.TempDir()})
		if !left {
			if err != nil {
				t.Fatalf("%s in this build but not opened: %v", name, err)
			}
			continue
		}
		t.Logf("%s: not in this build (go test -tags cgostores runs it)", name)
		if err == nil {
			t.Fatalf("%s opened although the build leaves it out", name)
		}
		msg := err.Error()
		if !strings.Contains(msg, "go build -tags cgostores ./cmd/relaybench") || !strings.Contains(hint, "-tags cgostores") || strings.Contains(msg, "\n") {
			t.Errorf("%s: the error does not say in one line how to build it in: %q", name, msg)
		}
	}
	for _, name := range []string{"native", "badger", "memory"} {
		if !slices.Contains(Stores, name) || NotBuilt[name] != "" {
			t.Errorf("%s is not in the default build", name)
		}
	}
}
