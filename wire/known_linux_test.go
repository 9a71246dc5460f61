package wire

import (
	"bytes"
	"fmt"
	"testing"
)

// An EVENT whose object Options.KnownEvent recognises reaches the
// subscription's KnownHandler with its tag and the object's bytes; one it
// does not recognise reaches OnEvent; a recognised object followed by a
// fourth element is still a malformed frame (what follows the object is
// checked); without a KnownHandler a recognised object goes to OnEvent. On a
// connection's own reader and on a shared reader alike.
func TestKnownEventHandler(t *testing.T) {
	_, ours := fakeEvent(1, "ours")
	_, other := fakeEvent(2, "other")
	known := func(obj []byte) (int, int32) {
		if bytes.HasPrefix(obj, ours) {
			return len(ours), 42
		}
		return 0, 0
	}
	r := streamOnREQ(t, func(tc *tconn, sub string) {
		for _, m := range []string{
			`["EVENT",` + sub + `,` + string(ours) + `]`,
			`["EVENT",` + sub + `,` + string(other) + `]`,
			`["EVENT",` + sub + `,` + string(ours) + `,1]`,
			`["EOSE",` + sub + `]`,
		} {
			if tc.send(m) != nil {
				return
			}
		}
	})
	for _, shared := range []bool{false, true} {
		for _, withKnown := range []bool{true, false} {
			t.Run(fmt.Sprintf("shared=%v,Known=%v", shared, withKnown), func(t *testing.T) {
				c := dialT(t, r.url, Options{SharedReader: shared, KnownEvent: known})
				defer c.Close()
				var got []string // on the reader, read after EOSE
				eosed := make(chan struct{})
				h := SubHandler{
					OnEvent: func(raw []byte, _ int64) { got = append(got, "event "+string(raw)) },
					OnEOSE:  func(int64) { close(eosed) },
				}
				if withKnown {
					h.Known = knownFuncs{on: func(raw []byte, tag int, _ int64) { got = append(got, fmt.Sprintf("known %d %s", tag, raw)) }}
				}
				if _, err := c.Req("s", nil, h); err != nil {
					t.Fatal(err)
				}
				within(t, eosed, "EOSE")
				first := "known 42 " + string(ours)
				if !withKnown {
					first = "event " + string(ours)
				}
				want := []string{first, "event " + string(other)}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("handlers got\n%q\nwant\n%q", got, want)
				}
				if s := c.Stats(); s.Malformed != 1 || s.Events != 2 {
					t.Errorf("malformed %d events %d, want 1 and 2", s.Malformed, s.Events)
				}
			})
		}
	}
}

// knownFuncs is a KnownHandler made of funcs (nil: nothing, 0).
type knownFuncs struct {
	on   func(raw []byte, tag int, recv int64)
	warm func() int
}

func (k knownFuncs) OnKnownEvent(raw []byte, tag int, recv int64) {
	if k.on != nil {
		k.on(raw, tag, recv)
	}
}

func (k knownFuncs) Warm() int {
	if k.warm == nil {
		return 0
	}
	return k.warm()
}
