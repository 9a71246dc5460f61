// Package harness installs, starts, readies, samples and stops real Nostr
// relays so that relaybench can run the same workload on several of them.
//
// The relays it knows are listed in catalog.toml (embedded in the binary):
// how each is installed (our own binary, a pinned Go build, a crates.io
// build, or a binary the user supplies), the command line and config file
// that start it on a given port and data dir with rate limits lifted, and
// how it stops. Every relay runs in its own process group and is killed as a
// group; Stop removes its data.
package harness

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"
	"syscall"
	"text/template"
	"time"

	"github.com/pelletier/go-toml/v2"
)

//go:embed catalog.toml
var catalogTOML []byte

// Kind says how a relay is installed.
type Kind string

// The install kinds.
const (
	KindSelf    Kind = "self"     // this relaybench binary: "relaybench relay serve …"
	KindGoBuild Kind = "go-build" // harness/relays/<source>, built with its own pinned go.mod
	KindCargo   Kind = "cargo"    // a crate from crates.io, built with cargo
	KindBinary  Kind = "binary"   // a binary the user supplies
	// KindCommand is a relay started from a command template given on the
	// command line (compare --relays NAME=COMMAND); see CommandSpec. A
	// catalog file cannot use it.
	KindCommand Kind = "command"
)

// Spec is one relay setup from the catalog.
type Spec struct {
	Name        string `toml:"name"`
	Description string `toml:"description"`
	Language    string `toml:"language"`
	Store       string `toml:"store"`
	Version     string `toml:"version"` // pinned version(s) of what is built
	Kind        Kind   `toml:"kind"`

	Source      string   `toml:"source"`       // go-build: directory under harness/relays
	Crate       string   `toml:"crate"`        // cargo: crate name (version is Version)
	CargoUpdate []string `toml:"cargo_update"` // cargo: packages to "cargo update -p" before building
	Needs       []string `toml:"needs"`        // programs the build needs on PATH
	BinName     string   `toml:"bin_name"`     // go-build, cargo: the executable's name
	BuildEnv    []string `toml:"build_env"`    // environment for the build
	BinEnv      string   `toml:"bin_env"`      // binary: env var holding the binary's path
	// Get says how a user gets a binary relay's executable when it is
	// missing ("strfry is on no package registry: build it from …").
	Get string `toml:"get"`
	// BinOf names the relay whose binary this entry runs with another
	// configuration (e.g. orly-auth runs orly): --bin NAME=…, DIR/NAME of
	// --bin-dir and the build cache are tried under this entry's name, then
	// under BinOf's. Its build fields must be those of BinOf.
	BinOf string `toml:"bin_of"`

	Args       []string `toml:"args"`        // command line; each element a text/template
	ConfigName string   `toml:"config_name"` // file name of the config in the run dir
	Config     string   `toml:"config"`      // config file template
	Env        []string `toml:"env"`         // KEY=VALUE templates

	StopSignal   string `toml:"stop_signal"`   // SIGTERM or SIGINT
	Grace        string `toml:"grace"`         // time between the stop signal and SIGKILL
	ReadyTimeout string `toml:"ready_timeout"` // time the port may take to accept a WebSocket
	Postgres     bool   `toml:"postgres"`      // needs a private PostgreSQL cluster
	// MetricsPath is where the relay serves its own Prometheus metrics on
	// its port ("/metrics"; "" when it serves none): relaybench reads them
	// around every timed window without --relay-metrics.
	MetricsPath string `toml:"metrics_path"`
	Notes       string `toml:"notes"`

	args, env []*template.Template
	config    *template.Template
	sig       syscall.Signal
	grace     time.Duration
	ready     time.Duration

	origin  string // "" for the embedded catalog, else the catalog file or "command template"
	command string // KindCommand: the command line as given
	cmdBin  string // KindCommand: the program, resolved when the spec was made
}

// Origin says where the spec comes from: "" for the catalog built into
// relaybench, the path of a --catalog file, or "command template".
func (s Spec) Origin() string { return s.origin }

// Command is the command line a KindCommand spec was made from ("" for
// catalog relays).
func (s Spec) Command() string { return s.command }

// TemplateData are the fields the args, env and config templates may use.
type TemplateData struct {
	Bin         string // the relay's executable
	Host        string // 127.0.0.1
	Port        int
	Addr        string // Host:Port
	DataDir     string // the relay's data directory: empty at start, removed at stop
	RunDir      string // per-instance scratch directory holding DataDir and the config
	ConfigFile  string // RunDir/config_name, written before start
	DatabaseURL string // postgres specs: the URL of an empty database
}

type catalogFile struct {
	Relay []Spec `toml:"relay"`
}

var (
	catalogOnce  sync.Once
	catalogSpecs []Spec
	catalogErr   error
)

