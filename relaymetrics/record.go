package relaymetrics

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/relaybench/relaybench/workload"
)

const (
	scrapeTimeout = 2 * time.Second // one reading, at a window's edge
	maxWindows    = 4096
	// maxFailuresInARow is how many readings may fail one after another
	// before the endpoint is not read again: each may cost scrapeTimeout
	// before or after a window, and a run may have thousands.
	maxFailuresInARow = 4
)

// Resolve reads --relay-metrics for the relay at relayURL: an http(s) URL
// as it is, or a path ("/metrics") on the relay's own host and port.
func Resolve(flag, relayURL string) (string, error) {
	if strings.HasPrefix(flag, "/") {
		u, err := url.Parse(relayURL)
		if err != nil || u.Host == "" {
			return "", fmt.Errorf("--relay-metrics %s: the relay's address %q has no host", flag, relayURL)
		}
		scheme := "http"
		if u.Scheme == "wss" {
			scheme = "https"
		}
		return scheme + "://" + u.Host + flag, nil
	}
	return flag, Check(flag)
}

// Off is the --relay-metrics value that reads no metrics, not even those
// of a catalog relay with metrics_path.
const Off = "off"

// Check checks --relay-metrics: an http(s) URL, a path starting with /,
// or Off.
func Check(flag string) error {
	if strings.HasPrefix(flag, "/") || flag == Off {
		return nil
	}
	u, err := url.Parse(flag)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--relay-metrics %q: want the relay's Prometheus metrics URL (http://HOST:PORT/metrics), a path on the relay's own port (/metrics) or off", flag)
	}
	return nil
}

// window is one timed window with the relay's metrics read at its edges.
type window struct {
	start, end int64              // mono
	delta      map[string]float64 // deltas: what the window's readings say
	reset      string             // resetNote, "" when no counter went down
	err        string
}

// Recorder reads the relay's metrics at the edges of every timed window
// (workload.WatchWindows), until Stop.
type Recorder struct {
	ctx    context.Context // the run's: once done, a reading ends at once
	url    string
	client *http.Client
	stop   func()

	mu      sync.Mutex
	windows []window
	scrapes int
	failed  int
	inARow  int // failed readings since the last good one
	lastErr string
}

// Start records the metrics at url around every window from now on,
// until Stop or ctx's end (an interrupted run: no reading delays it).
func Start(ctx context.Context, url string) *Recorder {
	r := &Recorder{ctx: ctx, url: url, client: &http.Client{Timeout: scrapeTimeout, CheckRedirect: sameHost}}
	r.stop = workload.WatchWindows(r.opened)
	return r
}

// Stop ends the recording.
func (r *Recorder) Stop() { r.stop() }

// opened reads the metrics before a window; the function it returns reads
// them after it and keeps what the two say of the window (deltas: at most
// maxKept series, not the readings, which may be 4 MB each).
func (r *Recorder) opened() func(start, end int64) {
	before, errBefore := r.scrape()
	return func(start, end int64) {
		after, errAfter := r.scrape()
		w := window{start: start, end: end}
		if errBefore != nil {
			w.err = clip(errBefore.Error())
		} else if errAfter != nil {
			w.err = clip(errAfter.Error())
		} else {
			var resets []string
			w.delta, resets = deltas(before, after)
			if len(resets) > 0 {
				w.reset = resetNote(resets)
			}
		}
		r.mu.Lock()
		if len(r.windows) < maxWindows {
			r.windows = append(r.windows, w)
		}
		r.mu.Unlock()
	}
}

// errGaveUp is a reading not attempted (maxFailuresInARow before it).
var errGaveUp = fmt.Errorf("not read: %d readings in a row failed", maxFailuresInARow)

// scrape reads the metrics once, counting failures; after
// maxFailuresInARow in a row it no longer tries.
func (r *Recorder) scrape() (Scrape, error) {
	r.mu.Lock()
	gaveUp := r.inARow >= maxFailuresInARow
	r.mu.Unlock()
	if gaveUp {
		return Scrape{}, errGaveUp
	}
	s, err := r.read()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scrapes++
	if err == nil {
		r.inARow = 0
		return s, nil
	}
	r.failed++
	r.inARow++
	r.lastErr = clip(err.Error())
	return s, err
}

func (r *Recorder) read() (Scrape, error) {
	parent := r.ctx
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithTimeout(parent, scrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", r.url, nil)
	if err != nil {
		return Scrape{}, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := r.client.Do(req)
	if err != nil {
		return Scrape{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Scrape{}, fmt.Errorf("%s: %s", r.url, resp.Status)
	}
	s, _, err := Parse(resp.Body)
	return s, err
}

// clip bounds an error that may quote the relay (its status line) to
// maxErrLen bytes of valid UTF-8.
func clip(s string) string {
	if len(s) > maxErrLen {
		s = s[:maxErrLen] + "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// sameHost follows a redirect only on the host first asked (and at most
// 10): the endpoint may be the relay's, which must not send relaybench to
// another host.
func sameHost(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return fmt.Errorf("stopped after %d redirects", len(via))
	}
	if req.URL.Hostname() != via[0].URL.Hostname() {
		return fmt.Errorf("redirected to another host (%s): not followed", req.URL.Host)
	}
	return nil
}
