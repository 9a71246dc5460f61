package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"

	"github.com/relaybench/relaybench/harness"
	"github.com/relaybench/relaybench/runner"
)

// Relay selection: what compare --relays, --relay and relays start accept.
// An element is a ws:// URL, a catalog name (the built-in catalog with the
// --catalog files over it), or NAME=COMMAND: a relay started from a command
// template (see harness.CommandSpec).

// validate checks --bin-dir and --catalog before anything runs.
func (f relaySourceFlags) validate() error {
	if f.BinDir != "" {
		st, err := os.Stat(f.BinDir)
		if err != nil {
			return fmt.Errorf("--bin-dir %s: %v", f.BinDir, pathErr(err))
		}
		if !st.IsDir() {
			return fmt.Errorf("--bin-dir %s: not a folder", f.BinDir)
		}
	}
	for name, p := range f.Bin {
		if err := harness.ValidName(name); err != nil {
			return fmt.Errorf("--bin %s=%s: %v", name, p, err)
		}
		if err := checkBinFile(p); err != nil {
			return fmt.Errorf("--bin %s=%s: %v", name, p, err)
		}
	}
	_, err := f.catalog()
	return err
}

// checkBinFile checks a --bin path before anything runs: an executable
// regular file (a bare name may also be one on PATH, as for a relay whose
// binary is looked up there), so that a typo does not cost the relays
// before it their runs.
func checkBinFile(p string) error {
	if p == "" {
		return errors.New("no path given")
	}
	st, err := os.Stat(p)
	if err != nil {
		if !strings.ContainsRune(p, os.PathSeparator) {
			if _, lerr := exec.LookPath(p); lerr == nil {
				return nil
			}
		}
		return pathErr(err)
	}
	switch {
	case !st.Mode().IsRegular():
		return errors.New("not a regular file")
	case st.Mode().Perm()&0o111 == 0:
		return errors.New("not executable")
	}
	return nil
}

// catalog is the built-in catalog with the --catalog files laid over it.
func (f relaySourceFlags) catalog() (harness.Specs, error) {
	specs, err := harness.LoadCatalog(f.Catalog...)
	if err != nil && strings.HasPrefix(err.Error(), "catalog ") {
		return nil, errors.New("--" + err.Error()) // "--catalog FILE: line 3: unknown key relay.colour"
	}
	return specs, err
}

// options are the harness options these flags ask for.
func (f relaySourceFlags) options() harness.Options {
	return harness.Options{Bins: f.Bin, BinDir: f.BinDir}
}

// relayRef is one relay named on the command line: a URL to reach, or a
// spec to start.
type relayRef struct {
	Given string // as written
	URL   string // a relay relaybench does not start
	Spec  harness.Spec
}

// name is how the relay appears in messages and results.
func (r relayRef) name() string {
	if r.URL != "" {
		return r.URL
	}
	return r.Spec.Name
}

// notes say, in the results, where a relay's setup comes from when it is
// not the built-in catalog.
func (r relayRef) notes() []string {
	switch o := r.Spec.Origin(); {
	case r.URL != "" || o == "":
		return nil
	case o == "command template":
		return []string{"started from a command template (no pinned version): " + r.Spec.Command()}
	default:
		return []string{fmt.Sprintf("catalog entry from %s (version %s)", o, r.Spec.Version)}
	}
}

// splitRelays splits --relays values on the commas outside quotes, so that
// a command template may hold a comma in quotes ('a,b' or "a,b") or after a
// backslash. Blanks around elements go.
func splitRelays(values []string) []string {
	var out []string
	for _, v := range values {
		var cur strings.Builder
		var quote byte
		for i := 0; i < len(v); i++ {
			c := v[i]
			switch {
			case quote != 0:
				if c == quote {
					quote = 0
				} else if c == '\\' && quote == '"' && i+1 < len(v) {
					cur.WriteByte(c)
					i++
					c = v[i]
				}
			case c == '\'' || c == '"':
				quote = c
			case c == '\\' && i+1 < len(v):
				cur.WriteByte(c)
				i++
				c = v[i]
			case c == ',':
				out = append(out, strings.TrimSpace(cur.String()))
				cur.Reset()
				continue
			}
			cur.WriteByte(c)
		}
		out = append(out, strings.TrimSpace(cur.String()))
	}
	return out
}

