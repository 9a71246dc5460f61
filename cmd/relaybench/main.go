// Command relaybench benchmarks Nostr relays. It is a thin CLI over the
// packages of this module: each subcommand lives in its own file and
// registers itself with register().
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/alecthomas/kong"

	"github.com/relaybench/relaybench/internal/safe"
	"github.com/relaybench/relaybench/internal/sysinfo"
	"github.com/relaybench/relaybench/judge"
)

type command struct {
	name, help, group string
	cmd               any
}

var commands []command

// register adds a subcommand. Call it from an init function in the file that
// defines the command. cmd must be a pointer to a kong command struct with a
// Run(*Globals) error method.
func register(name, help string, cmd any) {
	commands = append(commands, command{name: name, help: help, cmd: cmd})
}

// Globals are the flags every subcommand accepts, and the context it runs in.
type Globals struct {
	Verbose bool             `short:"v" help:"Verbose output."`
	Version kong.VersionFlag `help:"Print the version and exit."`

	// Ctx is cancelled on the first Ctrl-C (SIGINT) or SIGTERM: commands stop
	// measuring, print and save what they have, stop child processes and
	// return. A second signal exits at once.
	Ctx context.Context `kong:"-"`
	// Args is the command line as typed, after the program name.
	Args []string `kong:"-"`
}

// exitError carries an exit code with an error. shown: the error is a
// verdict the summary already ended with on a stream the user reads with
// standard error (see verdictShown), so main does not repeat it.
type exitError struct {
	code  int
	err   error
	shown bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// withCode wraps err so that main exits with code.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// cliVars are the values interpolated into the commands' help: the
// version line and --workloads' list of the declared workloads.
func cliVars() kong.Vars {
	return kong.Vars{"version": sysinfo.VersionLine(), "workloads": workloadsHelp()}
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	ctx, stop := signalContext()
	defer stop()
	forgetBeforeFirst()
	saidSkips = nil // compare's, told in this run's first lines only

	globals := &Globals{Ctx: ctx, Args: slices.Clone(args)}
	var root struct {
		Globals
	}
	registerDeclared()
	sort.SliceStable(commands, func(i, j int) bool { return commands[i].name < commands[j].name })
	opts := []kong.Option{
		kong.Name("relaybench"),
		kong.Description("A benchmark suite for Nostr relays that tells the truth: every figure measured, checked against what the relay accepted, and explained."),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		cliVars(),
		kong.Bind(globals),
		kong.Exit(func(code int) { panic(kongExit(code)) }),
	}
	for _, c := range commands {
		opts = append(opts, kong.DynamicCommand(c.name, c.help, c.group, c.cmd))
	}
	parser, err := kong.New(&root, opts...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "relaybench: %v\n", err)
		return judge.Usage
	}
	return parseAndRun(parser, normalizeArgs(args), globals, &root.Globals)
}

type kongExit int

func parseAndRun(parser *kong.Kong, args []string, globals *Globals, parsed *Globals) (code int) {
	defer func() {
		if r := recover(); r != nil {
			if c, ok := r.(kongExit); ok {
				code = int(c)
				return
			}
			panic(r)
		}
	}()
	kctx, err := parser.Parse(args)
	if err != nil && readerGone(err) {
		return judge.Passed // --help into `| head -1`: its reader left, nothing was wrong
	}
	if err != nil {
		if msg := unknownCommand(parser, args); msg != "" {
			err = errors.New(msg)
		} else if msg := missingValue(err); msg != "" {
			err = errors.New(msg)
		} else if msg := unknownFlag(err); msg != "" {
			err = errors.New(msg)
		}
		fmt.Fprintf(os.Stderr, "relaybench: %v\n", err)
		return judge.Usage
	}
	globals.Verbose = parsed.Verbose
	fullSummary = parsed.Verbose
	if err := kctx.Run(globals); err != nil {
		var ee *exitError
		isExit := errors.As(err, &ee)
		if !isExit && readerGone(err) && globals.Ctx.Err() == nil {
			// `relays list | head -1`: an output closed by its reader
			// is not an error of the command (see signalContext).
			return judge.Passed
		}
		if (!isExit || !ee.shown) && !interruptedQuietly(globals.Ctx, err) {
			fmt.Fprintf(os.Stderr, "relaybench: %s\n", oneLine(err))
		}
		if isExit {
			return ee.code
		}
		if globals.Ctx.Err() != nil {
			return saveInterrupted(globals.Ctx, err)
		}
		if errors.Is(err, context.Canceled) {
			return judge.Interrupted
		}
		return judge.Error
	}
	if globals.Ctx.Err() != nil && signalStops.Load() == nil && !servingRelay.Load() {
		return judge.Interrupted // interrupted: results were printed and saved
	}
	return judge.Passed
}

// unknownCommand names a first argument that is no command, with the
// commands there are ("" when the first argument is a command or a flag):
// kong's own "unexpected argument X" does not say X was taken for one.
func unknownCommand(parser *kong.Kong, args []string) string {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return ""
	}
	var names []string
	for _, c := range parser.Model.Children {
		if c.Name == args[0] || slices.Contains(c.Aliases, args[0]) {
			return ""
		}
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	return fmt.Sprintf("unknown command %q: the commands are %s (relaybench --help)", safe.Line(args[0]), strings.Join(names, ", "))
}

