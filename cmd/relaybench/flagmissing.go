package main

import (
	"errors"
	"regexp"
	"strings"

	"github.com/alecthomas/kong"
)

// kong's errors for a flag given no value, for every flag that takes one:
// "--charts: expected string value but got "EOL" (<EOL>)" at the end of
// the line, "… but got "--events" (long flag); perhaps try
// --relay="--events"?" when the next word is a flag, and "--relays:
// missing value, expecting "<arg>"" for a list.
var (
	kongExpected = regexp.MustCompile(`^(--?[\w.-]+): expected ([\w.-]+) value but got "(.*)" \((<EOL>|long flag|short flag)\)`)
	kongMissing  = regexp.MustCompile(`^(--?[\w.-]+): missing value, expecting "`)
)

// missingValue says in words which value a flag given none needs
// ("--charts needs a value: DIR (relaybench report --help)"), from the
// flag's placeholder; "" when err is not kong's error for it.
func missingValue(err error) string {
	name, typ, next := "", "", ""
	if m := kongExpected.FindStringSubmatch(err.Error()); m != nil {
		name, typ = m[1], m[2]
		if m[4] != "<EOL>" {
			next = m[3]
		}
	} else if m := kongMissing.FindStringSubmatch(err.Error()); m != nil {
		name = m[1]
	} else {
		return ""
	}
	what, cmd := valueWord(typ), []string{"relaybench"}
	var perr *kong.ParseError
	if errors.As(err, &perr) && perr.Context != nil {
		for _, tr := range perr.Context.Path {
			if tr.Command != nil {
				cmd = append(cmd, tr.Command.Name)
			}
		}
		if f := flagNamed(perr.Context.Flags(), name); f != nil {
			if len(f.Name) == 1 {
				name = "-" + f.Name // -o, as typed: kong says --o
			}
			if f.PlaceHolder != "" {
				what = f.PlaceHolder
			}
		}
	}
	msg := name + " needs a value: " + what
	if next != "" {
		msg += "; " + next + " is a flag (" + name + "=" + next + " if it is the value)"
	}
	return msg + " (" + strings.Join(cmd, " ") + " --help)"
}

// valueWord names a value of kong's type ("int": a number).
func valueWord(typ string) string {
	switch {
	case strings.HasPrefix(typ, "int"), strings.HasPrefix(typ, "uint"), strings.HasPrefix(typ, "float"):
		return "a number"
	case typ == "duration":
		return "a duration (e.g. 10s)"
	}
	return "a value"
}

// flagNamed is the flag --name (or -x) among flags (nil: none).
func flagNamed(flags []*kong.Flag, name string) *kong.Flag {
	for _, f := range flags {
		if "--"+f.Name == name || (f.Short != 0 && "-"+string(f.Short) == name) {
			return f
		}
	}
	return nil
}
