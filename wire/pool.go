package wire

import (
	"context"
	"sync"
)

// DialPool dials n connections to url concurrently. On any failure it closes
// the ones that succeeded and returns the first error.
func DialPool(ctx context.Context, url string, n int, o Options) ([]*Conn, error) {
	conns := make([]*Conn, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conns[i], errs[i] = Dial(ctx, url, o)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			for _, c := range conns {
				if c != nil {
					c.Close()
				}
			}
			return nil, err
		}
	}
	return conns, nil
}
