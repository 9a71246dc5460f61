package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/results"
)

// The fixtures below are what workloads write: counters consistent with each
// other, rates derived from counters and durations, and real HDR histograms
// recorded from a seeded log-normal distribution.

var t0 = time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)

// hist records n log-normal latencies around medNs (seeded, so reproducible).
func hist(seed uint64, n int, medNs float64, sigma float64) *results.Histogram {
	r := rand.New(rand.NewPCG(seed, 7))
	h := metrics.NewHistogram()
	for range n {
		h.Record(int64(medNs * math.Exp(sigma*r.NormFloat64())))
	}
	return h.Result()
}

func series(seed uint64, secs int, perSec float64, latNs float64) []results.Second {
	r := rand.New(rand.NewPCG(seed, 9))
	var s []results.Second
	for t := range secs {
		n := int64(perSec * (0.9 + 0.2*r.Float64()))
		s = append(s, results.Second{T: t,
			Counts:   map[string]int64{"sent": n, "accepted": n - int64(r.IntN(3))},
			Gauges:   map[string]int64{"in_flight": int64(r.IntN(64))},
			LatP50Ns: int64(latNs * (0.9 + 0.2*r.Float64())), LatP99Ns: int64(4 * latNs * (0.9 + 0.3*r.Float64())),
			LatMaxNs: int64(12 * latNs * (0.8 + r.Float64()))})
	}
	return s
}

func resources(seed uint64, secs int, cpu float64, rss int64) *results.Resources {
	r := rand.New(rand.NewPCG(seed, 11))
	res := &results.Resources{RelayCPUSecs: cpu * float64(secs), RelayPeakRSS: rss, ClientCPUSecs: 0.8 * float64(secs), ClientCPUUtil: 0.4}
	for i := range secs * 2 {
		res.Series = append(res.Series, results.ResourceSample{T: float64(i) / 2, RelayCPU: cpu * (0.8 + 0.4*r.Float64()),
			RelayRSS: rss/2 + int64(float64(rss/2)*float64(i)/float64(secs*2)), ClientCPU: 0.8 * (0.9 + 0.2*r.Float64())})
	}
	return res
}

// publishPhase: sent events, some refused, a duration; rates from counts.
func publishPhase(seed uint64, sent int64, evPerSec float64, latNs float64) results.Phase {
	refDup, refRate := int64(seed%3), int64(seed%5)
	acc := sent - refDup - refRate
	dur := int64(float64(sent) / evPerSec * 1e9)
	bytes := sent * 1303
	secs := int(dur/1e9) + 1
	return results.Phase{Name: "publish", Workload: "publish", Start: t0.Add(5 * time.Second), Duration: dur,
		Params: map[string]any{"connections": 10},
		Counts: map[string]int64{"sent": sent, "accepted": acc, "refused": refDup + refRate, "timed_out": 0, "failed": 0, "bytes_sent": bytes,
			"not_sent": 0, "bytes_accepted": acc * 1303, "bytes_received": sent * 110, "notices": 0},
		Refused: map[string]int64{"duplicate": refDup, "rate-limited": refRate},
		Rates:   map[string]float64{"events_per_sec": float64(acc) / (float64(dur) / 1e9), "sent_per_sec": float64(sent) / (float64(dur) / 1e9), "mb_per_sec": float64(bytes) / 1e6 / (float64(dur) / 1e9)},
		Latency: map[string]*results.Histogram{"ok": hist(seed, 5000, latNs, 0.5)},
		Series:  series(seed, secs, evPerSec, latNs),
		Resources: &results.Resources{RelayCPUSecs: 1.5, RelayPeakRSS: 84 << 20, RelayDataBytes: acc * 1650, ClientCPUSecs: 0.9, ClientCPUUtil: 0.35,
			Series: resources(seed, secs, 1.2, 84<<20).Series},
	}
}

var shapes = []string{"kind", "time-range", "tag-p", "tag-t", "author", "complex"}

func queryPhase(seed uint64, queries int64, qps float64, latNs float64, missing int64) results.Phase {
	dur := int64(float64(queries) / qps * 1e9)
	per := queries / int64(len(shapes))
	p := results.Phase{Name: "query", Workload: "query", Start: t0.Add(20 * time.Second), Duration: dur,
		Counts:  map[string]int64{"queries": queries, "events_returned": queries * 40, "failed": 0, "timed_out": 0},
		Rates:   map[string]float64{"queries_per_sec": float64(queries) / (float64(dur) / 1e9)},
		Latency: map[string]*results.Histogram{"eose": hist(seed+100, int(queries), latNs, 0.6)},
	}
	for i, s := range shapes {
		m := int64(0)
		if i == 0 {
			m = missing
		}
		ret := per*40 - m
		g := results.Group{Name: s,
			Counts:       map[string]int64{"queries": per, "events_returned": ret},
			Rates:        map[string]float64{"queries_per_sec": float64(per) / (float64(dur) / 1e9)},
			Latency:      map[string]*results.Histogram{"eose": hist(seed+uint64(200+i), int(per), latNs*(1+float64(i)/3), 0.5)},
			Verification: &results.Verification{Verified: true, Checked: per, Expected: per * 40, Returned: ret, Missing: m, Passed: m == 0},
		}
		p.Groups = append(p.Groups, g)
	}
	p.Verification = &results.Verification{Verified: true, Checked: queries, Expected: queries * 40, Returned: queries*40 - missing, Missing: missing, Passed: missing == 0}
	if missing > 0 {
		p.Verification.Notes = []string{fmt.Sprintf("%d events accepted by the relay were not returned by kind queries", missing)}
	}
	return p
}

