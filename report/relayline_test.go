package report

import (
	"testing"

	"github.com/relaybench/relaybench/results"
)

// A relay relaybench started says what the catalog pinned first and the
// relay's own NIP-11 claim after: relayer's NIP-11 version is "~", which
// read as its version ("https://github.com/fiatjaf/relayer ~").
func TestRelayLineGivesTheBuildFirst(t *testing.T) {
	for _, c := range []struct {
		r    results.Relay
		want string
	}{
		{results.Relay{Name: "relayer-postgres", URL: "ws://127.0.0.1:1", Managed: true, Build: "relayer v2.2.4, eventstore v0.16.0", Software: "https://github.com/fiatjaf/relayer", Version: "~"},
			"relayer-postgres ws://127.0.0.1:1 (relayer v2.2.4, eventstore v0.16.0, started by relaybench; its NIP-11 says: https://github.com/fiatjaf/relayer ~)"},
		{results.Relay{Name: "sink", URL: "ws://127.0.0.1:1", Managed: true, Build: "relaybench's sink"},
			"sink ws://127.0.0.1:1 (relaybench's sink, started by relaybench; its NIP-11 says: none)"},
		{results.Relay{URL: "ws://127.0.0.1:7777", Software: "strfry", Version: "1.0"}, "ws://127.0.0.1:7777 (strfry 1.0)"},
		{results.Relay{Name: "x", URL: "ws://127.0.0.1:1", Managed: true, Software: "khatru"}, "x ws://127.0.0.1:1 (khatru, started by relaybench)"},
	} {
		if got := relayLine(&c.r); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
