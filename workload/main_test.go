package workload

import (
	"os"
	"testing"

	"github.com/relaybench/relaybench/internal/testkit"
)

// TestMain runs four parallel tests at a time (unless -parallel says
// otherwise): the package's parallel tests (every workload against every
// misbehaving relay, negentropy's lost OKs) mostly wait on answers that do
// not come, each on its own relay.
func TestMain(m *testing.M) {
	testkit.ParallelAtLeast(4)
	// The quiet-late judgement's cause follows the machine's load average:
	// the tests pin it (busy: the other processes' cause) and set it where
	// they test the quiet one, so no test depends on this machine's load.
	machineQuiet = func() bool { return false }
	os.Exit(m.Run())
}
