package wire

import (
	"errors"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/relaybench/relaybench/nostr"
)

// frameKind is the label of a relay-to-client NIP-01 message.
type frameKind uint8

const (
	kindUnknown frameKind = iota // a well-formed array with a label we do not know
	kindOK
	kindEvent
	kindEOSE
	kindClosed
	kindNotice
	kindAuth
	kindCount
)

// jstr is a JSON string found in a frame: the bytes between the quotes.
// esc reports that they hold escapes or non-ASCII bytes, so they must be
// decoded (and UTF-8 checked) before use; otherwise raw is the value.
type jstr struct {
	raw []byte
	esc bool
}

// String returns the decoded value (allocates unless empty).
func (s jstr) String() string {
	if len(s.raw) == 0 {
		return ""
	}
	if !s.esc {
		return string(s.raw)
	}
	return string(appendUnquoted(make([]byte, 0, len(s.raw)), s.raw))
}

// frame is one parsed relay message. Slices point into the parsed buffer.
//
//	OK:     a=event id, ok, b=reason
//	EVENT:  a=sub id, obj=event object
//	EOSE:   a=sub id
//	CLOSED: a=sub id, b=reason
//	NOTICE: a=message
//	AUTH:   a=challenge
//	COUNT:  a=sub id, obj=count object
type frame struct {
	kind  frameKind
	label jstr
	a, b  jstr
	ok    bool
	obj   []byte
	known bool  // EVENT: obj is an object the KnownEvent hook recognised (not scanned)
	tag   int32 // the hook's number for it
}

var (
	errEmpty        = errors.New("empty frame")
	errNotArray     = errors.New("frame is not a JSON array")
	errNoLabel      = errors.New("frame does not start with a string label")
	errBadString    = errors.New("invalid JSON string")
	errUnterminated = errors.New("unterminated JSON value")
	errBadValue     = errors.New("invalid JSON value")
	errTooDeep      = errors.New("JSON nested too deeply")
	errTrailing     = errors.New("unexpected data after the frame's last element")
	errOKShape      = errors.New(`OK frame is not ["OK",<id>,<bool>,<reason>]`)
	errEventShape   = errors.New(`EVENT frame is not ["EVENT",<sub id>,{event}]`)
	errEOSEShape    = errors.New(`EOSE frame is not ["EOSE",<sub id>]`)
	errClosedShape  = errors.New(`CLOSED frame is not ["CLOSED",<sub id>,<reason>]`)
	errNoticeShape  = errors.New(`NOTICE frame is not ["NOTICE",<message>]`)
	errAuthShape    = errors.New(`AUTH frame is not ["AUTH",<challenge>]`)
	errCountShape   = errors.New(`COUNT frame is not ["COUNT",<sub id>,{...}]`)
	errBinary       = errors.New("binary WebSocket message")
)

// parseFrame parses one relay-to-client message into f without allocating
// (except for a label written with escapes). It follows the JSON structure,
// so strings such as "EOSE" inside an event's content are never mistaken
// for frame elements.
func parseFrame(p []byte, f *frame) error { return parseFrameKnown(p, f, nil) }

