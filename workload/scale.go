package workload

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/sysinfo"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/wire"
)

// Connection scale: many subscriber connections from one machine.
//
// Each TCP connection from one local address to the relay's address and
// port needs its own ephemeral port; past about 20,000 connections from one
// address the connections are spread over several loopback source addresses
// (127.0.0.1, 127.0.0.2, …: all of 127/8 is loopback on Linux), or over the
// addresses given with SourceAddrs.

// perSourceAddr is how many connections one local address takes before the
// next one is used: 20,000, or fewer when the ephemeral port range is small.
func perSourceAddr() int {
	n := 20000
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		f := strings.Fields(string(b))
		if len(f) == 2 {
			lo, err1 := strconv.Atoi(f[0])
			hi, err2 := strconv.Atoi(f[1])
			if err1 == nil && err2 == nil && hi > lo {
				n = min(n, max(1000, (hi-lo+1)*3/4))
			}
		}
	}
	return n
}

// ParseSourceAddrs reads --source-addrs: a range "127.0.0.2-127.0.0.9"
// (last byte varies), a comma-separated list, or both.
func ParseSourceAddrs(s string) ([]net.IP, error) {
	var out []net.IP
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a := net.ParseIP(strings.TrimSpace(lo)).To4()
		if a == nil {
			return nil, fmt.Errorf("source address %q: not an IPv4 address", lo)
		}
		if !isRange {
			out = append(out, a)
			continue
		}
		b := net.ParseIP(strings.TrimSpace(hi)).To4()
		if b == nil || !a[:3].Equal(b[:3]) || b[3] < a[3] {
			return nil, fmt.Errorf("source address range %q: want A.B.C.x-A.B.C.y with x ≤ y", part)
		}
		for x := int(a[3]); x <= int(b[3]); x++ {
			out = append(out, net.IPv4(a[0], a[1], a[2], byte(x)).To4())
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no source address given")
	}
	return out, nil
}

// sourceAddrs returns the local addresses n connections to relayURL are
// spread over: the forced ones, else, for a loopback relay needing more
// than one address's ports, 127.0.0.1…127.0.0.K; nil: the system's choice.
func sourceAddrs(relayURL string, n int, forced []net.IP) []net.IP {
	if len(forced) > 0 {
		return forced
	}
	per := perSourceAddr()
	if n <= per {
		return nil
	}
	u, err := url.Parse(relayURL)
	if err != nil {
		return nil
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback() || ip.To4() == nil) {
		return nil
	}
	k := min((n+per-1)/per, 250)
	out := make([]net.IP, k)
	for i := range out {
		out[i] = net.IPv4(127, 0, 0, byte(1+i)).To4()
	}
	return out
}

// dialMany dials n connections, connection i from addrs[i mod len(addrs)]
// (any address when addrs is empty), at most 64 handshakes at a time so
// that the relay's accept queue is not flooded. On any failure it closes
// the ones that succeeded and returns the first error.
func dialMany(ctx context.Context, relayURL string, n int, o wire.Options, addrs []net.IP) ([]*wire.Conn, error) {
	conns := make([]*wire.Conn, n)
	var next atomic.Int64
	var failed atomic.Bool
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	for range min(n, 64) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				oi := o
				if len(addrs) > 0 {
					oi.LocalAddr = addrs[i%len(addrs)]
				}
				c, err := wire.Dial(ctx, relayURL, oi)
				if err != nil {
					if oi.LocalAddr != nil {
						err = fmt.Errorf("connection %d of %d, from %v: %w", i+1, n, oi.LocalAddr, err)
					} else if n > 1 {
						err = fmt.Errorf("connection %d of %d: %w", i+1, n, err)
					}
					errOnce.Do(func() { firstErr = err })
					failed.Store(true)
					return
				}
				conns[i] = c
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		closeAll(conns)
		return nil, firstErr
	}
	return conns, nil
}

// settledRSS collects garbage and returns the resident memory, so that two
// readings differ by what is live.
func settledRSS() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	return sysinfo.RSS()
}

// backlog samples how far behind the client's reads are: the bytes the
// relay sent to the subscribers that the client had not handled yet
// (kernel receive queue plus the reader's unparsed buffer).
type backlog struct {
	conns []*wire.Conn
	stop  func() // ends the sampling
	next  int    // the next connection to sample

	mu       sync.Mutex
	samples  int64 // connections sampled
	behind   int64 // of them, with ≥ 1 unparsed message's worth (≥ 4 KiB) waiting
	maxConn  int   // largest backlog of one connection seen
	maxTotal int64 // largest sum over one sweep
}

