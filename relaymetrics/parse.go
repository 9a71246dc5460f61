// Package relaymetrics reads a relay's own Prometheus metrics around each
// timed window of a run (--relay-metrics), keeps what they counted over the
// window in the phase (results.Phase.RelayMetrics) and names, in the
// phase's notes, the relay's figures beside relaybench's and where the two
// cannot both be right.
package relaymetrics

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Bounds: what a relay's metrics page may make relaybench read and keep.
const (
	maxBody    = 4 << 20 // bytes read from one scrape
	maxSeries  = 20000   // samples read from one scrape
	maxKept    = 200     // series kept per phase
	maxLineLen = 64 << 10
	maxKeyLen  = 512 // bytes of a series' name and labels kept
	maxErrLen  = 300 // bytes of a failed reading's error kept
)

// Scrape is one reading of a relay's metrics: each series (its name and
// labels as the relay wrote them, labels sorted) and its value, and each
// metric family's type.
type Scrape struct {
	Values map[string]float64
	Types  map[string]string // family name → counter, gauge, histogram, summary, untyped
}

// Parse reads the Prometheus text exposition format from r: at most
// maxBody bytes and maxSeries samples (more is an error: the page is not
// read past them). Lines it cannot read are skipped and counted.
func Parse(r io.Reader) (Scrape, int, error) {
	s := Scrape{Values: map[string]float64{}, Types: map[string]string{}}
	sc := bufio.NewScanner(io.LimitReader(r, maxBody+1))
	sc.Buffer(make([]byte, 0, 4096), maxLineLen)
	bad, read := 0, 0
	for sc.Scan() {
		read += len(sc.Bytes()) + 1
		if read > maxBody {
			return s, bad, fmt.Errorf("metrics page larger than %d bytes", maxBody)
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			if f := strings.Fields(rest); len(f) == 2 {
				s.Types[f[0]] = f[1]
			}
			continue
		}
		if line[0] == '#' {
			continue
		}
		key, v, ok := parseSample(line)
		if !ok {
			bad++
			continue
		}
		if len(s.Values) >= maxSeries {
			return s, bad, fmt.Errorf("metrics page has more than %d series", maxSeries)
		}
		s.Values[key] = v
	}
	if err := sc.Err(); err != nil {
		return s, bad, err
	}
	return s, bad, nil
}

// parseSample reads `name{labels} value [timestamp]` into its series key
// (labels sorted, as written) and value.
func parseSample(line string) (string, float64, bool) {
	name, rest := line, ""
	var labels []string
	if i := strings.IndexByte(line, '{'); i >= 0 {
		name = line[:i]
		ls, tail, ok := parseLabels(line[i+1:])
		if !ok {
			return "", 0, false
		}
		labels, rest = ls, tail
	} else if i := strings.IndexAny(line, " \t"); i >= 0 {
		name, rest = line[:i], line[i:]
	} else {
		return "", 0, false
	}
	f := strings.Fields(rest)
	if name == "" || len(f) < 1 || len(f) > 2 {
		return "", 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return "", 0, false
	}
	sort.Strings(labels)
	if len(labels) == 0 {
		return name, v, true
	}
	return name + "{" + strings.Join(labels, ",") + "}", v, true
}

// parseLabels reads `k="v",…}` and returns each label as written and what
// follows the closing brace.
func parseLabels(s string) ([]string, string, bool) {
	var out []string
	for {
		s = strings.TrimLeft(s, " ,")
		if strings.HasPrefix(s, "}") {
			return out, s[1:], true
		}
		eq := strings.Index(s, `="`)
		if eq <= 0 {
			return nil, "", false
		}
		i := eq + 2
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' {
				i++
			}
		}
		if i >= len(s) {
			return nil, "", false
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
}

// family is the metric family a series belongs to: its name without the
// labels, and without _count, _sum or _bucket for a histogram or summary.
func (s Scrape) family(key string) (name, typ string) {
	base, _, _ := strings.Cut(key, "{")
	if t, ok := s.Types[base]; ok {
		return base, t
	}
	for _, suf := range []string{"_count", "_sum", "_bucket", "_total"} {
		if f, ok := strings.CutSuffix(base, suf); ok {
			if t, ok := s.Types[f]; ok {
				return f, t
			}
		}
	}
	return base, "untyped"
}