// Catalog returns the parsed, validated catalog built into relaybench, in
// file order. LoadCatalog adds the user's catalog files to it.
func Catalog() ([]Spec, error) {
	catalogOnce.Do(func() { catalogSpecs, catalogErr = ParseCatalog(catalogTOML) })
	if catalogErr != nil {
		return nil, catalogErr
	}
	return append([]Spec(nil), catalogSpecs...), nil
}

// Lookup returns the entry called name of the built-in catalog.
func Lookup(name string) (Spec, error) {
	specs, err := Catalog()
	if err != nil {
		return Spec{}, err
	}
	return Specs(specs).Lookup(name)
}

// Specs is a catalog: relay setups in order, names unique.
type Specs []Spec

// Lookup returns the entry called name.
func (c Specs) Lookup(name string) (Spec, error) {
	var names []string
	for _, s := range c {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return Spec{}, fmt.Errorf("unknown relay %q; known: %s", name, strings.Join(names, ", "))
}

// Names returns the names of the entries, sorted.
func (c Specs) Names() []string {
	n := make([]string, 0, len(c))
	for _, s := range c {
		n = append(n, s.Name)
	}
	sort.Strings(n)
	return n
}

// LoadCatalog returns the built-in catalog with the catalog files laid over
// it in order (see Merge): an entry of a file adds a relay, or replaces the
// one of the same name whole. A file is in the format of catalog.toml, and
// unknown keys are rejected like there.
func LoadCatalog(files ...string) (Specs, error) {
	specs, err := Catalog()
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		over, err := ParseCatalogFile(f)
		if err != nil {
			return nil, err
		}
		specs = Merge(specs, over)
	}
	return specs, nil
}

// ParseCatalogFile reads and validates one catalog file. Errors are one line
// naming the file (and the line and key when the TOML decoder knows them).
func ParseCatalogFile(path string) ([]Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("catalog %s: %v", path, pathErr(err))
	}
	specs, err := parseCatalog(data, "catalog "+path)
	if err != nil {
		return nil, err
	}
	for i := range specs {
		specs[i].origin = path
	}
	return specs, nil
}

// Merge lays over on base: an entry of over whose name is in base takes its
// place (whole: fields it leaves out are not inherited); the others follow,
// in their order. Neither argument is modified.
func Merge(base, over []Spec) Specs {
	out := append(Specs(nil), base...)
	at := map[string]int{}
	for i, s := range out {
		at[s.Name] = i
	}
	for _, s := range over {
		if i, ok := at[s.Name]; ok {
			out[i] = s
			continue
		}
		at[s.Name] = len(out)
		out = append(out, s)
	}
	return out
}

// ParseCatalog parses and validates a catalog in the format of catalog.toml.
// Unknown keys are rejected, and every template is parsed and rendered once.
func ParseCatalog(data []byte) ([]Spec, error) {
	return parseCatalog(data, "catalog")
}

func parseCatalog(data []byte, what string) ([]Spec, error) {
	var f catalogFile
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %s", what, tomlError(err))
	}
	seen := map[string]bool{}
	for i := range f.Relay {
		s := &f.Relay[i]
		if err := s.compile(); err != nil {
			return nil, fmt.Errorf("%s: relay %q: %w", what, s.Name, err)
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("%s: relay %q listed twice", what, s.Name)
		}
		seen[s.Name] = true
	}
	return f.Relay, nil
}

// tomlError makes a TOML decoding error one line that names the line and,
// for keys the schema does not have, the key.
func tomlError(err error) string {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		e := strict.Errors[0]
		row, _ := e.Position()
		msg := fmt.Sprintf("line %d: unknown key %s", row, strings.Join(e.Key(), "."))
		if n := len(strict.Errors) - 1; n > 0 {
			msg += fmt.Sprintf(" (and %d more)", n)
		}
		return msg
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		return fmt.Sprintf("line %d, column %d: %s", row, col, strings.TrimPrefix(de.Error(), "toml: "))
	}
	return strings.Join(strings.Fields(strings.TrimPrefix(err.Error(), "toml: ")), " ")
}

// pathErr drops the path an *fs.PathError repeats.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ValidName checks a relay name: letters, digits, '.', '_' and '-', not
// starting with '.' or '-'. A name becomes file names (its log, its run
// dir) and an element of comma-separated lists.
func ValidName(name string) error {
	if name == "" {
		return fmt.Errorf("relay name is empty")
	}
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
		case (r == '.' || r == '-') && i > 0:
		default:
			return fmt.Errorf("relay name %q: use letters, digits, '.', '_' and '-' (not first)", name)
		}
	}
	return nil
}

