//go:build !cgo || !cgostores

package harness

// testCgoStores: built without the cgostores tag; the relaybench the tests
// build has no lmdb or sqlite3 store.
const testCgoStores = false
