package harness

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// relaySources holds the small mains of go-build relays. Their go.mod and
// go.sum are stored as go.mod.txt and go.sum.txt (a directory with a real
// go.mod would be another module, which go:embed refuses), and main.go
// carries a "//go:build ignore" line that keeps it out of this module.
//
//go:embed relays
var relaySources embed.FS

// Options say where relays are installed and which binaries the user supplied.
type Options struct {
	// CacheDir is the install root; empty means CacheRoot().
	CacheDir string
	// Bins maps relay names to user-supplied binaries (--bin name=PATH).
	Bins map[string]string
	// BinDir is a folder of prebuilt relay binaries named after catalog
	// entries (DIR/strfry, DIR/nostr-rs-relay-sqlite); empty means
	// $RELAYBENCH_BIN_DIR. A file there is the binary of the entry of that
	// name, whatever its kind (but self and command): no build, no env
	// var. Bins wins over it.
	BinDir string
	// SelfBin is the relaybench binary for "self" relays; empty means
	// os.Executable().
	SelfBin string
	// Log, when set, receives one line per install step.
	Log io.Writer
}

// CacheRoot is where relays are built: $RELAYBENCH_CACHE, else
// $XDG_CACHE_HOME/relaybench/relays or ~/.cache/relaybench/relays.
func CacheRoot() (string, error) {
	if d := os.Getenv("RELAYBENCH_CACHE"); d != "" {
		return filepath.Abs(d)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory: set RELAYBENCH_CACHE (%v)", err)
	}
	return filepath.Join(d, "relaybench", "relays"), nil
}

func (o Options) cacheRoot() (string, error) {
	if o.CacheDir != "" {
		return filepath.Abs(o.CacheDir)
	}
	return CacheRoot()
}

// InstallDir is where spec is (or would be) built.
func InstallDir(spec Spec, o Options) (string, error) {
	root, err := o.cacheRoot()
	if err != nil {
		return "", err
	}
	name := spec.Name
	if spec.BinOf != "" {
		name = spec.BinOf // the same build as the relay it is a variant of
	}
	return filepath.Join(root, name+"-"+sanitize(spec.Version)), nil
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}

// SelfLacks names the embedded relay's stores this relaybench binary was
// built without, each with how to build them in (set by the CLI): a "self"
// relay over one of them is skipped. Not consulted for Options.SelfBin.
var SelfLacks map[string]string

// SkipError says a relay cannot run here (no binary, not installed); callers
// print it as one line and carry on with the other relays.
type SkipError struct {
	Name, Why string
}

// Its message says why alone, naming the relay ("strfry needs a binary
// you supply, …", "khatru-lmdb: this relaybench has no lmdb store: …"): a
// command that runs that one relay fails with it; compare, which skips it
// and goes on, says "skipped" itself. A Why that starts with the relay's
// name is a sentence of its own, given whole.
func (e *SkipError) Error() string {
	if strings.HasPrefix(e.Why, e.Name+" ") {
		return e.Why
	}
	return e.Name + ": " + e.Why
}

// Said is e's reason after "NAME will be skipped" or "NAME skipped": the
// sentence of a Why that names the relay goes on with "it" ("strfry will be
// skipped: it needs a binary you supply, …").
func (e *SkipError) Said() string {
	if rest, ok := strings.CutPrefix(e.Why, e.Name+" "); ok {
		return "it " + rest
	}
	return e.Why
}

// IsSkip reports whether err is a *SkipError.
func IsSkip(err error) bool {
	var s *SkipError
	return errors.As(err, &s)
}

// Status reports whether spec can be started, the binary it would run, the
// version, and why not when it cannot.
func Status(spec Spec, o Options) (installed bool, binPath string, version string, why string) {
	bin, err := resolveBin(spec, o)
	if err == nil && spec.Postgres {
		if perr := PostgresUsable(); perr != nil {
			return false, bin, spec.Version, perr.Error()
		}
	}
	if err != nil {
		var s *SkipError
		if errors.As(err, &s) {
			return false, "", spec.Version, s.Why
		}
		return false, "", spec.Version, err.Error()
	}
	return true, bin, spec.Version, ""
}

