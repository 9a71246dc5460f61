package corpus

import "github.com/relaybench/relaybench/nostr"

// appendWire appends the compact wire JSON of e (as nostr.Event.AppendJSON
// does) reusing the escaped tags and content of its serialization ser.
func appendWire(b []byte, e *nostr.Event, ser []byte, tagsAt, contentAt int) []byte {
	return e.AppendJSONEncoded(b, ser[tagsAt:contentAt-1], ser[contentAt:len(ser)-1])
}
