package harness

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestSplitTemplate(t *testing.T) {
	for ref, want := range map[string][2]string{
		"mine=relay --port {port}":   {"mine", "relay --port {port}"},
		"a.b-c=/x/y":                 {"a.b-c", "/x/y"},
		"mine=relay --opt=a=b":       {"mine", "relay --opt=a=b"},
		"ws://127.0.0.1:7777/?a=b":   {},
		"khatru-badger":              {},
		"my relay=x":                 {},
		"=relay":                     {},
		"a/b=relay":                  {},
		"relay --flag=x":             {},
		"mine=":                      {"mine", ""},
		"ws://127.0.0.1:1 mine=x":    {},
		"strfry=/opt/strfry relay x": {"strfry", "/opt/strfry relay x"},
	} {
		name, cmd, ok := SplitTemplate(ref)
		if ok != (want[0] != "") || name != want[0] || cmd != want[1] {
			t.Errorf("SplitTemplate(%q) = %q, %q, %v; want %q", ref, name, cmd, ok, want)
		}
	}
}

func TestSplitCommand(t *testing.T) {
	home, _ := os.UserHomeDir()
	for line, want := range map[string][]string{
		`relay serve --addr {host}:{port}`:     {"relay", "serve", "--addr", "{host}:{port}"},
		"  a \t b\n c  ":                       {"a", "b", "c"},
		`a 'b c' "d e" f\ g`:                   {"a", "b c", "d e", "f g"},
		`a '' ""`:                              {"a", "", ""},
		`a 'x,y' "p\"q" 'it'\''s'`:             {"a", "x,y", `p"q`, "it's"},
		`a "back\\slash \n"`:                   {"a", `back\slash \n`},
		`a --opt='{"k": 1}'`:                   {"a", `--opt={"k": 1}`},
		`sh -c 'exec relay > /dev/null | cat'`: {"sh", "-c", "exec relay > /dev/null | cat"},
		`~/bin/relay x~/y '~/z'`:               {home + "/bin/relay", "x~/y", "~/z"},
		``:                                     nil,
	} {
		got, err := SplitCommand(line)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", line, got, err, want)
		}
	}
	for line, want := range map[string]string{
		`a 'b`:          "unterminated '",
		`a "b`:          `unterminated "`,
		`a \`:           `lone \`,
		`relay > log`:   `unquoted ">"`,
		`relay | tee x`: `unquoted "|"`,
		`relay; rm x`:   `unquoted ";"`,
		`relay $PORT`:   `unquoted "$"`,
		`relay & x`:     `unquoted "&"`,
	} {
		if _, err := SplitCommand(line); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SplitCommand(%q) error %v, want %q", line, err, want)
		}
	}
}

var sample = TemplateData{Bin: "/abs/relay", Host: Host, Port: 4321, Addr: "127.0.0.1:4321", DataDir: "/run/x/data", RunDir: "/run/x", ConfigFile: "/run/x/relay.toml"}

func TestCommandSpecRenders(t *testing.T) {
	s, err := CommandSpec("mine", `sh -c 'echo "$0"' --listen {host}:{port} --addr={addr} --db {dir} --run {rundir} --json '{"port": {port}}' --lit {{x} {} {PORT`, "")
	if err != nil {
		t.Fatal(err)
	}
	sh, _ := filepathAbsLook("sh")
	if s.Kind != KindCommand || s.Version != "command template" || s.Origin() != "command template" || s.Name != "mine" {
		t.Errorf("spec %+v", s)
	}
	if !strings.Contains(s.Notes, "--listen {host}:{port}") || s.Command() == "" {
		t.Errorf("notes %q command %q", s.Notes, s.Command())
	}
	r, err := s.Render(sample)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{sample.Bin, "-c", `echo "$0"`, "--listen", "127.0.0.1:4321", "--addr=127.0.0.1:4321", "--db", "/run/x/data",
		"--run", "/run/x", "--json", `{"port": 4321}`, "--lit", "{x}", "{}", "{PORT"}
	if !reflect.DeepEqual(r.Args, want) {
		t.Errorf("args\n%q\nwant\n%q", r.Args, want)
	}
	if bin, from, err := Binary(s, Options{}); err != nil || bin != sh || from != "command template" {
		t.Errorf("binary %q from %q, %v (want %s)", bin, from, err, sh)
	}
	if s.StopSig().String() != "terminated" || s.GracePeriod() != 10*time.Second || s.ReadyWithin() != 30*time.Second {
		t.Errorf("stop %v grace %v ready %v", s.StopSig(), s.GracePeriod(), s.ReadyWithin())
	}
}

func filepathAbsLook(prog string) (string, error) {
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(d, prog)
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return filepath.Abs(p)
		}
	}
	return "", os.ErrNotExist
}

func TestCommandSpecConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "strfry.conf", "db = \"{dir}/\"\nrelay {\n    bind = \"{host}\"\n    port = {port}\n}\nself = \"{config}\"\n", 0o644)
	s, err := CommandSpec("mine", "sh --config={config} relay", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.ConfigName != "strfry.conf" {
		t.Errorf("config name %q", s.ConfigName)
	}
	d := sample
	d.ConfigFile = "/run/x/strfry.conf"
	r, err := s.Render(d)
	if err != nil {
		t.Fatal(err)
	}
	if r.Args[1] != "--config=/run/x/strfry.conf" {
		t.Errorf("args %q", r.Args)
	}
	want := "db = \"/run/x/data/\"\nrelay {\n    bind = \"127.0.0.1\"\n    port = 4321\n}\nself = \"/run/x/strfry.conf\"\n"
	if r.Config != want {
		t.Errorf("config\n%s\nwant\n%s", r.Config, want)
	}
	if n := configName("/x/data"); n == "data" {
		t.Errorf("a config called data would replace the data dir")
	}
}

func TestCommandSpecErrors(t *testing.T) {
	dir := t.TempDir()
	badCfg := writeFile(t, dir, "bad.toml", "port = {prot}\n", 0o644)
	notExec := writeFile(t, dir, "relay", "x", 0o644)
	for name, c := range map[string]struct{ cmd, cfg, want string }{
		"unknown placeholder": {"sh --port {prot}", "", "relay mine: unknown placeholder {prot}"},
		"config without file": {"sh --config {config}", "", "{config} needs a config file: pass --relay-config mine=FILE"},
		"unknown in config":   {"sh --config {config}", badCfg, "config " + badCfg + ": unknown placeholder {prot}"},
		"absent config":       {"sh", filepath.Join(dir, "nope.toml"), "nope.toml: no such file"},
		"program not found":   {"no-such-relay-program {port}", "", `program "no-such-relay-program" not found on PATH`},
		"not executable":      {notExec + " {port}", "", notExec + " is not an executable file"},
		"placeholder program": {"{rundir}/relay", "", "may not contain placeholders"},
		"empty":               {"  ", "", "empty command"},
		"shell syntax":        {"sh --port {port} > log", "", `unquoted ">"`},
	} {
		_, err := CommandSpec("mine", c.cmd, c.cfg)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one line holding %q", name, err, c.want)
		}
	}
	if _, err := CommandSpec("my relay", "sh", ""); err == nil {
		t.Errorf("bad name accepted")
	}
}

// A relay from a command template starts, answers and stops like a catalog
// relay, and its data dir is gone afterwards.
func TestCommandRelayStartsAndStops(t *testing.T) {
	bin := selfBin(t)
	s, err := CommandSpec("tmpl", bin+" relay serve --addr {host}:{port} --data-dir {dir} --store memory", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	inst, err := StartSpec(ctx, s, StartOptions{BaseDir: t.TempDir(), DataRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Stop(context.Background()) })
	if _, err := os.Stat(inst.DataDir); err != nil {
		t.Fatalf("data dir: %v", err)
	}
	c := dial(t, inst.URL)
	ev := newEvent(t, "from a template")
	if ok, msg := c.publish(ev); !ok {
		t.Fatalf("publish refused: %s", msg)
	}
	pgid := inst.PID
	if err := inst.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	assertGone(t, pgid)
	if _, err := os.Stat(inst.RunDir); !os.IsNotExist(err) {
		t.Errorf("run dir %s left behind: %v", inst.RunDir, err)
	}
	log, _ := os.ReadFile(inst.LogFile)
	if !strings.Contains(string(log), "starting tmpl: "+bin+" relay serve --addr 127.0.0.1:") {
		t.Errorf("log lacks the rendered command:\n%s", log)
	}
}