const backlogBehind = 4 << 10

// startBacklog samples up to 128 connections every 100 ms (rotating
// through all of them) until stop.
func startBacklog(conns []*wire.Conn) *backlog {
	b := &backlog{conns: conns}
	b.stop = every(100*time.Millisecond, b.sample)
	return b
}

// sample reads the backlog of the next (up to) 128 connections.
func (b *backlog) sample() {
	conns := b.conns
	var total int64
	n := min(128, len(conns))
	for k := 0; k < n; k++ {
		c := conns[b.next%len(conns)]
		b.next++
		u := c.Unread()
		if u < 0 {
			continue
		}
		b.mu.Lock()
		b.samples++
		if u >= backlogBehind {
			b.behind++
		}
		b.maxConn = max(b.maxConn, u)
		b.mu.Unlock()
		total += int64(u)
	}
	b.mu.Lock()
	b.maxTotal = max(b.maxTotal, total*int64(len(conns))/int64(max(1, n)))
	b.mu.Unlock()
}

// unreadNow sums the bytes not yet handled over every connection, and how
// many connections had any.
func unreadNow(conns []*wire.Conn) (total int64, behind int) {
	for _, c := range conns {
		if u := c.Unread(); u > 0 {
			total += int64(u)
			behind++
		}
	}
	return total, behind
}

// missingEvidence is what the client knows about deliveries that never
// came: enough to say whether the relay or the client lost them.
type missingEvidence struct {
	missing      int64   // owed deliveries that timed out
	duplicated   int64   // extra copies received
	cores        float64 // client cores available
	busy         float64 // client cores used over the timed window
	unreadEnd    int64   // bytes not yet handled by the client when the grace ended
	unreadConns  int     // connections with such bytes
	full, some   int     // subscribers owed deliveries: got all / got some but not all
	none         int     // … got none of them
	owedSubs     int     // subscribers owed at least one delivery
	lastDelivery int64   // mono time of the last credited delivery
	lastOK       int64   // mono time of the last OK
	graceEnd     int64   // mono time the wait for deliveries ended
	bl           *backlog
	graceFlag    string // the command and flag of the wait ("the subscribe command's --grace")
}

// conclusion is the one-line verdict on missing deliveries, and the
// evidence behind it.
func (m missingEvidence) conclusion() string {
	idle := 1 - m.busy/max(m.cores, 1)
	var ev []string
	ev = append(ev, fmt.Sprintf("client CPU %.2f of %.0f cores (idle %.0f%% of the time)", m.busy, m.cores, 100*max(0, idle)))
	if la := sysinfo.LoadClause(); la != "" {
		ev = append(ev, la)
	}
	ev = append(ev, fmt.Sprintf("bytes the relay sent that the client had not handled when the grace ended: %s on %s", numfmt.Bytes(float64(m.unreadEnd)), numfmt.Count(m.unreadConns, "connection")))
	if m.bl != nil {
		m.bl.mu.Lock()
		if m.bl.samples > 0 {
			ev = append(ev, fmt.Sprintf("client read backlog sampled %d times during the run: largest %s on one connection, ≥ 4 KiB waiting in %.1f%% of samples",
				m.bl.samples, numfmt.Bytes(float64(m.bl.maxConn)), 100*float64(m.bl.behind)/float64(m.bl.samples)))
		}
		m.bl.mu.Unlock()
	}
	ev = append(ev, fmt.Sprintf("of %s owed deliveries, %d got all, %d some, %d none", numfmt.Count(m.owedSubs, "subscriber"), m.full, m.some, m.none))
	if m.lastDelivery > 0 && m.graceEnd > m.lastDelivery {
		ev = append(ev, fmt.Sprintf("the last delivery came %v after the last OK and %v before the wait ended (deliveries over time: the phase's series)",
			numfmt.Dur(time.Duration(max(0, m.lastDelivery-m.lastOK))), numfmt.Dur(time.Duration(m.graceEnd-m.lastDelivery))))
	}
	if m.duplicated > 0 {
		ev = append(ev, fmt.Sprintf("%d duplicate copies were received", m.duplicated))
	}
	behindPct := 0.0
	if m.bl != nil {
		m.bl.mu.Lock()
		if m.bl.samples > 0 {
			behindPct = 100 * float64(m.bl.behind) / float64(m.bl.samples)
		}
		m.bl.mu.Unlock()
	}
	var verdict string
	stillArriving := m.lastDelivery > 0 && m.graceEnd > 0 && m.graceEnd-m.lastDelivery < int64(200*time.Millisecond)
	switch {
	case stillArriving && m.unreadEnd < m.missing*64: // far fewer unread bytes than the missing deliveries need
		verdict = fmt.Sprintf("late, not necessarily lost: deliveries were still arriving when relaybench stopped waiting (the last %v before), while the client had only %s unread: the relay was still sending them (a longer wait, %s, tells late from lost)",
			numfmt.Dur(time.Duration(m.graceEnd-m.lastDelivery)), numfmt.Bytes(float64(m.unreadEnd)), m.graceFlag)
	case m.unreadEnd > 0:
		verdict = "the client could not keep up: its sockets still held bytes it had not read when it stopped waiting, and the deliveries may be among them (those on such connections are timed out, not missing)"
	case m.busy >= 0.9*m.cores:
		verdict = "the client could not keep up: it kept all its cores busy, so the relay may have dropped deliveries to readers that fell behind (slow-consumer policy)"
	case behindPct >= 20:
		verdict = fmt.Sprintf("the client could not keep up: its sockets held unread deliveries in %.0f%% of the samples, so the relay may have dropped deliveries to readers that fell behind (slow-consumer policy)", behindPct)
	default:
		verdict = fmt.Sprintf("the relay dropped them: the client was idle %.0f%% of the time and read every byte the relay sent", 100*max(0, idle))
	}
	return fmt.Sprintf("%s timed out: %s. Evidence: %s", numfmt.Count(m.missing, "owed delivery"), verdict, strings.Join(ev, "; "))
}

