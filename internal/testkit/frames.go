package testkit

import (
	"context"
	"encoding/json"

	"github.com/coder/websocket"
)

// Frame is one message a fake relay read: a JSON array of two or more
// elements.
type Frame struct {
	Label string            // the first element ("" unless a string)
	Msg   []json.RawMessage // the elements
	Raw   []byte            // the message as it came
}

// Frames reads the messages of ws, as a fake relay does, until a read
// fails or handle returns false: each Frame goes to handle, any other
// message to other, when set.
func Frames(ctx context.Context, ws *websocket.Conn, other func(raw []byte), handle func(f Frame) bool) {
	for {
		_, raw, err := ws.Read(ctx)
		if err != nil {
			return
		}
		f := Frame{Raw: raw}
		if json.Unmarshal(raw, &f.Msg) != nil || len(f.Msg) < 2 {
			if other != nil {
				other(raw)
			}
			continue
		}
		json.Unmarshal(f.Msg[0], &f.Label)
		if !handle(f) {
			return
		}
	}
}
