//go:build !cgo || !cgostores

package embedded

import (
	"fmt"

	"github.com/fiatjaf/eventstore"
)

// cgoStores is empty in a build without the cgostores tag (or without cgo):
// LMDB and SQLite are C libraries, and compiling them takes minutes.
var cgoStores []string

// cgoStoresHint says how to build relaybench with the lmdb and sqlite3
// stores.
const cgoStoresHint = "to build a relaybench with the lmdb and sqlite3 stores: go build -tags cgostores ./cmd/relaybench (needs cgo and a C compiler, e.g. apt-get install gcc; compiling SQLite and LMDB takes a few minutes)"

// openCgoStore explains that lmdb and sqlite3 are not in this build.
func openCgoStore(name, _ string) (eventstore.Store, error) {
	return nil, fmt.Errorf("store %s is not in this build of relaybench: %s", name, cgoStoresHint)
}

// NotBuilt names the stores this build leaves out, each with how to build
// them in.
var NotBuilt = map[string]string{"lmdb": cgoStoresHint, "sqlite3": cgoStoresHint}