// parseFrameKnown is parseFrame asking known (Options.KnownEvent, may be
// nil) about an EVENT's object before scanning it.
func parseFrameKnown(p []byte, f *frame, known KnownEventFunc) error {
	*f = frame{}
	i := skipWS(p, 0)
	if i >= len(p) {
		return errEmpty
	}
	if p[i] != '[' {
		return errNotArray
	}
	i = skipWS(p, i+1)
	if i >= len(p) || p[i] != '"' {
		return errNoLabel
	}
	label, i, err := scanString(p, i)
	if err != nil {
		return err
	}
	f.label = label
	var name string
	if label.esc {
		name = label.String()
	}
	var lb []byte = label.raw
	if label.esc {
		lb = []byte(name)
	}
	switch string(lb) {
	case "OK":
		f.kind = kindOK
		if i, err = needString(p, i, &f.a, errOKShape); err != nil {
			return err
		}
		if i, err = needComma(p, i, errOKShape); err != nil {
			return err
		}
		if i, f.ok, err = scanBool(p, i); err != nil {
			return errOKShape
		}
		// The reason is required by NIP-01 but some relays omit it.
		if i, err = optString(p, i, &f.b, errOKShape); err != nil {
			return err
		}
	case "EVENT":
		f.kind = kindEvent
		if i, err = needString(p, i, &f.a, errEventShape); err != nil {
			return err
		}
		if i, f.obj, err = eventObject(p, i, f, known); err != nil {
			return err
		}
	case "EOSE":
		f.kind = kindEOSE
		if i, err = needString(p, i, &f.a, errEOSEShape); err != nil {
			return err
		}
	case "CLOSED":
		f.kind = kindClosed
		if i, err = needString(p, i, &f.a, errClosedShape); err != nil {
			return err
		}
		if i, err = optString(p, i, &f.b, errClosedShape); err != nil {
			return err
		}
	case "NOTICE":
		f.kind = kindNotice
		if i, err = needString(p, i, &f.a, errNoticeShape); err != nil {
			return err
		}
	case "AUTH":
		f.kind = kindAuth
		if i, err = needString(p, i, &f.a, errAuthShape); err != nil {
			return err
		}
	case "COUNT":
		f.kind = kindCount
		if i, err = needString(p, i, &f.a, errCountShape); err != nil {
			return err
		}
		// NIP-45 says an object; any JSON value is passed on (count.go
		// names a bare number) so that the COUNT waiting is answered.
		if i, err = needComma(p, i, errCountShape); err != nil {
			return err
		}
		end, err := skipValue(p, i)
		if err != nil {
			return err
		}
		f.obj, i = p[i:end], end
	case "NEG-MSG", "NEG-ERR", "NEG-ERROR": // NIP-77, see neg.go
		if i, err = parseNeg(p, i, f, string(lb)); err != nil {
			return err
		}
	default:
		// Unknown label: check the rest is well-formed and ignore it.
		f.kind = kindUnknown
		for {
			i = skipWS(p, i)
			if i < len(p) && p[i] == ',' {
				if i, err = skipValue(p, skipWS(p, i+1)); err != nil {
					return err
				}
				continue
			}
			break
		}
	}
	return closeArray(p, i)
}

