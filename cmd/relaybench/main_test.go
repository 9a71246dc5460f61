package main

import (
	"os"
	"testing"

	"github.com/relaybench/relaybench/internal/testkit"
)

// TestMain removes the relaybench binary the tests built (relaybenchBin):
// a test run leaves nothing in the temp dir. Four parallel tests at a time
// (unless -parallel says otherwise): the misbehaviour matrix and the real
// relays' tests mostly wait (the package used a quarter of 2 cores; 351 s
// -> 263 s).
func TestMain(m *testing.M) {
	testkit.ParallelAtLeast(4)
	code := m.Run()
	testkit.RemoveRelaybench()
	os.Exit(code)
}