// resolveRelays turns relay references into URLs and specs. NAME=COMMAND
// defines relay NAME for this invocation (over a catalog entry of that
// name); NAME alone may then refer to it again. configs are the
// --relay-config files by relay name. Every error is a usage error.
func resolveRelays(refs []string, cat harness.Specs, configs map[string]string) ([]relayRef, error) {
	defined := map[string]harness.Spec{}
	given := map[string]string{}
	for _, ref := range refs {
		name, command, ok := harness.SplitTemplate(ref)
		if !ok {
			continue
		}
		if prev, dup := given[name]; dup && prev != command {
			return nil, fmt.Errorf("relay %s is given two commands: %q and %q", name, prev, command)
		}
		spec, err := harness.CommandSpec(name, command, configs[name])
		if err != nil {
			return nil, err
		}
		defined[name], given[name] = spec, command
	}
	var names []string
	for name := range configs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, ok := defined[name]; !ok {
			return nil, fmt.Errorf("--relay-config %s=%s: no relay %s=COMMAND is given", name, configs[name], name)
		}
	}
	var out []relayRef
	for i, ref := range refs {
		if ref == "" {
			return nil, fmt.Errorf("empty relay name in the list")
		}
		if name, _, ok := harness.SplitTemplate(ref); ok {
			out = append(out, relayRef{Given: ref, Spec: defined[name]})
			continue
		}
		if strings.Contains(ref, "://") {
			out = append(out, relayRef{Given: ref, URL: ref})
			continue
		}
		if spec, ok := defined[ref]; ok {
			out = append(out, relayRef{Given: ref, Spec: spec})
			continue
		}
		spec, err := cat.Lookup(ref)
		if err != nil {
			if i > 0 {
				if _, _, ok := harness.SplitTemplate(refs[i-1]); ok {
					return nil, fmt.Errorf("%v (a comma inside a command template must be quoted: 'a,b')", err)
				}
			}
			return nil, err
		}
		out = append(out, relayRef{Given: ref, Spec: spec})
	}
	return out, nil
}

// relayRefs resolves compare's --relays.
func (c *compareCmd) relayRefs() ([]relayRef, error) {
	cat, err := c.catalog()
	if err != nil {
		return nil, err
	}
	refs, err := resolveRelays(splitRelays(c.Relays), cat, c.RelayConfig)
	if err != nil {
		return nil, err
	}
	return refs, checkURLs("--relays", refs, c.IOperate)
}

// relayRef resolves --relay: a URL, a catalog name, a command template, or
// (none given) the embedded relay with --store.
func (f targetFlags) relayRef() (relayRef, error) {
	cat, err := f.catalog()
	if err != nil {
		return relayRef{}, err
	}
	ref := f.Relay
	if ref == "" {
		if len(f.RelayConfig) > 0 {
			return relayRef{}, fmt.Errorf("--relay-config goes with --relay NAME=COMMAND")
		}
		ref = "khatru-" + f.Store
		if f.Store == "sink" {
			ref = "sink"
		}
	}
	refs, err := resolveRelays([]string{ref}, cat, f.RelayConfig)
	if err != nil {
		return relayRef{}, err
	}
	return refs[0], checkURLs("--relay", refs, f.IOperate)
}

// checkURLs refuses, as a usage error before any work, a relay URL of refs
// that is no ws:// or wss:// URL, or is outside this machine without
// --i-operate-this-relay (runner.CheckTarget, the one check), naming flag.
func checkURLs(flag string, refs []relayRef, operated bool) error {
	for _, r := range refs {
		if r.URL == "" {
			continue
		}
		if err := runner.CheckTarget(r.URL, operated); err != nil {
			return fmt.Errorf("%s: %v", flag, err)
		}
	}
	return nil
}

// relayRef resolves the relay relays start is asked for.
func (c *relaysStartCmd) relayRef() (relayRef, error) {
	cat, err := c.catalog()
	if err != nil {
		return relayRef{}, err
	}
	refs, err := resolveRelays([]string{c.Name}, cat, c.RelayConfig)
	if err != nil {
		return relayRef{}, err
	}
	if refs[0].URL != "" {
		return relayRef{}, fmt.Errorf("%s: relays start starts a catalog relay or NAME=COMMAND, not a URL", c.Name)
	}
	return refs[0], nil
}
