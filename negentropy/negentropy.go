// Package negentropy is relaybench's NIP-77 client: it reconciles a local
// set of (created_at, id) items with the events a relay holds for a filter,
// over one wire.Conn (NEG-OPEN / NEG-MSG / NEG-CLOSE / NEG-ERR), and says
// which ids only the client has (Have) and which only the relay has (Need).
//
// The protocol state machine (negentropy v1: ranges, fingerprints, id
// lists) is go-nostr v0.52.3's nip77/negentropy with its vector storage;
// relaybench does the networking itself. Its cost is part of the client and
// is measured: the CPU time of this goroutine's thread inside the protocol
// calls (building the sealed vector is measured apart, as Prep).
package negentropy

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	gonostr "github.com/nbd-wtf/go-nostr"
	neg "github.com/nbd-wtf/go-nostr/nip77/negentropy"
	"github.com/nbd-wtf/go-nostr/nip77/negentropy/storage/vector"
	"golang.org/x/sys/unix"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/wire"
)

// MinFrameSize is the smallest frame size limit the protocol accepts.
const MinFrameSize = 4096

// Item is one element of a set: an event's created_at and its id (64
// lowercase hex characters).
type Item struct {
	CreatedAt int64
	ID        string
}

// Set is a local set, sealed (sorted) once and reusable for any number of
// reconciliations, one at a time (not concurrently).
type Set struct {
	v *vector.Vector
	// Prep is the thread CPU time spent building and sorting it: a real
	// client keeps such an index, so it is not part of a reconciliation.
	Prep time.Duration
}

// NewSet builds a set from items. Ids must be 64 hex characters.
func NewSet(items []Item) (*Set, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0 := threadCPU()
	v := vector.New()
	for _, it := range items {
		if len(it.ID) != 64 {
			return nil, fmt.Errorf("negentropy: bad id %q: want 64 hex characters", it.ID)
		}
		v.Insert(gonostr.Timestamp(it.CreatedAt), it.ID)
	}
	v.Seal()
	return &Set{v: v, Prep: threadCPU() - c0}, nil
}

// Len is the number of items.
func (s *Set) Len() int { return s.v.Size() }

// Options configure one reconciliation.
type Options struct {
	// FrameSize is the protocol's frame size limit in bytes of binary
	// message (the hex on the wire is twice that): 0 means unlimited;
	// otherwise at least MinFrameSize.
	FrameSize int
	// Timeout bounds the wait for each of the relay's answers (default 30 s).
	Timeout time.Duration
}

// Result is what one reconciliation did. Times are mono.Now() values.
type Result struct {
	Have       []string // ids only the client has
	Need       []string // ids only the relay has
	RoundTrips int      // client messages answered by a NEG-MSG
	BytesUp    int64    // NEG-OPEN, NEG-MSG and NEG-CLOSE frames written
	BytesDown  int64    // NEG-MSG frames read
	Start, End int64    // NEG-OPEN written .. last NEG-MSG read (or the failure)
	// ClientCPU is the thread CPU time spent in the protocol: making the
	// client's messages and reading the relay's (hex included).
	ClientCPU time.Duration
	// Converged is true when the protocol ended with nothing left to say.
	Converged bool
}

// Errors of Sync (besides connection errors and the context's).
var (
	// ErrTimeout: the relay did not answer within Options.Timeout.
	ErrTimeout = errors.New("no NEG-MSG before the deadline")
)

// RelayError is the relay's NEG-ERR.
type RelayError struct {
	Reason string
	Class  wire.Class
}

func (e *RelayError) Error() string { return "NEG-ERR: " + e.Reason }

// ProtocolError is a relay message the client could not use (bad hex,
// wrong version, undecodable ranges): the relay broke NIP-77.
type ProtocolError struct{ Err error }

func (e *ProtocolError) Error() string { return "bad NEG-MSG from the relay: " + e.Err.Error() }
func (e *ProtocolError) Unwrap() error { return e.Err }