func subscribePhase(seed uint64) results.Phase {
	return results.Phase{Name: "subscribe", Workload: "subscribe", Start: t0.Add(40 * time.Second), Duration: 10e9,
		Counts:        map[string]int64{"subscriptions": 100, "deliveries": 99800, "dropped": 200, "late": 3},
		Rates:         map[string]float64{"deliveries_per_sec": 9980},
		Latency:       map[string]*results.Histogram{"deliver": hist(seed+300, 5000, 800e3, 0.7)},
		ClientLimited: true,
		Verification:  &results.Verification{Verified: true, Checked: 100, Expected: 100000, Returned: 99800, Missing: 200, Passed: false},
		Notes:         []string{"client CPU at 97% of usable cores: deliveries may be under-counted"},
	}
}

func sweepPhases(seed uint64, evPerSec float64) []results.Phase {
	var ps []results.Phase
	for i, sz := range []int{256, 1024, 4096, 16384, 65536} {
		rate := evPerSec / (1 + float64(i)*0.4)
		n := int64(rate * 5)
		ps = append(ps, results.Phase{Name: fmt.Sprintf("sweep/%d", sz), Workload: "publish", Size: sz, Start: t0.Add(time.Duration(60+6*i) * time.Second), Duration: 5e9,
			Counts:  map[string]int64{"sent": n, "accepted": n, "bytes_sent": n * int64(sz+400)},
			Rates:   map[string]float64{"events_per_sec": float64(n) / 5, "mb_per_sec": float64(n*int64(sz+400)) / 1e6 / 5},
			Latency: map[string]*results.Histogram{"ok": hist(seed+uint64(400+i), 2000, 1e6*(1+float64(i)*0.5), 0.4)},
		})
	}
	return ps
}

func baseFile(cmd string) *results.File {
	return &results.File{Schema: results.SchemaVersion,
		Tool:    results.Tool{Name: "relaybench", Version: "v0.1.0", Commit: "e563498", GoVersion: "go1.26.8", Signer: "libsecp256k1"},
		Machine: results.Machine{Hostname: "bench1", OS: "linux", Arch: "amd64", Kernel: "6.8.0-71-generic", CPUModel: "AMD EPYC 7B13", Cores: 2, MemBytes: 8 << 30},
		Command: cmd, StartedAt: t0, FinishedAt: t0.Add(95 * time.Second),
	}
}

// corpusOf describes a corpus of n events of 1,303 wire bytes each.
func corpusOf(n int) results.Corpus {
	return results.Corpus{Seed: 42, Events: n, Authors: 100, AvgSize: 1024, Bytes: int64(n) * 1303, Key: "c0ffee", Cached: true}
}

// singleFile is one run against one relay with every kind of phase.
func singleFile() *results.File {
	f := baseFile("run")
	f.Args = []string{"run", "-relay", "ws://127.0.0.1:7447", "-events", "100000", "-queries", "600"}
	r := results.Run{Relay: results.Relay{Name: "khatru-badger", URL: "ws://127.0.0.1:7447", Managed: true, Software: "khatru", Version: "0.19.1", MaxLimit: 500},
		Corpus: corpusOf(100000), Params: map[string]any{"connections": 10, "queries": 600}}
	r.Phases = append(r.Phases, publishPhase(1, 100000, 7731, 1.1e6), queryPhase(1, 600, 28.02, 30e6, 0), subscribePhase(1))
	r.Phases = append(r.Phases, sweepPhases(1, 9000)...)
	r.Notes = []string{"relay data directory on tmpfs"}
	f.Runs = []results.Run{r}
	return f
}

// compareFile compares relays; each is repeated `repeats` times (0: once).
func compareFile(repeats int, scale float64) *results.File {
	f := baseFile("compare")
	f.Args = []string{"compare", "khatru-badger", "strfry", "-events", "50000"}
	relays := []struct {
		r          results.Relay
		ev, q, lat float64
		missing    int64
	}{
		{results.Relay{Name: "khatru-badger", URL: "ws://127.0.0.1:7447", Managed: true, Software: "khatru", Version: "0.19.1"}, 7475, 4.67, 1.2e6, 0},
		{results.Relay{Name: "strfry", URL: "ws://127.0.0.1:7777", Managed: true, Software: "strfry", Version: "1.0.4"}, 1836, 67.67, 4.5e6, 12},
	}
	n := max(repeats, 1)
	for i, rl := range relays {
		for k := range n {
			seed := uint64(10*i + k + 1)
			jit := 1 + 0.03*float64(k%3) - 0.02*float64(k%2)
			r := results.Run{Relay: rl.r, Corpus: corpusOf(50000), Params: map[string]any{"connections": 10}}
			if repeats > 0 {
				r.Repeat = k + 1
			}
			r.Phases = []results.Phase{publishPhase(seed, 50000, rl.ev*scale*jit, rl.lat/scale), queryPhase(seed, 120, rl.q*scale*jit, 200e6/rl.q, rl.missing)}
			f.Runs = append(f.Runs, r)
		}
	}
	return f
}
