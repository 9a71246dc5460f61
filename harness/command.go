package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Command templates: a relay that is in no catalog, started from a command
// line given on relaybench's own command line, e.g.
//
//	mine=/opt/mine/relay --listen {host}:{port} --db {dir}
//
// The command is split into words like a shell would (quotes and
// backslashes; no shell runs it), the placeholders are substituted in every
// word, and the first word, the program, is found on PATH. The relay then
// starts, readies, is sampled and stops like any catalog relay (SIGTERM,
// 10 s grace, ready within 30 s), in its run directory.

// Placeholders are the placeholders of command templates and their config
// files, with the template field each stands for.
var Placeholders = []struct{ Name, Field, Help string }{
	{"port", ".Port", "the port to listen on"},
	{"host", ".Host", "the address to listen on, " + Host},
	{"addr", ".Addr", "host:port"},
	{"dir", ".DataDir", "the data directory: empty at start, removed at stop"},
	{"rundir", ".RunDir", "the run directory holding {dir} and the config; the relay's working directory"},
	{"config", ".ConfigFile", "the path of the config file rendered from --relay-config NAME=FILE"},
}

func placeholderNames() string {
	var n []string
	for _, p := range Placeholders {
		n = append(n, "{"+p.Name+"}")
	}
	return strings.Join(n, " ")
}

// SplitTemplate splits ref into NAME and COMMAND when ref has the form
// NAME=COMMAND: an '=' before any space, and a valid relay name before it.
func SplitTemplate(ref string) (name, command string, ok bool) {
	eq := strings.IndexByte(ref, '=')
	if eq <= 0 {
		return "", "", false
	}
	if sp := strings.IndexAny(ref, " \t\n"); sp >= 0 && sp < eq {
		return "", "", false
	}
	if ValidName(ref[:eq]) != nil {
		return "", "", false
	}
	return ref[:eq], ref[eq+1:], true
}

// CommandSpec makes the spec of relay name started by command (see the
// package's command templates). configFile, when not "", is a file that is
// itself a template with the same placeholders: it is rendered into the run
// directory, under its own base name, before each start, and {config} is
// its path. Errors are one line: an unknown placeholder is named, {config}
// without a config file, a program not found.
func CommandSpec(name, command, configFile string) (Spec, error) {
	fail := func(format string, a ...any) (Spec, error) {
		return Spec{}, fmt.Errorf("relay %s: %s", name, fmt.Sprintf(format, a...))
	}
	if err := ValidName(name); err != nil {
		return Spec{}, err
	}
	words, err := SplitCommand(command)
	if err != nil {
		return fail("%v", err)
	}
	if len(words) == 0 {
		return fail("empty command")
	}
	if _, used, err := placeholderTemplate(words[0]); err != nil || len(used) > 0 {
		return fail("the program %q may not contain placeholders", words[0])
	}
	prog, err := exec.LookPath(words[0])
	if err != nil {
		if strings.Contains(words[0], "/") {
			return fail("%s is not an executable file", words[0])
		}
		return fail("program %q not found on PATH", words[0])
	}
	if prog, err = filepath.Abs(prog); err != nil {
		return fail("%v", err)
	}
	s := Spec{
		Name:        name,
		Description: "started from a command template",
		Version:     "command template",
		Kind:        KindCommand,
		Args:        []string{"{{.Bin}}"},
		Notes:       "started from the command template: " + command,
		origin:      "command template",
		command:     command,
		cmdBin:      prog,
	}
	usesConfig := false
	for _, w := range words[1:] {
		t, used, err := placeholderTemplate(w)
		if err != nil {
			return fail("%v", err)
		}
		usesConfig = usesConfig || used["config"]
		s.Args = append(s.Args, t)
	}
	if configFile != "" {
		data, err := os.ReadFile(configFile)
		if err != nil {
			return fail("config %s: %v", configFile, pathErr(err))
		}
		t, _, err := placeholderTemplate(string(data))
		if err != nil {
			return fail("config %s: %v", configFile, err)
		}
		s.Config, s.ConfigName = t, configName(configFile)
		s.Notes += " (config from " + configFile + ")"
	} else if usesConfig {
		return fail("{config} needs a config file: pass --relay-config %s=FILE", name)
	}
	if err := s.compile(); err != nil {
		return fail("%v", err)
	}
	return s, nil
}