type negMsg struct {
	msg    string
	n      int
	recv   int64
	err    string
	class  wire.Class
	failed bool
}

// Sync reconciles local with the relay's events matching filter on cn,
// under subscription id subID. On error the Result holds what was measured
// until then; its Have and Need are then incomplete.
func Sync(ctx context.Context, cn *wire.Conn, subID string, filter nostr.Filter, local *Set, o Options) (Result, error) {
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.FrameSize != 0 && o.FrameSize < MinFrameSize {
		o.FrameSize = MinFrameSize
	}
	var res Result
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	cpu0 := threadCPU()
	n := neg.New(local.v, o.FrameSize)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	defer close(stop)
	var have, need []string
	drain := func(ch chan string, into *[]string) {
		defer wg.Done()
		for {
			select {
			case id, ok := <-ch:
				if !ok {
					return
				}
				*into = append(*into, id)
			case <-stop:
				return
			}
		}
	}
	wg.Add(2)
	go drain(n.Haves, &have)
	go drain(n.HaveNots, &need)
	first := n.Start()
	res.ClientCPU += threadCPU() - cpu0

	in := make(chan negMsg, 4)
	h := wire.NegHandler{
		OnMsg: func(msg string, size int, recv int64) {
			select {
			case in <- negMsg{msg: msg, n: size, recv: recv}:
			default: // the protocol is one message at a time: a flood is dropped
			}
		},
		OnErr: func(reason string, class wire.Class, recv int64) {
			select {
			case in <- negMsg{err: reason, class: class, recv: recv, failed: true}:
			default:
			}
		},
	}
	res.Start = mono.Now()
	s, size, err := cn.NegOpen(subID, filter, first, h)
	if err != nil {
		res.End = mono.Now()
		return res, err
	}
	res.BytesUp += int64(size)
	defer func() {
		if !res.Converged {
			s.Close()
		}
	}()
	tm := time.NewTimer(o.Timeout)
	defer tm.Stop()
	for {
		var m negMsg
		select {
		case m = <-in:
		case <-cn.Done():
			res.End = mono.Now()
			err := cn.Err()
			if err == nil {
				err = wire.ErrClosed
			}
			return res, err
		case <-tm.C:
			res.End = mono.Now()
			return res, ErrTimeout
		case <-ctx.Done():
			res.End = mono.Now()
			return res, ctx.Err()
		}
		res.End = m.recv
		if m.failed {
			return res, &RelayError{Reason: m.err, Class: m.class}
		}
		res.RoundTrips++
		res.BytesDown += int64(m.n)
		c0 := threadCPU()
		out, err := reconcile(n, m.msg)
		res.ClientCPU += threadCPU() - c0
		if err != nil {
			return res, &ProtocolError{Err: err}
		}
		if out == "" {
			// Done: the channels are closed; collect what they held.
			wg.Wait()
			res.Have, res.Need, res.Converged = have, need, true
			if size, err := closeSize(s); err == nil {
				res.BytesUp += int64(size)
			}
			return res, nil
		}
		size, err := s.Msg(out)
		if err != nil {
			res.End = mono.Now()
			return res, err
		}
		res.BytesUp += int64(size)
		tm.Reset(o.Timeout) // Go ≥ 1.23: no stale tick survives a Reset
	}
}

// reconcile runs one protocol step, turning a panic of the library on a
// malformed message into an error.
func reconcile(n *neg.Negentropy, msg string) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("negentropy: %v", r)
		}
	}()
	return n.Reconcile(msg)
}

// closeSize sends NEG-CLOSE and returns its size.
func closeSize(s *wire.NegSession) (int, error) {
	if err := s.Close(); err != nil {
		return 0, err
	}
	return len(`["NEG-CLOSE",""]`) + len(s.ID()), nil
}

// threadCPU is the CPU time of the calling thread (the goroutine is locked
// to it during Sync).
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
