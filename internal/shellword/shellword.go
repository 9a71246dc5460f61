// Package shellword writes a command's arguments as a POSIX shell command
// line that, pasted into sh, bash or zsh, gives the program the same
// arguments: words a shell would act on are single-quoted.
package shellword

import "strings"

// Quote returns s as one shell word: bare when every byte is one no shell
// acts on (letters, digits and _ @ % + = : , . / -; no leading =, which zsh
// expands), otherwise in single quotes, an embedded single quote written as
// quote, backslash-quote, quote. The empty string is a pair of quotes.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	if plain(s) && s[0] != '=' {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Join quotes each argument (Quote) and joins them with spaces.
func Join(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}

// plain says no byte of s means anything to a shell.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("_@%+=:,./-", c) >= 0:
		default:
			return false
		}
	}
	return true
}
