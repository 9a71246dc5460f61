package workload

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Defaults are declared once, in the `default:"…"` tag of each option's
// field, as the CLI's flags read them (kong): the CLI's subcommands embed
// the options, and a library caller gets the same defaults from
// applyDefaults, which every Run calls first. A default may name a
// variable, `default:"${timeout}"`, set by the field that embeds its struct
// (`set:"timeout=10s"`): Base's Timeout is one, each workload has its own.
//
// A zero field takes its default. A field whose zero means something (none,
// off) is tagged `zero:"keep"` and keeps it: its default reaches only
// callers that start from New.

// applyDefaults sets each zero field of the struct o points to, and of the
// structs it embeds, to its default. It panics on a default it cannot read
// (a programming error, caught by the registry test).
func applyDefaults(o any) {
	v := reflect.ValueOf(o)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("workload: applyDefaults(%T): want a pointer to a struct", o))
	}
	fillDefaults(v.Elem(), nil, false)
}

// newDefaults is applyDefaults on a zero value, where a `zero:"keep"`
// field takes its default too: the options New returns.
func newDefaults[T any]() *T {
	o := new(T)
	fillDefaults(reflect.ValueOf(o).Elem(), nil, true)
	return o
}

func fillDefaults(v reflect.Value, vars map[string]string, all bool) {
	t := v.Type()
	for i := range t.NumField() {
		f, fv := t.Field(i), v.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(time.Duration(0)) && (f.Anonymous || f.Tag.Get("embed") != "") {
			fillDefaults(fv, withVars(vars, string(f.Tag)), all)
			continue
		}
		def, ok := f.Tag.Lookup("default")
		if !ok || !fv.IsZero() || (!all && f.Tag.Get("zero") == "keep") {
			continue
		}
		def = expandVars(def, vars)
		if def == "" {
			continue
		}
		if err := setText(fv, def); err != nil {
			panic(fmt.Sprintf("workload: default of %s.%s: %v", t.Name(), f.Name, err))
		}
	}
}

// setTag is one `set:"k=v"` of a struct tag (kong reads each of several).
var setTag = regexp.MustCompile(`(?:^|\s)set:"([^"]*)"`)

// withVars adds the variables of the `set:"k=v"` entries of tag to vars.
func withVars(vars map[string]string, tag string) map[string]string {
	sets := setTag.FindAllStringSubmatch(tag, -1)
	if len(sets) == 0 {
		return vars
	}
	out := map[string]string{}
	for k, v := range vars {
		out[k] = v
	}
	for _, m := range sets {
		if k, v, ok := strings.Cut(m[1], "="); ok {
			out[k] = v
		}
	}
	return out
}

// expandVars replaces ${k} and ${k=default} in s as kong does.
func expandVars(s string, vars map[string]string) string {
	return varRef.ReplaceAllStringFunc(s, func(ref string) string {
		m := varRef.FindStringSubmatch(ref)
		if v, ok := vars[m[1]]; ok {
			return v
		}
		return m[3]
	})
}

var varRef = regexp.MustCompile(`\$\{([[:alpha:]_][[:word:]]*)(=([^}]*))?\}`)

// setText sets fv from text as the CLI would parse it.
func setText(fv reflect.Value, text string) error {
	if fv.Type() == reflect.TypeOf(time.Duration(0)) {
		d, err := time.ParseDuration(text)
		fv.SetInt(int64(d))
		return err
	}
	switch fv.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, err := strconv.ParseInt(text, 10, 64)
		fv.SetInt(n)
		return err
	case reflect.Float64:
		x, err := strconv.ParseFloat(text, 64)
		fv.SetFloat(x)
		return err
	case reflect.Bool:
		b, err := strconv.ParseBool(text)
		fv.SetBool(b)
		return err
	case reflect.String:
		fv.SetString(text)
		return nil
	case reflect.Slice:
		parts := strings.Split(text, ",")
		s := reflect.MakeSlice(fv.Type(), len(parts), len(parts))
		for i, p := range parts {
			if err := setText(s.Index(i), strings.TrimSpace(p)); err != nil {
				return err
			}
		}
		fv.Set(s)
		return nil
	}
	return fmt.Errorf("cannot read %q into a %s", text, fv.Type())
}