// FromCache is what Binary says of a binary built by Install.
const FromCache = "built in the cache"

// Binary says which executable spec would run and where it comes from:
// "relaybench itself", "command template", "--bin", "--bin-dir DIR",
// "RELAYBENCH_BIN_DIR=DIR", "$ENV_VAR" or "built in the cache". A relay
// that cannot run here gives a *SkipError. The order: --bin, then the bin
// dir, then the spec's env var (binary) or the cache (go-build, cargo).
func Binary(spec Spec, o Options) (path, from string, err error) {
	return resolveBinFrom(spec, o)
}

// resolveBin finds the executable for spec, or returns a *SkipError.
func resolveBin(spec Spec, o Options) (string, error) {
	p, _, err := resolveBinFrom(spec, o)
	return p, err
}

// binDir is the bin dir in use and how it was given.
func (o Options) binDir() (dir, from string) {
	if o.BinDir != "" {
		return o.BinDir, "--bin-dir " + o.BinDir
	}
	if d := os.Getenv("RELAYBENCH_BIN_DIR"); d != "" {
		return d, "RELAYBENCH_BIN_DIR=" + d
	}
	return "", ""
}

// fromBinDir returns DIR/<name> when the bin dir has a file of that name: an
// executable gives its absolute path, anything else a *SkipError (the user
// put it there for this relay).
func fromBinDir(spec Spec, o Options) (path, from string, found bool, err error) {
	dir, from := o.binDir()
	if dir == "" {
		return "", "", false, nil
	}
	p := filepath.Join(dir, spec.Name)
	st, serr := os.Stat(p)
	if serr != nil && spec.BinOf != "" {
		p = filepath.Join(dir, spec.BinOf) // a variant: the binary of its relay
		st, serr = os.Stat(p)
	}
	if serr != nil {
		return "", "", false, nil
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return "", from, true, &SkipError{spec.Name, fmt.Sprintf("%s (from %s) is not an executable file", p, from)}
	}
	abs, aerr := filepath.Abs(p)
	if aerr != nil {
		return "", from, true, aerr
	}
	return abs, from, true, nil
}

// binName is the name a missing binary is asked for under: a variant's
// relay's (with runs saying so), as its environment variable and build are.
func binName(spec Spec) (name, runs string) {
	if spec.BinOf != "" {
		return spec.BinOf, " (it runs " + spec.BinOf + "'s)"
	}
	return spec.Name, ""
}

// noBinary is the skip of a binary relay given none, one sentence naming
// it: what it needs, how to get it (the catalog's get) and how to pass it
// ("strfry needs a binary you supply, and no package registry has it: build
// it from its source, …, then pass --bin strfry=PATH, --bin-dir DIR or set
// RELAYBENCH_STRFRY_BIN"). A variant (BinOf) is told in the name of the
// relay whose binary it runs, as its environment variable is: --bin
// orly=PATH, DIR/orly, RELAYBENCH_ORLY_BIN (its own name works for --bin
// and DIR too, but one name is said throughout).
func noBinary(spec Spec, o Options) error {
	name, _ := binName(spec)
	need := spec.Name + " needs a binary you supply"
	if spec.BinOf != "" {
		need = spec.Name + " needs " + spec.BinOf + "'s binary, which you supply"
	}
	who, how := noRegistry(spec)
	switch {
	case who == "":
	case strings.EqualFold(who, spec.Name):
		need += ", and no package registry has it"
	default:
		need += ", and no package registry has " + who
	}
	pass := fmt.Sprintf("pass --bin %s=PATH, --bin-dir DIR or set %s", name, spec.BinEnv)
	if dir, from := o.binDir(); dir != "" {
		need += fmt.Sprintf("; %s (from %s) does not exist", filepath.Join(dir, name), from)
		pass = fmt.Sprintf("put it there, pass --bin %s=PATH or set %s", name, spec.BinEnv)
	}
	if how != "" {
		pass = how + ", then " + pass
	}
	return &SkipError{spec.Name, need + ": " + pass}
}

