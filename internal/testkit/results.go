package testkit

import (
	"testing"

	"github.com/relaybench/relaybench/results"
)

// ReadResults reads the results file at path as the CLI does
// (results.Read: this build's schema); the test fails if it cannot.
func ReadResults(t testing.TB, path string) *results.File {
	t.Helper()
	f, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
