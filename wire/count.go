package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/nostr"
)

// EndCount is how a Count ends when the relay answered with a COUNT frame.
const EndCount QueryEnd = "count"

// CountResult is what Count collected (NIP-45). Times are mono.Now() values.
type CountResult struct {
	// Count is the relay's count; HasCount is false when the COUNT frame's
	// object held no usable "count" (BadObject says why).
	Count    int64
	HasCount bool
	// Approximate is the relay's "approximate": true.
	Approximate bool
	// HLL is the hex of the relay's "hll" registers ("" when none).
	HLL string
	// BadObject says why the count object could not be read ("" when it could).
	BadObject string
	// Bare: the answer was a bare integer, not an object; Count holds it.
	Bare   bool
	Sent   int64 // just before the COUNT was written
	End    int64 // COUNT/CLOSED read, or when the timeout/error was noticed
	Ended  QueryEnd
	Reason string // CLOSED reason
	Class  Class  // CLOSED reason class
	Err    error  // for EndTimeout and EndConnError
}

// countObject is the object of a ["COUNT",<sub id>,{...}] answer.
type countObject struct {
	Count       *json.RawMessage `json:"count"`
	Approximate *bool            `json:"approximate"`
	HLL         *string          `json:"hll"`
}

// ParseCountObject reads the object of a COUNT answer: {"count": n,
// "approximate"?: bool, "hll"?: "hex"}. Anything else (a bare number, an
// object without an integer count) is an error; for a bare non-negative
// integer the error is a *BareCountError and n is the number.
func ParseCountObject(obj []byte) (n int64, approximate bool, hll string, err error) {
	obj = bytes.TrimSpace(obj)
	if len(obj) == 0 || obj[0] != '{' {
		err := fmt.Errorf(`the answer is %.40s, not an object {"count": n} (NIP-45)`, obj)
		if n, perr := strconv.ParseInt(string(obj), 10, 64); perr == nil && n >= 0 {
			return n, false, "", &BareCountError{N: n, err: err} // the number, in the wrong form
		}
		return 0, false, "", err
	}
	var o countObject
	if err := json.Unmarshal(obj, &o); err != nil {
		return 0, false, "", fmt.Errorf("count object is not JSON: %v", err)
	}
	if o.Approximate != nil {
		approximate = *o.Approximate
	}
	if o.HLL != nil {
		hll = *o.HLL
	}
	if o.Count == nil {
		return 0, approximate, hll, errors.New(`count object has no "count"`)
	}
	n, err = strconv.ParseInt(string(*o.Count), 10, 64)
	if err != nil || n < 0 {
		return 0, approximate, hll, fmt.Errorf(`"count" is not a non-negative integer: %.40s`, *o.Count)
	}
	return n, approximate, hll, nil
}

// BareCountError is ParseCountObject's error for an answer that is a bare
// non-negative integer (["COUNT",id,n]): N is that number.
type BareCountError struct {
	N   int64
	err error
}

func (e *BareCountError) Error() string { return e.err.Error() }

// countFrame hands a COUNT frame to the Count waiting for its sub id; a
// COUNT for no open Count is only counted (Stats.Counts).
func (c *Conn) countFrame(f *frame, recv int64) {
	c.mu.Lock()
	var s *Sub
	if f.a.esc {
		s = c.subs[f.a.String()]
	} else {
		s = c.subs[string(f.a.raw)]
	}
	if s != nil && s.onCount != nil {
		c.dropSub(s.id) // a COUNT is answered once
	} else {
		s = nil
	}
	c.mu.Unlock()
	if s != nil {
		s.onCount(f.obj, recv)
	}
}

// Count sends ["COUNT",subID,filters...] (NIP-45) and waits for the relay's
// COUNT or CLOSED with that id, the connection stopping or ctx ending. The
// error is non-nil for a timeout or connection error. Sub ids share the
// connection's namespace with REQs.
func (c *Conn) Count(ctx context.Context, subID string, filters []nostr.Filter) (CountResult, error) {
	if subID == "" {
		return CountResult{Ended: EndConnError, Err: errors.New("count: empty subscription id")}, errors.New("count: empty subscription id")
	}
	var (
		mu    sync.Mutex
		res   CountResult
		ended bool
	)
	end := make(chan struct{})
	finish := func(how QueryEnd, t int64, fn func()) {
		mu.Lock()
		if !ended {
			ended = true
			res.Ended, res.End = how, t
			if fn != nil {
				fn()
			}
			close(end)
		}
		mu.Unlock()
	}
	s := &Sub{c: c, id: subID, h: SubHandler{
		OnClosed: func(reason string, class Class, recv int64) {
			finish(EndClosed, recv, func() { res.Reason, res.Class = reason, class })
		},
		OnConnError: func(err error) {
			finish(EndConnError, mono.Now(), func() { res.Err = err })
		},
	}}
	s.onCount = func(obj []byte, recv int64) {
		n, approx, hll, err := ParseCountObject(obj)
		finish(EndCount, recv, func() {
			res.Count, res.Approximate, res.HLL = n, approx, hll
			res.HasCount = err == nil
			if err != nil {
				res.BadObject = err.Error()
				var bare *BareCountError
				res.Bare = errors.As(err, &bare)
			}
		})
	}
	if err := c.openSub(s, appendReq("COUNT", subID, filters)); err != nil {
		return CountResult{Ended: EndConnError, Sent: s.sent, Err: err}, err
	}
	select {
	case <-end:
	case <-ctx.Done():
		finish(EndTimeout, mono.Now(), func() { res.Err = fmt.Errorf("%w: %v", ErrTimeout, ctx.Err()) })
	}
	// Forget the id (NIP-45 has no CLOSE for a COUNT): a late answer is
	// then only counted.
	c.mu.Lock()
	if !c.closed && c.subs[subID] == s {
		c.dropSub(subID)
	}
	c.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	res.Sent = s.sent
	return res, res.Err
}
