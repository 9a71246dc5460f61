package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/relaybench/relaybench/internal/safe"
	"github.com/relaybench/relaybench/internal/shellword"
	"github.com/relaybench/relaybench/results"
)

// mergedLines are the header lines of a file relaybench merge made (f):
// how many segments, which ran the Command line (segment 0's) with which
// --segment, on which machines, and whether their answers were checked
// across segments.
func mergedLines(f *results.File) [][2]string {
	m := f.Merged
	by := "relaybench merge"
	if len(m.Command) > 0 {
		by = "relaybench " + shellword.Join(m.Command)
	}
	head := fmt.Sprintf("from %d segments (%s)", m.Segments, safe.Line(by))
	if others := otherSegments(f.Args, m.Segments); others != "" {
		head += "; the Command line is segment 0's; " + others
	}
	if m.CrossChecked {
		head += "; query answers checked against all segments' events"
	} else {
		head += "; query answers NOT checked across segments (see the verification notes)"
	}
	if m.StartSpreadNs > 0 {
		head += "; start spread " + fmtDur(float64(m.StartSpreadNs))
	}
	ls := [][2]string{{"Merged", head}}
	for _, s := range m.Sources {
		line := fmt.Sprintf("%d: %s, %s", s.Segment, safe.Line(s.File), machineLine(&s.Machine))
		if s.Verdict != nil {
			line += ", its own verdict " + s.Verdict.Outcome
		}
		ls = append(ls, [2]string{"Segment", line})
	}
	for _, w := range m.Warnings {
		ls = append(ls, [2]string{"Warning", w})
	}
	return ls
}

// otherSegments says which --segment the segments other than 0 ran the
// merged file's command line (args, segment 0's) with: "the other segment
// ran it with --segment 1/2"; "" for a file whose --segment is not one
// segment's (before merges kept segment 0's, "I/2 (I = 0, 1)").
func otherSegments(args []string, n int) string {
	v, ok := "", false
	for i, a := range args {
		if a == "--segment" && i+1 < len(args) {
			v, ok = args[i+1], true
		} else if after, found := strings.CutPrefix(a, "--segment="); found {
			v, ok = after, true
		}
	}
	if !ok || strings.HasPrefix(v, "I") || n < 2 {
		return ""
	}
	if n == 2 {
		return "the other segment ran it with --segment 1/2"
	}
	if n > 5 {
		return fmt.Sprintf("the other segments ran it with --segment 1/%d to %d/%d", n, n-1, n)
	}
	is := make([]string, 0, n-1)
	for i := 1; i < n; i++ {
		is = append(is, fmt.Sprintf("%d/%d", i, n))
	}
	return "the other segments ran it with --segment " + strings.Join(is, ", ")
}

// writeSegmentResources lists a merged phase's resources per segment (per
// machine): they are never summed into one figure, except the client CPU.
func writeSegmentResources(w io.Writer, p *results.Phase) {
	if len(p.PerSegment) < 2 {
		return
	}
	for _, s := range p.PerSegment {
		var parts []string
		parts = append(parts, "window "+fmtDur(float64(s.Duration)))
		if r := s.Resources; r != nil {
			c := "client CPU " + fmtFloat(r.ClientCPUSecs, 2) + " s"
			if r.ClientCPUUtil > 0 {
				c += " (" + fmtPct(r.ClientCPUUtil) + " of usable cores)"
			}
			parts = append(parts, c)
			if r.RelayCPUSecs > 0 {
				parts = append(parts, "relay CPU "+fmtFloat(r.RelayCPUSecs, 2)+" s")
			}
			if r.RelayPeakRSS > 0 {
				parts = append(parts, "relay peak RSS "+fmtBytes(float64(r.RelayPeakRSS)))
			}
		}
		if s.ClientLimited {
			parts = append(parts, "client-limited")
		}
		host := ""
		if s.Host != "" {
			host = " (" + safe.Line(s.Host) + ")"
		}
		kv(w, fmt.Sprintf("  Segment %d%s", s.Segment, host), strings.Join(parts, ", "))
	}
}

// segmentResourceTable lists a merged file's resources per segment and
// machine (nil for other files).
func segmentResourceTable(files []*results.File) *table {
	t := &table{title: "Resources per segment", head: []string{"Relay", "Phase", "Segment", "Host", "Window", "Relay CPU", "Peak RSS", "Client CPU", "Client CPU use", "Status"},
		left: map[int]bool{1: true, 3: true, 9: true}}
	for _, f := range files {
		if f.Merged == nil {
			continue
		}
		for ri := range f.Runs {
			r := &f.Runs[ri]
			for pi := range r.Phases {
				p := &r.Phases[pi]
				for _, s := range p.PerSegment {
					relayCPU, rss, cpu, use := "–", "–", "–", "–"
					if rs := s.Resources; rs != nil {
						if rs.RelayCPUSecs > 0 {
							relayCPU = fmtFloat(rs.RelayCPUSecs, 2) + " s"
						}
						if rs.RelayPeakRSS > 0 {
							rss = fmtBytes(float64(rs.RelayPeakRSS))
						}
						cpu = fmtFloat(rs.ClientCPUSecs, 2) + " s"
						if rs.ClientCPUUtil > 0 {
							use = fmtPct(rs.ClientCPUUtil)
						}
					}
					status := "ok"
					if s.ClientLimited {
						status = "client-limited"
					}
					t.add(relayKey(&r.Relay), p.Name, fmt.Sprint(s.Segment), safe.Line(s.Host),
						fmtDur(float64(s.Duration)), relayCPU, rss, cpu, use, status)
				}
			}
		}
	}
	if len(t.rows) == 0 {
		return nil
	}
	return t
}
