package testrelay

import (
	"encoding/json"
	"testing"

	"github.com/relaybench/relaybench/nostr"
)

// Every 2nd OK is followed by an OK for an id never sent.
func TestForeignOKEvery(t *testing.T) {
	r := New(Config{ForeignOKEvery: 2})
	defer r.Close()
	c := dial(t, r)
	evs := events(t, 4)
	sent := map[string]bool{}
	for _, ev := range evs {
		sent[ev.ID] = true
		c.send("EVENT", ev)
	}
	mine, foreign := 0, 0
	for mine+foreign < 6 {
		m := c.read()
		if str(m[0]) != "OK" {
			t.Fatalf("unexpected frame %s", join(m))
		}
		id := str(m[1])
		switch {
		case sent[id]:
			mine++
		case len(id) == 64:
			foreign++
		default:
			t.Fatalf("OK for a malformed id %q", id)
		}
	}
	if mine != 4 || foreign != 2 || r.Stats().ForeignOKs != 2 || r.Stats().OKs != 4 {
		t.Errorf("%d OKs for sent events, %d foreign; stats %+v", mine, foreign, r.Stats())
	}
}

// A valid event under a never-opened id follows the first message; a CLOSE
// is followed by an event under the id just closed.
func TestUnsolicitedEvents(t *testing.T) {
	r := New(Config{UnsolicitedEvents: true})
	defer r.Close()
	ev := events(t, 1)[0]
	r.Add(ev)
	c := dial(t, r)
	c.send("REQ", "q", map[string]any{"kinds": []int{1}})
	var subs []string
	for len(subs) < 3 { // the result, EOSE, the unsolicited event (any order after the result)
		m := c.read()
		switch str(m[0]) {
		case "EVENT":
			got, err := nostr.ParseEvent(m[2])
			if err != nil || !validSig(got) {
				t.Fatalf("invalid event %s: %v", m[2], err)
			}
			subs = append(subs, str(m[1]))
		case "EOSE":
			subs = append(subs, "EOSE")
		}
	}
	if subs[0] != "q" || !contains(subs, "EOSE") || !contains(subs, "unsolicited-1") {
		t.Fatalf("frames for %v, want q, EOSE and unsolicited-1", subs)
	}
	c.send("CLOSE", "q")
	if m := c.read(); str(m[0]) != "EVENT" || str(m[1]) != "q" {
		t.Fatalf("after CLOSE: %s, want an EVENT for q", join(m))
	}
	st := r.Stats()
	if st.UnsolicitedEvents != 1 || st.EventsAfterClose != 1 {
		t.Errorf("stats %+v", st)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A REQ gets its matching events again and again, past its limit and
// without EOSE, until CLOSE.
func TestEndlessAnswers(t *testing.T) {
	r := New(Config{EndlessAnswers: true})
	defer r.Close()
	evs := events(t, 3)
	r.Add(evs...)
	c := dial(t, r)
	c.send("REQ", "q", map[string]any{"kinds": []int{1}, "limit": 2})
	for i := 0; i < 50; i++ {
		m := c.read()
		if str(m[0]) != "EVENT" || str(m[1]) != "q" {
			t.Fatalf("frame %d: %s, want an EVENT for q (no EOSE)", i, join(m))
		}
		var e struct {
			Kind int `json:"kind"`
		}
		json.Unmarshal(m[2], &e)
		if e.Kind != 1 {
			t.Fatalf("event outside the filter: %s", m[2])
		}
	}
	c.send("CLOSE", "q")
	c.send("REQ", "other", map[string]any{"kinds": []int{1}, "limit": 1})
	// Events of q already queued may still come; once "other"'s come, at
	// most one more of q (its stream checks for the CLOSE before each send).
	lateQ := 0
	for sawOther := 0; sawOther < 5; {
		m := c.read()
		switch {
		case str(m[0]) == "EVENT" && str(m[1]) == "other":
			sawOther++
		case str(m[0]) == "EVENT" && str(m[1]) == "q":
			if sawOther > 0 {
				lateQ++
			}
		default:
			t.Fatalf("unexpected frame %s", join(m))
		}
	}
	if lateQ > 1 {
		t.Errorf("%d events of q after the CLOSE and the next REQ's events, want at most 1", lateQ)
	}
	if r.Stats().EndlessEvents < 55 {
		t.Errorf("EndlessEvents %d, want at least 55", r.Stats().EndlessEvents)
	}
}
