// Package nostr holds the NIP-01 types relaybench works with: events, filters,
// their canonical serialization, id computation and filter matching.
//
// It is deliberately small and allocation-conscious; the wire client and the
// corpus use it on their hot paths. go-nostr is used only in tests, as an
// independent check.
package nostr

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Tag is one event tag: a name followed by values, e.g. ["p", "<hex pubkey>"].
type Tag []string

// Event is a NIP-01 event. IDs, public keys and signatures are lower-case hex.
type Event struct {
	ID        string `json:"id"`
	PubKey    string `json:"pubkey"`
	CreatedAt int64  `json:"created_at"`
	Kind      int    `json:"kind"`
	Tags      []Tag  `json:"tags"`
	Content   string `json:"content"`
	Sig       string `json:"sig"`
}

// AppendSerialized appends the canonical NIP-01 serialization
// [0,pubkey,created_at,kind,tags,content] whose sha256 is the event id.
func (e *Event) AppendSerialized(b []byte) []byte {
	b, _, _ = e.AppendSerializedAt(b)
	return b
}

// AppendSerializedAt is AppendSerialized, also returning where the tags
// array and the content string start in the appended bytes (so that they
// can be reused, escaped, by AppendJSONEncoded).
func (e *Event) AppendSerializedAt(b []byte) (out []byte, tagsAt, contentAt int) {
	start := len(b)
	b = append(b, `[0,"`...)
	b = append(b, e.PubKey...)
	b = append(b, `",`...)
	b = strconv.AppendInt(b, e.CreatedAt, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(e.Kind), 10)
	b = append(b, ',')
	tagsAt = len(b) - start
	b = AppendTags(b, e.Tags)
	b = append(b, ',')
	contentAt = len(b) - start
	b = AppendJSONString(b, e.Content)
	return append(b, ']'), tagsAt, contentAt
}

// ComputeID returns the sha256 of the canonical serialization.
func (e *Event) ComputeID() [32]byte {
	buf := make([]byte, 0, 256+len(e.Content)+64*len(e.Tags))
	return sha256.Sum256(e.AppendSerialized(buf))
}

// CheckID reports whether e.ID is the hex of ComputeID.
func (e *Event) CheckID() bool {
	if len(e.ID) != 64 {
		return false
	}
	id := e.ComputeID()
	var hx [64]byte
	hex.Encode(hx[:], id[:])
	return string(hx[:]) == e.ID
}

// AppendJSON appends the compact wire JSON of the event (no spaces; field
// order id, pubkey, created_at, kind, tags, content, sig).
func (e *Event) AppendJSON(b []byte) []byte {
	return e.AppendJSONEncoded(b, nil, nil)
}

// AppendJSONEncoded is AppendJSON with the event's tags and content given
// already encoded (as AppendTags and AppendJSONString write them); a nil
// one is encoded from the event.
func (e *Event) AppendJSONEncoded(b, tags, content []byte) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, e.ID...)
	b = append(b, `","pubkey":"`...)
	b = append(b, e.PubKey...)
	b = append(b, `","created_at":`...)
	b = strconv.AppendInt(b, e.CreatedAt, 10)
	b = append(b, `,"kind":`...)
	b = strconv.AppendInt(b, int64(e.Kind), 10)
	b = append(b, `,"tags":`...)
	if tags == nil {
		b = AppendTags(b, e.Tags)
	} else {
		b = append(b, tags...)
	}
	b = append(b, `,"content":`...)
	if content == nil {
		b = AppendJSONString(b, e.Content)
	} else {
		b = append(b, content...)
	}
	b = append(b, `,"sig":"`...)
	b = append(b, e.Sig...)
	return append(b, `"}`...)
}

// MarshalJSON implements json.Marshaler with the compact wire form.
func (e Event) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil), nil }

// ParseEvent decodes one event object. It checks shape, not id or signature.
func ParseEvent(raw []byte) (*Event, error) {
	var e Event
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, fmt.Errorf("malformed event: %w", err)
	}
	if len(e.ID) != 64 || len(e.PubKey) != 64 || len(e.Sig) != 128 {
		return nil, errors.New("malformed event: id, pubkey or sig has the wrong length")
	}
	return &e, nil
}

// TagValue returns the first value of the first tag named name, or "".
func (e *Event) TagValue(name string) string {
	for _, t := range e.Tags {
		if len(t) >= 2 && t[0] == name {
			return t[1]
		}
	}
	return ""
}

// AppendTags appends tags as a compact JSON array of arrays of strings.
func AppendTags(b []byte, tags []Tag) []byte {
	return appendArray(b, tags, func(b []byte, t Tag) []byte { return AppendStrings(b, t) })
}

// AppendStrings appends vs as a compact JSON array of strings.
func AppendStrings(b []byte, vs []string) []byte {
	return appendArray(b, vs, AppendJSONString)
}

// appendArray appends vs as a compact JSON array, each element as each
// appends it.
func appendArray[T any](b []byte, vs []T, each func([]byte, T) []byte) []byte {
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = each(b, v)
	}
	return append(b, ']')
}

// needEscape marks the bytes NIP-01 escapes in JSON strings: control
// characters, '"' and '\\'.
var needEscape = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// AppendJSONString appends s as a JSON string with the NIP-01 escaping rules:
// only '"', '\\' and control characters are escaped (\n \t \r \b \f by name,
// others as \u00XX); non-ASCII UTF-8 is written as is, never HTML-escaped.
// Invalid UTF-8 is replaced by U+FFFD so the output is always valid JSON.
func AppendJSONString(b []byte, s string) []byte {
	if !utf8.ValidString(s) {
		return appendJSONStringRepair(b, s)
	}
	// Valid UTF-8 (the common case): copy runs of bytes that need no escape.
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; needEscape[c] {
			b = append(b, s[start:i]...)
			b = appendEscape(b, c)
			start = i + 1
		}
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendJSONStringRepair is AppendJSONString for invalid UTF-8: bad bytes
// become U+FFFD.
func appendJSONStringRepair(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if needEscape[c] {
				b = append(b, s[start:i]...)
				b = appendEscape(b, c)
				start = i + 1
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...)
			start = i + 1
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendEscape appends the JSON escape of a byte needEscape marks.
func appendEscape(b []byte, c byte) []byte {
	switch c {
	case '"':
		return append(b, `\"`...)
	case '\\':
		return append(b, `\\`...)
	case '\n':
		return append(b, `\n`...)
	case '\t':
		return append(b, `\t`...)
	case '\r':
		return append(b, `\r`...)
	case '\b':
		return append(b, `\b`...)
	case '\f':
		return append(b, `\f`...)
	}
	const hx = "0123456789abcdef"
	return append(b, '\\', 'u', '0', '0', hx[c>>4], hx[c&0xf])
}
