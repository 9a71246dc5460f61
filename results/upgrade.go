package results

import (
	"strconv"
	"strings"
)

// upgrade brings a file written by an older build of the same schema to
// this build's shape, so every reader sees one shape: data that older files
// kept under another name or in Params moves to its field.
func (f *File) upgrade() {
	for i := range f.Runs {
		for j := range f.Runs[i].Phases {
			f.Runs[i].Phases[j].upgrade()
		}
	}
}

func (p *Phase) upgrade() {
	// Count phases named their comparison REQs' first event req_first_event.
	if h, ok := p.Latency[LatencyReqFirstEvent]; ok {
		if _, has := p.Latency[LatencyFirstEvent]; !has {
			p.Latency[LatencyFirstEvent] = h
		}
		delete(p.Latency, LatencyReqFirstEvent)
	}
	if why, ok := p.Params[ParamSkipped].(string); ok && p.Skipped == "" {
		p.Skipped = why
	}
	if p.Size == 0 && IsSweepPhase(p.Name) {
		p.Size, _ = SweepSize(p.Name)
	}
}

// ParamSkipped is the key of Params under which files written before
// Phase.Skipped said why a phase was skipped.
const ParamSkipped = "skipped"

// SweepPrefix begins the name of a payload sweep's phase: "sweep/<bytes>".
const SweepPrefix = "sweep/"

// SweepName is the name of a payload sweep's phase at size content bytes.
func SweepName(size int) string { return SweepPrefix + strconv.Itoa(size) }

// IsSweepPhase reports whether name is a sweep point's phase name,
// "sweep/<bytes>" (or "sweep:<bytes>").
func IsSweepPhase(name string) bool {
	return strings.HasPrefix(name, SweepPrefix) || strings.HasPrefix(name, "sweep:")
}

// SweepSize is the payload size of a sweep phase or group name: "sweep/1024"
// → 1024 (also "sweep:1024", and a bare "1024" or "1024B" for the groups of
// a phase named "sweep"); ok is false for any other name.
func SweepSize(name string) (int, bool) {
	for _, pre := range []string{SweepPrefix, "sweep:"} {
		if strings.HasPrefix(name, pre) {
			name = name[len(pre):]
			break
		}
	}
	name = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(name), "B"))
	v, err := strconv.Atoi(name)
	if err != nil || v <= 0 {
		return 0, false
	}
	return v, true
}
