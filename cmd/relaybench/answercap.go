package main

import "github.com/relaybench/relaybench/wire"

// answerCapFlags bound what relaybench keeps of one answer to a REQ, on
// every connection of a command (wire.Options.MaxAnswerEvents): a relay
// that ignores limit and streams events without end cannot swamp the
// client. They travel with the NIP-42 flags, which every command that dials
// embeds (auth.go).
type answerCapFlags struct {
	MaxAnswerEvents int   `name:"max-answer-events" default:"0" placeholder:"N" help:"Most events kept of one REQ's answer before EOSE; past it the answer is cut, the REQ closed (CLOSE) and booked refused 'answer over cap': neither credited nor verified (NIP-01: limit is a SHOULD). 0: 2 × the filter's limit + 100, with the limit taken as at least 5,000 (a relay that ignores limit and answers up to its own cap is verified and named, not cut; a filter without limit: its ids, else 10,000)."`
	MaxAnswerBytes  int64 `name:"max-answer-bytes" default:"0" placeholder:"BYTES" help:"Most bytes of event JSON kept of one REQ's answer before EOSE (0: (2 × the filter's limit + 100) × 64 KiB, at least 64 MiB)."`
}

// maxAnswerEvents bounds --max-answer-events: a cap above it is no cap.
const maxAnswerEvents = 100_000_000

func (f answerCapFlags) validate() error {
	var r ranges
	r.Min("max-answer-events", f.MaxAnswerEvents, 0)
	if f.MaxAnswerEvents > maxAnswerEvents {
		r.Bad("max-answer-events", f.MaxAnswerEvents, "must be at most %d", maxAnswerEvents)
	}
	r.Min64("max-answer-bytes", f.MaxAnswerBytes, 0)
	return r.Err()
}

// activate makes the cap the process default of every connection.
func (f answerCapFlags) activate() {
	wire.SetDefaultAnswerCap(f.MaxAnswerEvents, f.MaxAnswerBytes)
}