func skipWS(p []byte, i int) int {
	for i < len(p) {
		switch p[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// needComma skips ", " and returns the index of the next value.
func needComma(p []byte, i int, shape error) (int, error) {
	i = skipWS(p, i)
	if i >= len(p) || p[i] != ',' {
		return i, shape
	}
	return skipWS(p, i+1), nil
}

func needString(p []byte, i int, s *jstr, shape error) (int, error) {
	i, err := needComma(p, i, shape)
	if err != nil {
		return i, err
	}
	if i >= len(p) || p[i] != '"' {
		return i, shape
	}
	*s, i, err = scanString(p, i)
	return i, err
}

// optString reads ",<string>" if the array goes on, or nothing if it ends.
func optString(p []byte, i int, s *jstr, shape error) (int, error) {
	j := skipWS(p, i)
	if j < len(p) && p[j] == ']' {
		return j, nil
	}
	return needString(p, i, s, shape)
}

func needObject(p []byte, i int, shape error) (int, []byte, error) {
	i, err := needComma(p, i, shape)
	if err != nil {
		return i, nil, err
	}
	if i >= len(p) || p[i] != '{' {
		return i, nil, shape
	}
	end, err := skipValue(p, i)
	if err != nil {
		return i, nil, err
	}
	return end, p[i:end], nil
}

// eventObject is needObject for an EVENT's object (after the comma at or
// past i): when known says the bytes from the object's start begin with a
// complete object it holds as valid, that object is taken as it is,
// without scanning it (a JSON value's end is fixed by its bytes, so the
// scan would end at the same byte); f records it.
func eventObject(p []byte, i int, f *frame, known KnownEventFunc) (int, []byte, error) {
	if known != nil {
		j := skipWS(p, i)
		if j < len(p) && p[j] == ',' {
			j = skipWS(p, j+1)
			if j < len(p) && p[j] == '{' {
				if n, tag := known(p[j:]); n > 0 && n <= len(p)-j {
					f.known, f.tag = true, tag
					return j + n, p[j : j+n], nil
				}
			}
		}
	}
	return needObject(p, i, errEventShape)
}

func closeArray(p []byte, i int) error {
	i = skipWS(p, i)
	if i >= len(p) {
		return errUnterminated
	}
	if p[i] != ']' {
		return errTrailing
	}
	if skipWS(p, i+1) != len(p) {
		return errTrailing
	}
	return nil
}

func scanBool(p []byte, i int) (int, bool, error) {
	if len(p)-i >= 4 && string(p[i:i+4]) == "true" {
		return i + 4, true, nil
	}
	if len(p)-i >= 5 && string(p[i:i+5]) == "false" {
		return i + 5, false, nil
	}
	return i, false, errBadValue
}

// scanString scans the JSON string starting at p[i] == '"', validating its
// escapes and rejecting raw control characters.
func scanString(p []byte, i int) (jstr, int, error) {
	i++
	start := i
	esc := false
	for i < len(p) {
		c := p[i]
		switch {
		case c == '"':
			return jstr{raw: p[start:i], esc: esc}, i + 1, nil
		case c == '\\':
			esc = true
			if i+1 >= len(p) {
				return jstr{}, i, errUnterminated
			}
			switch p[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(p) || nostr.Hex4(p[i+2:i+6]) < 0 {
					return jstr{}, i, errBadString
				}
				i += 6
			default:
				return jstr{}, i, errBadString
			}
		case c < 0x20:
			return jstr{}, i, errBadString
		default:
			if c >= utf8.RuneSelf {
				esc = true
			}
			i++
		}
	}
	return jstr{}, i, errUnterminated
}

// appendUnquoted decodes the contents of a string validated by scanString,
// with encoding/json's rules: invalid UTF-8 and unpaired surrogates become
// U+FFFD.
func appendUnquoted(b, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\\' {
			if e, ok := nostr.UnescapeChar(s[i+1]); ok {
				b = append(b, e)
				i += 2
			} else { // \u: scanString lets no other escape through
				b, i = appendU(b, s, i)
			}
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
}

// appendU decodes the \u escape at s[i] (and the low half that follows a
// high surrogate), returning the index past it.
func appendU(b, s []byte, i int) ([]byte, int) {
	r := nostr.Hex4(s[i+2:])
	i += 6
	if utf16.IsSurrogate(r) {
		if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
			if r2 := nostr.Hex4(s[i+2:]); r2 >= 0 {
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					return utf8.AppendRune(b, d), i + 6
				}
			}
		}
		r = utf8.RuneError
	}
	return utf8.AppendRune(b, r), i
}

const maxDepth = 1024

// skipValue returns the index just past the JSON value starting at p[i].
// It checks nesting, strings and literal characters; it is not a full
// validator (the event's consumer parses the object itself).
func skipValue(p []byte, i int) (int, error) {
	var stack [maxDepth / 64]uint64 // bit set: that level is an object
	depth := 0
	for {
		if i >= len(p) {
			return i, errUnterminated
		}
		switch c := p[i]; c {
		case '"':
			j, err := skipString(p, i) // swar.go
			if err != nil {
				return j, err
			}
			i = j
		case '{', '[':
			if depth == maxDepth {
				return i, errTooDeep
			}
			if c == '{' {
				stack[depth/64] |= 1 << (depth % 64)
			} else {
				stack[depth/64] &^= 1 << (depth % 64)
			}
			depth++
			i++
		case '}', ']':
			if depth == 0 {
				return i, errBadValue
			}
			depth--
			isObj := stack[depth/64]&(1<<(depth%64)) != 0
			if isObj != (c == '}') {
				return i, errBadValue
			}
			i++
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i, errBadValue
			}
			i++
		default:
			if !isLiteralByte(c) {
				return i, errBadValue
			}
			for i < len(p) && isLiteralByte(p[i]) {
				i++
			}
		}
		if depth == 0 {
			return i, nil
		}
	}
}

// isLiteralByte reports bytes that can appear in numbers, true, false, null.
func isLiteralByte(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '+' || c == '.' || c == 'E'
}
