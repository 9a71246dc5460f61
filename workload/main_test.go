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
	os.Exit(m.Run())
}