// unknownFlag is kong's "unknown flag --bogus" with where the flags are
// listed: "… (relaybench run --help lists the flags)" ("" for any other
// error).
func unknownFlag(err error) string {
	if !strings.HasPrefix(err.Error(), "unknown flag") {
		return ""
	}
	cmd := []string{"relaybench"}
	var perr *kong.ParseError
	if errors.As(err, &perr) && perr.Context != nil {
		for _, tr := range perr.Context.Path {
			if tr.Command != nil {
				cmd = append(cmd, tr.Command.Name)
			}
		}
	}
	return fmt.Sprintf("%s (%s --help lists the flags)", safe.Line(err.Error()), strings.Join(cmd, " "))
}

// oneLine keeps an error message on one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// servingRelay is set by "relay serve": a signal then stops a relay, it does
// not interrupt a measurement, and the command exits 0 once the relay has
// stopped; relayStopSignal names the signal ("interrupt", "terminated").
var (
	servingRelay    atomic.Bool
	relayStopSignal atomic.Pointer[string]
)

// signalStops is set by a command whose documented way to stop is Ctrl-C
// ("relays start"): the first signal prints this line, not "interrupted",
// and a command that then ends without error exits 0, not 130.
var signalStops atomic.Pointer[string]

// signalContext returns a context cancelled on the first SIGINT/SIGTERM; a
// second signal exits the process at once with code 130. Standard output
// or error closed by its reader (`relaybench compare | head -5`) is not
// an interrupt: the command runs to its end, saves its results and stops
// the relays it started, its writes to the closed output fail (EPIPE) and
// are skipped, and the exit status is the verdict's — whenever the reader
// went. SIGPIPE is caught (and dropped) so that such a write does not kill
// the process; a SIGPIPE from a connection to a relay is left to the
// connection (its write fails).
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	// Never read: a full channel drops the signal, and a caught SIGPIPE
	// leaves the write its EPIPE. (Ignoring it instead would pass SIG_IGN
	// on to the relays relaybench starts.)
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	go func() {
		n := 0
		for sig := range ch {
			if endServing(sig) {
				continue // after the run (web.go): the live view stops, the run's status stands
			}
			n++
			if n == 1 {
				if servingRelay.Load() {
					// "relay serve": a signal is how a server stops, not an
					// interruption; it says "stopped (interrupt)" once stopped.
					name := sig.String()
					relayStopSignal.Store(&name)
				} else if line := signalStops.Load(); line != nil {
					fmt.Fprintf(os.Stderr, "\n%s\n", *line)
				} else {
					fmt.Fprintln(os.Stderr, "\nrelaybench: interrupted: stopping, saving what was measured (Ctrl-C again to quit at once)")
				}
				cancel()
				continue
			}
			runExitHooks()
			os.Exit(judge.Interrupted)
		}
	}()
	return ctx, func() { signal.Stop(ch); signal.Stop(pipe); cancel() }
}

// exitHooks run before a forced exit (second Ctrl-C) so that child processes
// are never orphaned. Code that starts a child process adds a hook and removes
// it when the child has stopped.
var (
	hookMu    sync.Mutex
	exitHooks = map[int]func(){}
	nextHook  int
)

func addExitHook(f func()) (remove func()) {
	hookMu.Lock()
	defer hookMu.Unlock()
	nextHook++
	id := nextHook
	exitHooks[id] = f
	return func() { hookMu.Lock(); delete(exitHooks, id); hookMu.Unlock() }
}

func runExitHooks() {
	hookMu.Lock()
	defer hookMu.Unlock()
	for _, f := range exitHooks {
		f()
	}
}

// normalizeArgs accepts the reference suite's single-dash long flags
// (-relay, -events, …) by rewriting them to kong's double-dash form. Short
// flags (-v) and negative numbers are left alone; everything after "--" too.
// A negative number or duration after a long flag is joined to it
// (--events -5 → --events=-5), so that it reaches the flag's range check
// instead of being taken for a short flag.
func normalizeArgs(args []string) []string {
	switch {
	case len(args) == 0:
		return []string{"--help"} // no command: the usage
	case args[0] == "help":
		return append(slices.Clone(args[1:]), "--help") // relaybench help [COMMAND]
	}
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && !isNumber(a[1:]) {
			name := a[1:]
			if eq := strings.IndexByte(name, '='); eq >= 0 {
				name = name[:eq]
			}
			if len(name) > 1 {
				a = "-" + a
			}
		}
		if strings.HasPrefix(a, "--") && len(a) > 2 && !strings.Contains(a, "=") &&
			i+1 < len(args) && len(args[i+1]) > 1 && args[i+1][0] == '-' && isNumber(args[i+1][1:]) {
			a += "=" + args[i+1]
			i++
		}
		out = append(out, a)
	}
	return out
}

// isNumber reports whether s is a number or a duration (5, 1.5, 2s, 1m30s).
func isNumber(s string) bool {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return s != "" && s[0] == '.' && isNumber("0"+s)
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return true
	}
	_, err := time.ParseDuration(s)
	return err == nil
}