// noRegistry splits a binary relay's get ("strfry is on no package
// registry: build it from its source, …") into the name it gives the relay
// and how to get the binary; who is "" when get says it otherwise (a
// catalog of one's own), how is then all of it.
func noRegistry(spec Spec) (who, how string) {
	if w, h, ok := strings.Cut(spec.Get, " is on no package registry: "); ok {
		return w, h
	}
	return "", spec.Get
}

func resolveBinFrom(spec Spec, o Options) (string, string, error) {
	switch spec.Kind {
	case KindSelf:
		if o.SelfBin != "" {
			return o.SelfBin, "relaybench itself", nil
		}
		if why, ok := SelfLacks[spec.Store]; ok {
			return "", "", &SkipError{spec.Name, "this relaybench has no " + spec.Store + " store: " + why}
		}
		exe, err := os.Executable()
		if err != nil {
			return "", "", fmt.Errorf("%s: cannot find the relaybench binary: %w", spec.Name, err)
		}
		return exe, "relaybench itself", nil
	case KindCommand:
		p, err := exec.LookPath(spec.cmdBin)
		if err != nil {
			return "", "", &SkipError{spec.Name, fmt.Sprintf("%s is not an executable file any more", spec.cmdBin)}
		}
		return p, "command template", nil
	}
	if spec.BinOf != "" && o.Bins[spec.Name] == "" && o.Bins[spec.BinOf] != "" {
		// A variant: --bin of the relay whose binary it runs.
		o.Bins = map[string]string{spec.Name: o.Bins[spec.BinOf]}
	}
	if p := o.Bins[spec.Name]; p != "" && spec.Kind != KindBinary {
		abs, err := filepath.Abs(p)
		return abs, "--bin", err
	}
	if o.Bins[spec.Name] == "" {
		if p, from, found, err := fromBinDir(spec, o); found {
			return p, from, err
		}
	}
	switch spec.Kind {
	case KindBinary:
		p, from := o.Bins[spec.Name], "--bin"
		if p == "" {
			p, from = os.Getenv(spec.BinEnv), "$"+spec.BinEnv
		}
		if p == "" {
			return "", "", noBinary(spec, o)
		}
		abs, err := exec.LookPath(p)
		if err != nil {
			return "", "", &SkipError{spec.Name, fmt.Sprintf("binary %s is not an executable file", p)}
		}
		abs, err = filepath.Abs(abs)
		return abs, from, err
	case KindGoBuild, KindCargo:
		dir, err := InstallDir(spec, o)
		if err != nil {
			return "", "", err
		}
		bin := filepath.Join(dir, "bin", spec.BinName)
		want, err := buildHash(spec)
		if err != nil {
			return "", "", err
		}
		stamp, _ := os.ReadFile(filepath.Join(dir, "stamp"))
		if _, err := os.Stat(bin); err != nil || string(stamp) != stampText(spec, want) {
			name, runs := binName(spec)
			why := fmt.Sprintf("not installed%s; run: relaybench relays install %s", runs, name)
			if bd, from := o.binDir(); bd != "" {
				why = fmt.Sprintf("no %s (from %s) and %s", filepath.Join(bd, name), from, why)
			}
			return "", "", &SkipError{spec.Name, why}
		}
		return bin, FromCache, nil
	}
	return "", "", fmt.Errorf("%s: unknown kind %q", spec.Name, spec.Kind)
}

func stampText(spec Spec, hash string) string {
	return "version " + spec.Version + "\ninputs " + hash + "\n"
}

