package nostr

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
)

// Filter is a NIP-01 REQ filter. Tags maps a single-letter tag name (without
// the '#') to the values any of which must be present. Since and Until are
// inclusive bounds; nil means unbounded. Limit 0 means "no limit given".
type Filter struct {
	IDs     []string
	Authors []string
	Kinds   []int
	Tags    map[string][]string
	Since   *int64
	Until   *int64
	Limit   int
	Search  string
}

// Matches reports whether e satisfies every condition of f (limit ignored).
func (f *Filter) Matches(e *Event) bool {
	if len(f.IDs) > 0 && !slices.Contains(f.IDs, e.ID) {
		return false
	}
	if len(f.Authors) > 0 && !slices.Contains(f.Authors, e.PubKey) {
		return false
	}
	if len(f.Kinds) > 0 && !slices.Contains(f.Kinds, e.Kind) {
		return false
	}
	if f.Since != nil && e.CreatedAt < *f.Since {
		return false
	}
	if f.Until != nil && e.CreatedAt > *f.Until {
		return false
	}
	for name, values := range f.Tags {
		found := false
		for _, t := range e.Tags {
			if len(t) >= 2 && t[0] == name && slices.Contains(values, t[1]) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// AppendJSON appends the compact JSON of the filter with a stable key order.
func (f *Filter) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	first := true
	key := func(k string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = AppendJSONString(b, k)
		b = append(b, ':')
	}
	if len(f.IDs) > 0 {
		key("ids")
		b = AppendStrings(b, f.IDs)
	}
	if len(f.Authors) > 0 {
		key("authors")
		b = AppendStrings(b, f.Authors)
	}
	if len(f.Kinds) > 0 {
		key("kinds")
		b = appendArray(b, f.Kinds, func(b []byte, k int) []byte { return strconv.AppendInt(b, int64(k), 10) })
	}
	names := make([]string, 0, len(f.Tags))
	for n := range f.Tags {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		key("#" + n)
		b = AppendStrings(b, f.Tags[n])
	}
	if f.Since != nil {
		key("since")
		b = strconv.AppendInt(b, *f.Since, 10)
	}
	if f.Until != nil {
		key("until")
		b = strconv.AppendInt(b, *f.Until, 10)
	}
	if f.Limit > 0 {
		key("limit")
		b = strconv.AppendInt(b, int64(f.Limit), 10)
	}
	if f.Search != "" {
		key("search")
		b = AppendJSONString(b, f.Search)
	}
	return append(b, '}')
}

// MarshalJSON implements json.Marshaler.
func (f Filter) MarshalJSON() ([]byte, error) { return f.AppendJSON(nil), nil }

// UnmarshalJSON implements json.Unmarshaler, accepting "#x" tag keys.
func (f *Filter) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*f = Filter{}
	for k, v := range m {
		var err error
		switch {
		case k == "ids":
			err = json.Unmarshal(v, &f.IDs)
		case k == "authors":
			err = json.Unmarshal(v, &f.Authors)
		case k == "kinds":
			err = json.Unmarshal(v, &f.Kinds)
		case k == "since":
			f.Since = new(int64)
			err = json.Unmarshal(v, f.Since)
		case k == "until":
			f.Until = new(int64)
			err = json.Unmarshal(v, f.Until)
		case k == "limit":
			err = json.Unmarshal(v, &f.Limit)
		case k == "search":
			err = json.Unmarshal(v, &f.Search)
		case len(k) == 2 && k[0] == '#':
			var vs []string
			err = json.Unmarshal(v, &vs)
			if f.Tags == nil {
				f.Tags = map[string][]string{}
			}
			f.Tags[k[1:]] = vs
		}
		if err != nil {
			return fmt.Errorf("filter field %q: %w", k, err)
		}
	}
	return nil
}

// Int64 returns a pointer to v, for Since and Until.
func Int64(v int64) *int64 { return &v }
