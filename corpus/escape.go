package corpus

import (
	"strconv"

	"github.com/relaybench/relaybench/nostr"
)

// appendSerialized appends the NIP-01 serialization of e (as
// nostr.Event.AppendSerialized does) and returns where the tags array and
// the content string start in the appended bytes.
func appendSerialized(b []byte, e *nostr.Event) (out []byte, tagsAt, contentAt int) {
	start := len(b)
	b = append(b, `[0,"`...)
	b = append(b, e.PubKey...)
	b = append(b, `",`...)
	b = strconv.AppendInt(b, e.CreatedAt, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(e.Kind), 10)
	b = append(b, ',')
	tagsAt = len(b) - start
	b = nostr.AppendTags(b, e.Tags)
	b = append(b, ',')
	contentAt = len(b) - start
	b = nostr.AppendJSONString(b, e.Content)
	return append(b, ']'), tagsAt, contentAt
}

// appendWire appends the compact wire JSON of e (as nostr.Event.AppendJSON
// does) reusing the escaped tags and content of its serialization ser.
func appendWire(b []byte, e *nostr.Event, ser []byte, tagsAt, contentAt int) []byte {
	return e.AppendJSONEncoded(b, ser[tagsAt:contentAt-1], ser[contentAt:len(ser)-1])
}
