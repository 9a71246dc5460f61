package main

import (
	"os"
	"testing"

	"github.com/relaybench/relaybench/internal/testkit"
)

// TestMain removes the relaybench binary the tests built (relaybenchBin):
// a test run leaves nothing in the temp dir.
func TestMain(m *testing.M) {
	code := m.Run()
	testkit.RemoveRelaybench()
	os.Exit(code)
}
