package nostr

import (
	"encoding/json"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// ParseEventShared is ParseEvent for bytes that stay valid and unchanged
// for the life of the process (a read-only file mapping that is never
// unmapped): the result is equal to ParseEvent's, but it takes less heap.
//
//   - Content and Sig are strings over raw itself (no copy) when their JSON
//     has no escape sequence; a string with escapes is decoded onto the heap.
//   - ID, PubKey and the tags, which filter matching and indexes read, stay on
//     the heap, so that matching never touches raw's pages again: the id and
//     the tag values of one event share one allocation, the tags another.
//   - intern (may be nil) gives strings to share instead of copies: the
//     pubkey and any tag value found in it (e.g. the authors' pubkeys).
//   - keep (may be nil) is given a decoded content (one that had escapes,
//     decoded into a reused buffer) and returns a copy of it to hold, e.g.
//     one kept off the heap; it must not keep the buffer.
//
// Only the compact wire form AppendJSON writes is parsed this way; any other
// JSON is handed to ParseEvent (same result, same errors).
func ParseEventShared(raw []byte, intern map[string]string, keep func([]byte) string) (*Event, error) {
	if e, ok := parseCompact(raw, intern, keep); ok {
		return e, nil
	}
	return ParseEvent(raw)
}

// oneByte holds every byte value, so that a one-byte string (a tag name)
// is a substring of it rather than an allocation.
var oneByte = func() string {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return string(b)
}()

// compact is the state of one parseCompact.
type compact struct {
	raw []byte
	p   int
}

func (c *compact) lit(s string) bool {
	if len(c.raw)-c.p < len(s) || string(c.raw[c.p:c.p+len(s)]) != s {
		return false
	}
	c.p += len(s)
	return true
}

// str scans a JSON string at p: it returns the bytes between the quotes
// and whether they need decoding (an escape, or bytes ParseEvent would
// change or refuse: control characters, invalid UTF-8).
func (c *compact) str() (body []byte, plain, ok bool) {
	if c.p >= len(c.raw) || c.raw[c.p] != '"' {
		return nil, false, false
	}
	start := c.p + 1
	plain = true
	ascii := true
	i := start
	for ; i < len(c.raw); i++ {
		b := c.raw[i]
		if b == '"' {
			break
		}
		if b == '\\' {
			plain = false
			i++ // skip the escaped byte (a quote must not end the string)
			continue
		}
		if b < 0x20 {
			plain = false
		}
		if b >= utf8.RuneSelf {
			ascii = false
		}
	}
	if i >= len(c.raw) {
		return nil, false, false
	}
	body = c.raw[start:i]
	if plain && !ascii && !utf8.Valid(body) {
		plain = false
	}
	c.p = i + 1
	return body, plain, true
}

// decode is the value of a JSON string that needs decoding (json's rules).
func decode(quoted []byte) (string, bool) {
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return "", false
	}
	return s, true
}

