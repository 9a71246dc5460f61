package conformance

import (
	"os"
	"testing"

	"github.com/relaybench/relaybench/internal/testkit"
)

// TestMain runs four parallel tests at a time (unless -parallel says
// otherwise): the package's parallel tests mostly wait, idle, on a check's
// Timeout or on the real relays of TestSharedRelays.
func TestMain(m *testing.M) {
	testkit.ParallelAtLeast(4)
	os.Exit(m.Run())
}