// buildHash hashes everything a build depends on.
func buildHash(spec Spec) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00", spec.Kind, spec.Version, spec.Crate, spec.BinName, spec.Source)
	fmt.Fprintf(h, "%q\x00%q\x00", spec.BuildEnv, spec.CargoUpdate)
	if spec.Kind == KindGoBuild {
		files, err := sourceFiles(spec.Source)
		if err != nil {
			return "", err
		}
		for _, f := range files {
			fmt.Fprintf(h, "%s\x00%d\x00", f.name, len(f.data))
			h.Write(f.data)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

type srcFile struct {
	name string // name in the build dir
	data []byte
}

// sourceFiles returns the files of harness/relays/<source> as they must be
// laid out for the build: *.txt loses its suffix, the build-ignore line goes.
func sourceFiles(source string) ([]srcFile, error) {
	dir := path.Join("relays", source)
	entries, err := fs.ReadDir(relaySources, dir)
	if err != nil {
		return nil, fmt.Errorf("no sources for %q in the harness: %w", source, err)
	}
	var out []srcFile
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := relaySources.ReadFile(path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		name := strings.TrimSuffix(e.Name(), ".txt")
		if strings.HasSuffix(name, ".go") {
			data = []byte(strings.Replace(string(data), "//go:build ignore\n", "", 1))
		}
		out = append(out, srcFile{name, data})
	}
	return out, nil
}

// Install builds the relay called name into its cache dir and returns the
// binary's path. A previous build with the same version and inputs is
// reused. "self" and "binary" relays need no build: Install reports where
// their binary is, or a *SkipError.
func Install(ctx context.Context, name string, o Options) (string, error) {
	spec, err := Lookup(name)
	if err != nil {
		return "", err
	}
	return InstallSpec(ctx, spec, o)
}

// InstallSpec is Install for a spec that need not be in the catalog. A
// binary from --bin or the bin dir is used as it is: nothing is built.
func InstallSpec(ctx context.Context, spec Spec, o Options) (string, error) {
	if spec.Kind == KindSelf || spec.Kind == KindBinary || spec.Kind == KindCommand {
		return resolveBin(spec, o)
	}
	if bin, err := resolveBin(spec, o); err == nil {
		return bin, nil // built before with the same inputs
	}
	dir, err := InstallDir(spec, o)
	if err != nil {
		return "", err
	}
	hash, err := buildHash(spec)
	if err != nil {
		return "", err
	}
	for _, prog := range spec.Needs {
		if _, err := exec.LookPath(prog); err != nil {
			return "", fmt.Errorf("%s: the build needs %s on PATH (Debian: apt-get install -y %s)", spec.Name, prog, aptFor(prog))
		}
	}
	// Build in a fresh directory, then swap it in, so a failed or
	// interrupted build never leaves a half-built install behind.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("%s: %w", spec.Name, err)
	}
	sweepStale(filepath.Dir(dir), spec.Name+".build-")
	tmp, err := os.MkdirTemp(filepath.Dir(dir), spec.Name+".build-")
	if err != nil {
		return "", fmt.Errorf("%s: %w", spec.Name, err)
	}
	os.WriteFile(filepath.Join(tmp, ownerFile), []byte(ownerStamp()), 0o644)
	// The log lives in the build dir (so concurrent builds do not share
	// one) and moves with it: to dir/build.log, or on failure next to dir.
	logPath := filepath.Join(tmp, "build.log")
	logf, err := os.Create(logPath)
	if err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("%s: %w", spec.Name, err)
	}
	defer logf.Close()
	b := &builder{ctx: ctx, spec: spec, dir: tmp, log: logf, progress: o.Log}
	switch spec.Kind {
	case KindGoBuild:
		err = b.goBuild()
	case KindCargo:
		err = b.cargoBuild()
	}
	if err == nil {
		os.Remove(filepath.Join(tmp, ownerFile))
		err = os.WriteFile(filepath.Join(tmp, "stamp"), []byte(stampText(spec, hash)), 0o644)
	}
	if err == nil {
		os.RemoveAll(dir)
		err = os.Rename(tmp, dir)
	}
	logf.Close()
	if err != nil {
		failed := filepath.Join(filepath.Dir(dir), spec.Name+"-"+sanitize(spec.Version)+".build-failed.log")
		if os.Rename(logPath, failed) == nil {
			logPath = failed
		}
		os.RemoveAll(tmp)
		if ctx.Err() != nil {
			return "", fmt.Errorf("%s: build interrupted (log: %s)", spec.Name, logPath)
		}
		return "", fmt.Errorf("%s: build failed: %v (log: %s)", spec.Name, err, logPath)
	}
	return filepath.Join(dir, "bin", spec.BinName), nil
}

