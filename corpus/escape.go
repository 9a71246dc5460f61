package corpus

import (
	"strconv"

	"github.com/relaybench/relaybench/nostr"
)

// needEscape marks the bytes NIP-01 escapes in JSON strings: control
// characters, '"' and '\\'.
var needEscape = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// appendEscaped is nostr.AppendJSONString for strings known to be valid
// UTF-8 (the generator's own strings, valid by construction): it copies runs
// of bytes that need no escaping instead of decoding runes. For valid UTF-8
// the output is identical; the tests compare every event with AppendJSON.
func appendEscaped(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !needEscape[c] {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, `\"`...)
		case '\\':
			b = append(b, `\\`...)
		case '\n':
			b = append(b, `\n`...)
		case '\t':
			b = append(b, `\t`...)
		case '\r':
			b = append(b, `\r`...)
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		default:
			const hx = "0123456789abcdef"
			b = append(b, '\\', 'u', '0', '0', hx[c>>4], hx[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendTagsEscaped appends tags as a JSON array, like the nostr package.
func appendTagsEscaped(b []byte, tags []nostr.Tag) []byte {
	b = append(b, '[')
	for i, t := range tags {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		for j, s := range t {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendEscaped(b, s)
		}
		b = append(b, ']')
	}
	return append(b, ']')
}

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
	b = appendTagsEscaped(b, e.Tags)
	b = append(b, ',')
	contentAt = len(b) - start
	b = appendEscaped(b, e.Content)
	return append(b, ']'), tagsAt, contentAt
}

// appendWire appends the compact wire JSON of e (as nostr.Event.AppendJSON
// does) reusing the escaped tags and content of its serialization ser.
func appendWire(b []byte, e *nostr.Event, ser []byte, tagsAt, contentAt int) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, e.ID...)
	b = append(b, `","pubkey":"`...)
	b = append(b, e.PubKey...)
	b = append(b, `","created_at":`...)
	b = strconv.AppendInt(b, e.CreatedAt, 10)
	b = append(b, `,"kind":`...)
	b = strconv.AppendInt(b, int64(e.Kind), 10)
	b = append(b, `,"tags":`...)
	b = append(b, ser[tagsAt:contentAt-1]...)
	b = append(b, `,"content":`...)
	b = append(b, ser[contentAt:len(ser)-1]...)
	b = append(b, `,"sig":"`...)
	b = append(b, e.Sig...)
	return append(b, `"}`...)
}

// appendJSON is nostr.Event.AppendJSON with the fast escaping of
// appendEscaped, for events whose strings are valid UTF-8 (the corpus's,
// read back from a checksummed cache file).
func appendJSON(b []byte, e *nostr.Event) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, e.ID...)
	b = append(b, `","pubkey":"`...)
	b = append(b, e.PubKey...)
	b = append(b, `","created_at":`...)
	b = strconv.AppendInt(b, e.CreatedAt, 10)
	b = append(b, `,"kind":`...)
	b = strconv.AppendInt(b, int64(e.Kind), 10)
	b = append(b, `,"tags":`...)
	b = appendTagsEscaped(b, e.Tags)
	b = append(b, `,"content":`...)
	b = appendEscaped(b, e.Content)
	b = append(b, `,"sig":"`...)
	b = append(b, e.Sig...)
	return append(b, `"}`...)
}