// configName is the config's file name in the run directory: its own base
// name, unless that is a name the harness uses there.
func configName(path string) string {
	b := filepath.Base(path)
	if b == "data" || b == ownerFile || b == "postgres" || b == "." || b == "/" {
		return "relay-" + strings.Trim(b, "./")
	}
	return b
}

// placeholderTemplate turns text with {placeholders} into text/template
// source, and says which placeholders it uses. "{{" stands for a literal
// "{"; any other "{" not opening a placeholder ({name}, name made of
// letters, digits and '_') is literal too.
func placeholderTemplate(text string) (string, map[string]bool, error) {
	var out, lit strings.Builder
	used := map[string]bool{}
	flush := func() {
		if lit.Len() == 0 {
			return
		}
		l := lit.String()
		if strings.ContainsAny(l, "{}") {
			out.WriteString("{{" + strconv.Quote(l) + "}}")
		} else {
			out.WriteString(l)
		}
		lit.Reset()
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '{' {
			lit.WriteByte(c)
			continue
		}
		if i+1 < len(text) && text[i+1] == '{' {
			lit.WriteByte('{')
			i++
			continue
		}
		j := i + 1
		for j < len(text) && isIdent(text[j], j == i+1) {
			j++
		}
		if j == i+1 || j >= len(text) || text[j] != '}' {
			lit.WriteByte(c) // not a placeholder: a literal "{"
			continue
		}
		name := text[i+1 : j]
		field := ""
		for _, p := range Placeholders {
			if p.Name == name {
				field = p.Field
			}
		}
		if field == "" {
			return "", nil, fmt.Errorf("unknown placeholder {%s} (known: %s; {{ for a literal {)", name, placeholderNames())
		}
		flush()
		out.WriteString("{{" + field + "}}")
		used[name] = true
		i = j
	}
	flush()
	return out.String(), used, nil
}

func isIdent(c byte, first bool) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || !first && c >= '0' && c <= '9'
}

// SplitCommand splits a command line into words like a POSIX shell, without
// running one: blanks separate words; '…' keeps everything literally; "…"
// keeps everything but \" \\ \$ \` (backslash escapes); outside quotes a
// backslash keeps the next character. A leading unquoted ~/ is $HOME/.
// Characters a shell would act on (| & ; < > ( ) $ `) must be quoted:
// nothing would act on them, so they are refused rather than passed on.
func SplitCommand(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	end := func() {
		if inWord {
			words = append(words, w.String())
		}
		w.Reset()
		inWord = false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			end()
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' in the command")
			}
			w.WriteString(line[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '"':
			inWord = true
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`\n", line[i+1]) >= 0 {
					i++
					if line[i] == '\n' {
						continue
					}
				}
				w.WriteByte(line[i])
			}
			if i >= len(line) {
				return nil, fmt.Errorf(`unterminated " in the command`)
			}
		case c == '\\':
			if i+1 >= len(line) {
				return nil, fmt.Errorf("a lone \\ ends the command")
			}
			i++
			if line[i] != '\n' {
				w.WriteByte(line[i])
				inWord = true
			}
		case strings.IndexByte("|&;<>()$`", c) >= 0:
			return nil, fmt.Errorf("unquoted %q in the command: no shell runs it; quote it, or make the command sh -c '…'", string(c))
		case c == '~' && !inWord && strings.HasPrefix(line[i:], "~/"):
			home, err := os.UserHomeDir()
			if err != nil {
				return nil, fmt.Errorf("~/: %v", err)
			}
			w.WriteString(home)
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	end()
	return words, nil
}
