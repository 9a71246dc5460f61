package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/relaybench/relaybench/relay/embedded"
)

var built struct {
	once sync.Once
	path string
	err  error
}

// Relaybench is the relaybench binary built from this module
// (cmd/relaybench) once per test binary, with the stores this test binary
// has (-tags cgostores when it has the lmdb and sqlite3 stores), in a
// temporary folder that RemoveRelaybench removes.
func Relaybench() (string, error) {
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "relaybench-bin-")
		if err != nil {
			built.err = err
			return
		}
		path := filepath.Join(dir, "relaybench")
		args := []string{"build"}
		if len(embedded.NotBuilt) == 0 {
			args = append(args, "-tags=cgostores")
		}
		args = append(args, "-o", path, "github.com/relaybench/relaybench/cmd/relaybench")
		if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
			os.RemoveAll(dir)
			built.err = fmt.Errorf("%v: %s", err, out)
			return
		}
		built.path = path
	})
	return built.path, built.err
}

// RemoveRelaybench removes the binary Relaybench built, if any: call it
// from TestMain once the tests have run, so that nothing is left behind.
func RemoveRelaybench() {
	if built.path != "" {
		os.RemoveAll(filepath.Dir(built.path))
	}
}