func aptFor(prog string) string {
	switch prog {
	case "protoc":
		return "protobuf-compiler"
	case "cargo":
		return "cargo (or install rustup)"
	}
	return prog
}

type builder struct {
	ctx      context.Context
	spec     Spec
	dir      string
	log      io.Writer
	progress io.Writer
}

func (b *builder) step(format string, a ...any) {
	line := fmt.Sprintf(format, a...)
	fmt.Fprintf(b.log, "### %s\n", line)
	if b.progress != nil {
		fmt.Fprintf(b.progress, "%s: %s\n", b.spec.Name, line)
	}
}

// run runs a build command in dir with output to the build log. The command
// gets its own process group, killed as a whole on cancellation.
func (b *builder) run(dir string, env []string, name string, args ...string) error {
	b.step("%s %s", name, strings.Join(args, " "))
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = b.log, b.log
	cmd.SysProcAttr = groupAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%s %s: %w", name, firstArg(args), err)
		}
		return nil
	case <-b.ctx.Done():
		killGroup(cmd.Process.Pid)
		<-done
		return b.ctx.Err()
	}
}

func firstArg(a []string) string {
	if len(a) == 0 {
		return ""
	}
	return a[0]
}

func (b *builder) goBuild() error {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("the go command is not on PATH")
	}
	files, err := sourceFiles(b.spec.Source)
	if err != nil {
		return err
	}
	src := filepath.Join(b.dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(src, f.name), f.data, 0o644); err != nil {
			return err
		}
	}
	// GOWORK=off: the cache dir must not be pulled into a workspace.
	env := append([]string{"GOWORK=off", "CGO_ENABLED=1"}, b.spec.BuildEnv...)
	return b.run(src, env, gobin, "build", "-trimpath", "-o", filepath.Join(b.dir, "bin", b.spec.BinName), ".")
}

// crateURL is where crates.io serves a crate's source.
var crateURL = "https://static.crates.io/crates/%s/%s-%s.crate"

func (b *builder) cargoBuild() error {
	cargo, err := exec.LookPath("cargo")
	if err != nil {
		return fmt.Errorf("cargo is not on PATH (install a Rust toolchain)")
	}
	url := fmt.Sprintf(crateURL, b.spec.Crate, b.spec.Crate, b.spec.Version)
	b.step("download %s", url)
	src := filepath.Join(b.dir, "src")
	if err := b.fetchCrate(url, src); err != nil {
		return err
	}
	crateDir := filepath.Join(src, b.spec.Crate+"-"+b.spec.Version)
	env := append([]string{"CARGO_TARGET_DIR=" + filepath.Join(b.dir, "target")}, b.spec.BuildEnv...)
	for _, p := range b.spec.CargoUpdate {
		if err := b.run(crateDir, env, cargo, "update", "-p", p); err != nil {
			return err
		}
	}
	if err := b.run(crateDir, env, cargo, "install", "--path", ".", "--locked", "--root", b.dir); err != nil {
		return err
	}
	return os.RemoveAll(filepath.Join(b.dir, "target"))
}

// fetchCrate downloads a .crate (a tar.gz) and unpacks it under dst.
func (b *builder) fetchCrate(url, dst string) error {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("download %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("download %s: %s", url, resp.Status)
	}
	gz, err := gzip.NewReader(resp.Body)
	if err != nil {
		return fmt.Errorf("download %s: %w", url, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("unpack %s: %w", url, err)
		}
		name := filepath.Clean(h.Name)
		if filepath.IsAbs(name) || strings.HasPrefix(name, "..") {
			return fmt.Errorf("unpack %s: bad path %q", url, h.Name)
		}
		p := filepath.Join(dst, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o755|0o644)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			f.Close()
			if err != nil {
				return err
			}
		}
	}
}
