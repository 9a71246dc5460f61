package live

import (
	"context"
	"encoding/binary"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
)

// unsnappy decodes a snappy block made of literals only (what
// snappyLiteral writes).
func unsnappy(t *testing.T, b []byte) []byte {
	t.Helper()
	n, k := binary.Uvarint(b)
	b = b[k:]
	var out []byte
	for len(b) > 0 {
		if b[0] != 61<<2 {
			t.Fatalf("tag %#x: not a 2-byte-length literal", b[0])
		}
		l := int(b[1]) | int(b[2])<<8 + 1
		out = append(out, b[3:3+l]...)
		b = b[3+l:]
	}
	if uint64(len(out)) != n {
		t.Fatalf("decoded %d bytes, header says %d", len(out), n)
	}
	return out
}

// fields splits a protobuf message into its fields (number → values):
// length-delimited as bytes, fixed64 and varint as 8-byte little endian.
func fields(t *testing.T, b []byte) map[int][][]byte {
	t.Helper()
	m := map[int][][]byte{}
	for len(b) > 0 {
		tag, k := binary.Uvarint(b)
		b = b[k:]
		switch tag & 7 {
		case 2:
			l, k := binary.Uvarint(b)
			m[int(tag>>3)] = append(m[int(tag>>3)], b[k:k+int(l)])
			b = b[k+int(l):]
		case 1:
			m[int(tag>>3)] = append(m[int(tag>>3)], b[:8])
			b = b[8:]
		case 0:
			v, k := binary.Uvarint(b)
			m[int(tag>>3)] = append(m[int(tag>>3)], binary.LittleEndian.AppendUint64(nil, v))
			b = b[k:]
		default:
			t.Fatalf("wire type %d", tag&7)
		}
	}
	return m
}

// series is one decoded TimeSeries: its labels in order and its value.
type series struct {
	labels [][2]string
	value  float64
}

func decodeWrite(t *testing.T, body []byte) []series {
	t.Helper()
	var out []series
	for _, ts := range fields(t, unsnappy(t, body))[1] {
		f := fields(t, ts)
		var s series
		for _, l := range f[1] {
			lf := fields(t, l)
			s.labels = append(s.labels, [2]string{string(lf[1][0]), string(lf[2][0])})
		}
		smp := fields(t, f[2][0])
		s.value = math.Float64frombits(binary.LittleEndian.Uint64(smp[1][0]))
		out = append(out, s)
	}
	return out
}

func (s series) get(k string) string {
	for _, l := range s.labels {
		if l[0] == k {
			return l[1]
		}
	}
	return ""
}

func TestRemoteWriteEncodesSortedLabelsAndEndsTheLiveSeries(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Content-Encoding") != "snappy" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "bad headers", 400)
			return
		}
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
	}))
	defer rx.Close()
	st := New(Options{Run: "r"})
	defer st.Close()
	st.SetRelay(hostile, 0)
	l := outcome.New(results.OpEvent, 5)
	l.AddN(outcome.Accepted, "", 5)
	st.Tick()
	p := Push(st, rx.URL, time.Hour) // pushes only when told: no timing
	p.push(context.Background())
	st.Finish(&results.File{Runs: []results.Run{{Relay: results.Relay{Name: hostile}, Phases: []results.Phase{latencyPhase("publish", 1e6)}}}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 2 {
		t.Fatalf("%d pushes, want 2", len(bodies))
	}
	first, last := decodeWrite(t, bodies[0]), decodeWrite(t, bodies[1])
	for _, s := range append(first, last...) {
		if !sort.SliceIsSorted(s.labels, func(i, j int) bool { return s.labels[i][0] < s.labels[j][0] }) || s.labels[0][0] != "__name__" {
			t.Fatalf("labels not sorted, or __name__ not first: %v", s.labels)
		}
		if s.get("relay") != strings.ToValidUTF8(hostile, "\uFFFD") {
			t.Fatalf("relay label %q", s.get("relay"))
		}
	}
	var liveAccepted, stale, final float64 = -1, 0, -1
	for _, s := range first {
		if s.get("__name__") == "relaybench_operations_total" && s.get("phase") == "current" && s.get("outcome") == "accepted" {
			liveAccepted = s.value
		}
	}
	for _, s := range last {
		if s.get("phase") == "current" {
			if math.Float64bits(s.value) != 0x7ff0000000000002 {
				t.Fatalf("series of the phase in flight pushed again with %v, want the staleness marker", s.value)
			}
			stale++
		}
		if s.get("__name__") == "relaybench_operations_total" && s.get("phase") == "publish" && s.get("outcome") == "accepted" {
			final = s.value
		}
	}
	if liveAccepted != 5 || final != 1 || stale == 0 {
		t.Fatalf("live accepted %v (want 5), final %v (want 1), %v stale markers", liveAccepted, final, stale)
	}
}

// TestCloseCancelsThePushUnderWay: a periodic push stuck on a receiver
// that does not answer is cancelled by Close, whose last push (the final
// figures) then gets Close's time instead of waiting behind it.
func TestCloseCancelsThePushUnderWay(t *testing.T) {
	st := New(Options{Run: "r"})
	defer st.Close()
	first, release := make(chan struct{}), make(chan struct{})
	var n sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		n.Lock()
		calls++
		c := calls
		n.Unlock()
		if c == 1 {
			close(first)
			select { // never answers the first push
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	defer close(release)
	p := Push(st, srv.URL, time.Millisecond)
	p.client.Timeout = time.Hour
	select {
	case <-first:
	case <-time.After(time.Minute): // hang guard
		t.Fatal("no periodic push")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // hang guard
	defer cancel()
	if err := p.Close(ctx); err == nil || !strings.Contains(err.Error(), "1 of 2 pushes failed") {
		t.Fatalf("close: %v (want the stuck push failed and the last one made)", err)
	}
}