// connScale records in ph what holding the subscriptions cost the client:
// resident memory per open idle subscription (measured between before the
// dial and after every EOSE), when it is measurable (results.IdleRSSFloor),
// and the source addresses used. more is the command and flag that asks
// for more subscriptions ("the subscribe command's --subscribers": run has no
// such flag), for the note of a figure too small to give. A reading under
// the floor is noise, whatever it was (grown a little, not at all, or
// shrunk): one note says so in the same words, without its figure (no
// report shows it as one: results.BelowNoise); a reading that grew is kept
// in counts.client_rss_idle_bytes as read, never a negative size.
func connScale(ph *results.Phase, subs int, rssBefore, rssIdle int64, addrs []net.IP, more string) {
	if rssBefore > 0 && rssIdle > 0 && subs > 0 {
		idle := rssIdle - rssBefore
		per := float64(idle) / float64(subs)
		if idle > 0 {
			ph.Counts[results.CountClientRSSIdle] = idle
		}
		if idle >= results.IdleRSSFloor {
			ph.Counts[results.CountClientBytesPerSub] = int64(per + 0.5) // a count: rates are per second
			ph.Notes = append(ph.Notes, fmt.Sprintf("client memory for %s (connection, reader, subscription state; measured before publishing): %s resident, %s each: about %s connections per GiB",
				numfmt.Count(subs, "idle subscription"), numfmt.Bytes(float64(idle)), numfmt.Bytes(per), numfmt.Group(sig3(float64(1<<30)/per))))
		} else {
			ph.Notes = append(ph.Notes, fmt.Sprintf("client memory per subscription not measurable: %s held less than %d MiB, the least that stands out from the noise of the process's resident memory (more subscriptions: %s)",
				numfmt.Count(subs, "idle subscription"), results.IdleRSSFloor>>20, more))
		}
	}
	if len(addrs) > 0 {
		var s []string
		for _, a := range addrs {
			s = append(s, a.String())
		}
		ph.Params["source_addrs"] = strings.Join(s, ",")
		ph.Notes = append(ph.Notes, fmt.Sprintf("connections spread over %d source addresses (%s … %s)", len(addrs), s[0], s[len(s)-1]))
	}
}

// sig3 is v rounded to three significant digits, as a whole number (a
// count derived from a per-item figure of three: 55,637 → 55,600).
func sig3(v float64) int64 {
	if v < 1000 {
		return int64(math.Round(v))
	}
	e := math.Pow(10, math.Floor(math.Log10(v))-2)
	return int64(math.Round(v/e) * e)
}

// readStats records how the subscribers' messages were read: socket reads
// and messages (several messages per read when the client was behind or
// the relay batched them).
func readStats(ph *results.Phase, conns []*wire.Conn) {
	var reads, frames int64
	for _, c := range conns {
		reads += c.Reads()
		frames += c.Stats().FramesIn
	}
	if reads > 0 {
		ph.Counts["subscriber_reads"] = reads
		ph.Counts["subscriber_frames"] = frames
	}
}
