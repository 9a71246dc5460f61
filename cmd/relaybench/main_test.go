package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain removes the relaybench binary the tests built (relaybenchBin):
// a test run leaves nothing in the temp dir.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
