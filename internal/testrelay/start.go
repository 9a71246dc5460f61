package testrelay

import "testing"

// Start starts a test relay on 127.0.0.1 for t, closed when t ends.
func Start(t testing.TB, cfg Config) *Relay {
	t.Helper()
	r := New(cfg)
	t.Cleanup(r.Close)
	return r
}
