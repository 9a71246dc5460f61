//go:build cgo && cgostores

package harness

// testCgoStores: this test binary was built with the cgostores tag, so the
// relaybench the tests build gets it too and has the lmdb and sqlite3
// stores.
const testCgoStores = true
