//go:build !cgo

package embedded

import (
	"fmt"

	"github.com/fiatjaf/eventstore"
)

// cgoStores is empty without cgo: LMDB and SQLite are C libraries.
var cgoStores []string

// openCgoStore explains that lmdb and sqlite3 need a cgo build.
func openCgoStore(name, _ string) (eventstore.Store, error) {
	return nil, fmt.Errorf("store %s needs relaybench built with cgo: install a C compiler (apt-get install gcc) and rebuild", name)
}