// shared is the string over b (no copy).
func shared(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// integer parses a JSON integer that fits in int64 (json's grammar: no
// leading zeros, no '+').
func (c *compact) integer() (int64, bool) {
	neg := false
	if c.p < len(c.raw) && c.raw[c.p] == '-' {
		neg = true
		c.p++
	}
	start := c.p
	var v uint64
	for c.p < len(c.raw) && c.raw[c.p] >= '0' && c.raw[c.p] <= '9' {
		if c.p-start >= 18 {
			return 0, false // may overflow: leave it to json
		}
		v = v*10 + uint64(c.raw[c.p]-'0')
		c.p++
	}
	n := c.p - start
	if n == 0 || (n > 1 && c.raw[start] == '0') {
		return 0, false
	}
	if c.p < len(c.raw) && (c.raw[c.p] == '.' || c.raw[c.p] == 'e' || c.raw[c.p] == 'E') {
		return 0, false
	}
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

// parseCompact parses the exact layout AppendJSON writes; false for anything
// else (the caller then uses ParseEvent).
func parseCompact(raw []byte, intern map[string]string, keep func([]byte) string) (*Event, bool) {
	c := &compact{raw: raw}
	e := &Event{}
	if !c.lit(`{"id":`) {
		return nil, false
	}
	id, plain, ok := c.str()
	if !ok || !plain || len(id) != 64 || !c.lit(`,"pubkey":`) {
		return nil, false
	}
	pk, plain, ok := c.str()
	if !ok || !plain || len(pk) != 64 || !c.lit(`,"created_at":`) {
		return nil, false
	}
	if e.CreatedAt, ok = c.integer(); !ok || !c.lit(`,"kind":`) {
		return nil, false
	}
	kind, ok := c.integer()
	if !ok || int64(int(kind)) != kind || !c.lit(`,"tags":`) {
		return nil, false
	}
	e.Kind = int(kind)

	// The tags: first count them and the heap bytes their values need.
	tagsAt := c.p
	ntags, nvals, nbytes, ok := c.scanTags(intern)
	if !ok {
		return nil, false
	}
	buf := make([]byte, 0, 64+nbytes)
	buf = append(buf, id...)
	e.ID = unsafe.String(&buf[0], 64)
	if k, ok := intern[string(pk)]; ok {
		e.PubKey = k
	} else {
		e.PubKey = string(pk)
	}
	if ntags >= 0 {
		e.Tags = make([]Tag, ntags)
		vals := make([]string, nvals)
		c.p = tagsAt
		if !c.fillTags(e.Tags, vals, &buf, intern) {
			return nil, false
		}
	}

	if !c.lit(`,"content":`) {
		return nil, false
	}
	contentAt := c.p
	content, plain, ok := c.str()
	if !ok {
		return nil, false
	}
	if plain {
		e.Content = shared(content)
	} else if e.Content, ok = decodeContent(content, raw[contentAt:c.p], keep); !ok {
		return nil, false
	}
	if !c.lit(`,"sig":`) {
		return nil, false
	}
	sig, plain, ok := c.str()
	if !ok || !plain || len(sig) != 128 || !c.lit(`}`) || c.p != len(raw) {
		return nil, false
	}
	e.Sig = shared(sig)
	return e, true
}

// scanTags walks the tags array at p: the number of tags (-1 for null),
// of values, and the bytes of the values that are not interned.
func (c *compact) scanTags(intern map[string]string) (ntags, nvals, nbytes int, ok bool) {
	if c.lit("null") {
		return -1, 0, 0, true
	}
	if !c.lit("[") {
		return 0, 0, 0, false
	}
	if c.lit("]") {
		return 0, 0, 0, true
	}
	for {
		if !c.lit("[") {
			return 0, 0, 0, false
		}
		ntags++
		if !c.lit("]") {
			for {
				at := c.p
				body, plain, ok := c.str()
				if !ok {
					return 0, 0, 0, false
				}
				nvals++
				if !plain {
					s, ok := decode(c.raw[at:c.p])
					if !ok {
						return 0, 0, 0, false
					}
					nbytes += len(s)
				} else if _, in := intern[string(body)]; !in && len(body) > 1 {
					nbytes += len(body)
				}
				if c.lit("]") {
					break
				}
				if !c.lit(",") {
					return 0, 0, 0, false
				}
			}
		}
		if c.lit("]") {
			return ntags, nvals, nbytes, true
		}
		if !c.lit(",") {
			return 0, 0, 0, false
		}
	}
}

// fillTags parses the tags array scanTags checked into tags and vals,
// copying values into buf (whose capacity scanTags sized: it never grows,
// so the strings over it stay valid).
func (c *compact) fillTags(tags []Tag, vals []string, buf *[]byte, intern map[string]string) bool {
	if !c.lit("[") {
		return false
	}
	if c.lit("]") {
		return true
	}
	for t := range tags {
		if !c.lit("[") {
			return false
		}
		n := 0
		if !c.lit("]") {
			for {
				at := c.p
				body, plain, ok := c.str()
				if !ok {
					return false
				}
				var s string
				switch {
				case !plain:
					if s, ok = decode(c.raw[at:c.p]); !ok {
						return false
					}
					s = c.keep(buf, s)
				case len(body) == 0:
				case len(body) == 1:
					s = oneByte[body[0] : int(body[0])+1]
				default:
					var in bool
					if s, in = intern[string(body)]; !in {
						s = c.keep(buf, shared(body))
					}
				}
				vals[n] = s
				n++
				if c.lit("]") {
					break
				}
				if !c.lit(",") {
					return false
				}
			}
		}
		tags[t] = Tag(vals[:n:n])
		vals = vals[n:]
		if t == len(tags)-1 {
			return c.lit("]")
		}
		if !c.lit(",") {
			return false
		}
	}
	return false
}

// keep copies s into buf and returns the copy.
func (c *compact) keep(buf *[]byte, s string) string {
	if len(s) == 0 {
		return ""
	}
	if cap(*buf)-len(*buf) < len(s) {
		return s // not sized for it (cannot happen): keep s itself
	}
	at := len(*buf)
	*buf = append(*buf, s...)
	return unsafe.String(&(*buf)[at], len(s))
}

// unescapeBufs are the buffers contents with escapes are decoded into: no
// garbage per event, so that parsing a whole corpus does not make the
// collector let the heap grow to twice what the events need.
var unescapeBufs = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// decodeContent is the value of a content with escapes (body between the
// quotes, quoted with them), copied by keep (nil: onto the heap).
func decodeContent(body, quoted []byte, keep func([]byte) string) (string, bool) {
	bp := unescapeBufs.Get().(*[]byte)
	defer unescapeBufs.Put(bp)
	d, ok := unescape((*bp)[:0], body)
	if cap(d) <= 1<<20 {
		*bp = d[:0]
	}
	if !ok { // an escape json decodes its own way: let it
		s, ok := decode(quoted)
		if !ok || keep == nil {
			return s, ok
		}
		d = unsafe.Slice(unsafe.StringData(s), len(s))
	}
	if keep == nil {
		return string(d), true
	}
	return keep(d), true
}

// unescape appends the value of the body of a JSON string to dst, for the
// escapes AppendJSONString writes (and \/): false for anything whose
// decoding json does its own way (surrogates, invalid UTF-8, control
// characters, bad escapes).
func unescape(dst, body []byte) ([]byte, bool) {
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c < 0x20 || c == '"' {
			return dst, false
		}
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		if i++; i == len(body) {
			return dst, false
		}
		if body[i] != 'u' {
			e, ok := UnescapeChar(body[i])
			if !ok {
				return dst, false
			}
			dst = append(dst, e)
			continue
		}
		if i+4 >= len(body) {
			return dst, false
		}
		r := Hex4(body[i+1 : i+5])
		if r < 0 || (r >= 0xD800 && r < 0xE000) {
			return dst, false // not hex, or a surrogate: json pairs or replaces it
		}
		dst = utf8.AppendRune(dst, r)
		i += 4
	}
	return dst, utf8.Valid(dst)
}

// unescapes maps the character after a backslash in a JSON string to the
// byte it stands for, for the one-character escapes; 0 elsewhere.
var unescapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// UnescapeChar returns the byte the JSON escape \c stands for, for the
// one-character escapes (\" \\ \/ \b \f \n \r \t); false for any other c
// (\u is four hex digits, see Hex4).
func UnescapeChar(c byte) (byte, bool) {
	e := unescapes[c]
	return e, e != 0
}

// Hex4 returns the value of the four hex digits b[:4] (of a \u escape),
// or -1 if one is not a hex digit.
func Hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