// compile checks a spec and parses its templates and durations.
func (s *Spec) compile() error {
	if err := ValidName(s.Name); err != nil {
		return err
	}
	if s.Version == "" {
		return fmt.Errorf("version is missing")
	}
	if s.BinOf != "" {
		if err := ValidName(s.BinOf); err != nil {
			return fmt.Errorf("bin_of: %w", err)
		}
	}
	switch s.Kind {
	case KindSelf:
	case KindGoBuild:
		if s.Source == "" || s.BinName == "" {
			return fmt.Errorf("go-build needs source and bin_name")
		}
	case KindCargo:
		if s.Crate == "" || s.BinName == "" {
			return fmt.Errorf("cargo needs crate and bin_name")
		}
	case KindBinary:
		if s.BinEnv == "" {
			return fmt.Errorf("binary needs bin_env")
		}
	case KindCommand:
		if s.cmdBin == "" {
			return fmt.Errorf("kind command is only for relays given as NAME=COMMAND on the command line")
		}
	default:
		return fmt.Errorf("unknown kind %q (self, go-build, cargo, binary)", s.Kind)
	}
	if len(s.Args) == 0 {
		return fmt.Errorf("args is empty")
	}
	if (s.Config == "") != (s.ConfigName == "") {
		return fmt.Errorf("config and config_name go together")
	}
	switch s.StopSignal {
	case "", "SIGTERM":
		s.sig = syscall.SIGTERM
	case "SIGINT":
		s.sig = syscall.SIGINT
	default:
		return fmt.Errorf("stop_signal %q: want SIGTERM or SIGINT", s.StopSignal)
	}
	if s.MetricsPath != "" && (!strings.HasPrefix(s.MetricsPath, "/") || strings.ContainsAny(s.MetricsPath, " \t\n?#")) {
		return fmt.Errorf("metrics_path %q: want a path on the relay's port, e.g. /metrics", s.MetricsPath)
	}
	var err error
	if s.grace, err = parseDur(s.Grace, 10*time.Second); err != nil {
		return fmt.Errorf("grace: %w", err)
	}
	if s.ready, err = parseDur(s.ReadyTimeout, 30*time.Second); err != nil {
		return fmt.Errorf("ready_timeout: %w", err)
	}
	parse := func(what, text string) (*template.Template, error) {
		t, err := template.New(what).Option("missingkey=error").Parse(text)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		return t, nil
	}
	s.args, s.env = nil, nil
	for i, a := range s.Args {
		t, err := parse(fmt.Sprintf("args[%d]", i), a)
		if err != nil {
			return err
		}
		s.args = append(s.args, t)
	}
	for i, e := range s.Env {
		if !strings.Contains(e, "=") {
			return fmt.Errorf("env[%d] %q: want KEY=VALUE", i, e)
		}
		t, err := parse(fmt.Sprintf("env[%d]", i), e)
		if err != nil {
			return err
		}
		s.env = append(s.env, t)
	}
	s.config = nil
	if s.Config != "" {
		if s.config, err = parse("config", s.Config); err != nil {
			return err
		}
	}
	// Render once with sample values so a broken template fails at load.
	_, err = s.Render(TemplateData{Bin: "/bin/relay", Host: "127.0.0.1", Port: 7777, Addr: "127.0.0.1:7777",
		DataDir: "/tmp/run/data", RunDir: "/tmp/run", ConfigFile: "/tmp/run/config", DatabaseURL: "postgres://x@127.0.0.1:5432/db"})
	return err
}

func parseDur(s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err == nil && d <= 0 {
		err = fmt.Errorf("%q must be positive", s)
	}
	return d, err
}

// Rendered is a spec's command line, environment and config for one start.
type Rendered struct {
	Args   []string
	Env    []string
	Config string
}

// Render fills the spec's templates with d.
func (s Spec) Render(d TemplateData) (Rendered, error) {
	if s.args == nil {
		if err := s.compile(); err != nil {
			return Rendered{}, err
		}
	}
	var r Rendered
	exec := func(t *template.Template) (string, error) {
		var b strings.Builder
		if err := t.Execute(&b, d); err != nil {
			return "", err
		}
		return b.String(), nil
	}
	for _, t := range s.args {
		a, err := exec(t)
		if err != nil {
			return r, err
		}
		r.Args = append(r.Args, a)
	}
	for _, t := range s.env {
		e, err := exec(t)
		if err != nil {
			return r, err
		}
		r.Env = append(r.Env, e)
	}
	if s.config != nil {
		c, err := exec(s.config)
		if err != nil {
			return r, err
		}
		r.Config = c
	}
	return r, nil
}

// StopSig is the signal that asks the relay to stop.
func (s Spec) StopSig() syscall.Signal {
	if s.sig == 0 {
		return syscall.SIGTERM
	}
	return s.sig
}

// GracePeriod is how long Stop waits after the stop signal before SIGKILL.
func (s Spec) GracePeriod() time.Duration {
	if s.grace == 0 {
		return 10 * time.Second
	}
	return s.grace
}

// ReadyWithin is how long Start waits for the port to accept a WebSocket.
func (s Spec) ReadyWithin() time.Duration {
	if s.ready == 0 {
		return 30 * time.Second
	}
	return s.ready
}

// Names returns the built-in catalog's relay names, sorted.
func Names() []string {
	specs, _ := Catalog()
	return Specs(specs).Names()
}
