package live

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"time"
)

// Pusher sends the State's figures to a Prometheus remote-write receiver
// (protocol 1.0: a snappy-compressed protobuf WriteRequest), for runs no
// Prometheus can scrape (a Kubernetes Job's segment): every interval while
// the run goes, and once more when it is closed, after Finish.
type Pusher struct {
	st     *State
	url    string
	client *http.Client
	ctx    context.Context // the periodic pushes', cancelled by Close
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once

	mu      sync.Mutex
	pushes  int
	failed  int
	lastErr error
	last    map[string]expoSample // the series of the last push
}

// staleNaN is Prometheus's staleness marker: a series pushed before and
// gone now (the phase in flight's, once it finished) is ended with it, as
// a scrape that no longer shows a series ends it.
var staleNaN = math.Float64frombits(0x7ff0000000000002)

// CheckRemoteWriteURL checks --prometheus-rw: an http or https URL.
func CheckRemoteWriteURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--prometheus-rw %q: want an http(s) URL, e.g. http://127.0.0.1:9090/api/v1/write", raw)
	}
	return nil
}

// Push starts pushing st to url every interval.
func Push(st *State, url string, interval time.Duration) *Pusher {
	p := &Pusher{st: st, url: url, client: &http.Client{Timeout: 10 * time.Second}, done: make(chan struct{})}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	go func() {
		defer close(p.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-p.ctx.Done():
				return
			case <-t.C:
				if p.ctx.Err() != nil { // a tick and Close both ready: select picks either
					return
				}
				p.push(p.ctx)
			}
		}
	}()
	return p
}

// Close stops the pushes (cancelling one under way: the last one
// supersedes it), makes the last one (within ctx) and says how many
// failed, if any did.
func (p *Pusher) Close(ctx context.Context) error {
	p.once.Do(func() {
		p.cancel()
		select {
		case <-p.done:
		case <-ctx.Done():
		}
		p.push(ctx)
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed > 0 {
		return fmt.Errorf("remote write to %s: %d of %d pushes failed, the last: %v", p.url, p.failed, p.pushes, p.lastErr)
	}
	return nil
}

// Pushes is how many pushes were made so far, and how many of them failed.
func (p *Pusher) Pushes() (n, failed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pushes, p.failed
}

func (p *Pusher) push(ctx context.Context) {
	e := p.st.collect()
	p.mu.Lock()
	cur := map[string]expoSample{}
	var all []expoSample
	for _, f := range e.fams {
		for _, s := range f.samples {
			cur[s.name+s.l.String()] = s
			all = append(all, s)
		}
	}
	for k, s := range p.last {
		if _, ok := cur[k]; !ok {
			s.v = staleNaN
			all = append(all, s)
		}
	}
	p.last = cur
	p.mu.Unlock()
	err := p.post(ctx, snappyLiteral(writeRequest(all, time.Now().UnixMilli())))
	p.mu.Lock()
	p.pushes++
	if err != nil {
		p.failed++
		p.lastErr = err
	}
	p.mu.Unlock()
}

func (p *Pusher) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, "POST", p.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	req.Header.Set("User-Agent", "relaybench")
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512)) // the receiver's reason, bounded
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %q", resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}

// writeRequest encodes samples as a remote-write WriteRequest, each at ts
// (ms): one TimeSeries per sample, its labels sorted by name with
// __name__ among them.
func writeRequest(samples []expoSample, ts int64) []byte {
	var out []byte
	for _, s := range samples {
		out = appendBytes(out, 1, timeSeries(s, ts))
	}
	return out
}

func timeSeries(s expoSample, ts int64) []byte {
	ls := append(labels{{"__name__", s.name}}, s.l...)
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].k < ls[j].k })
	var b []byte
	for _, l := range ls {
		var lb []byte
		lb = appendBytes(lb, 1, []byte(l.k))
		lb = appendBytes(lb, 2, []byte(sanitize(l.v)))
		b = appendBytes(b, 1, lb)
	}
	var smp []byte
	smp = append(smp, 1<<3|1) // value: double
	smp = binary.LittleEndian.AppendUint64(smp, math.Float64bits(s.v))
	smp = append(smp, 2<<3|0) // timestamp: varint
	smp = binary.AppendUvarint(smp, uint64(ts))
	return appendBytes(b, 2, smp)
}

// appendBytes appends field n as a length-delimited protobuf field.
func appendBytes(b []byte, n int, v []byte) []byte {
	b = append(b, byte(n<<3|2))
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// snappyLiteral is src in the snappy block format, as literals only: a
// valid stream every snappy decoder reads (remote write asks for snappy;
// the figures are small, compression would save little).
func snappyLiteral(src []byte) []byte {
	out := binary.AppendUvarint(nil, uint64(len(src)))
	for len(src) > 0 {
		n := min(len(src), 1<<16)
		out = append(out, 61<<2, byte(n-1), byte((n-1)>>8)) // literal, length-1 in 2 bytes
		out = append(out, src[:n]...)
		src = src[n:]
	}
	return out
}
