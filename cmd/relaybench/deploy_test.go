package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"
)

// The Kubernetes Indexed Job of deploy/k8s: the fields that make it a
// segmented test, and its relaybench command line, which must parse and
// pass relaybench's flag checks for the last segment.
func TestDeployIndexedJob(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "deploy", "k8s", "relaybench-job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	field := func(re string) string {
		t.Helper()
		m := regexp.MustCompile(`(?m)` + re).FindStringSubmatch(doc)
		if m == nil {
			t.Fatalf("the Job has no %s", re)
		}
		return m[1]
	}
	if field(`^\s+completionMode:\s*(\S+)`) != "Indexed" {
		t.Error("completionMode is not Indexed: pods would not get a completion index")
	}
	n, par := field(`^\s+completions:\s*(\d+)`), field(`^\s+parallelism:\s*(\d+)`)
	segs := field(`name: SEGMENTS\s+value:\s*"(\d+)"`)
	if n != par || n != segs {
		t.Errorf("completions %s, parallelism %s and SEGMENTS %s must be equal", n, par, segs)
	}
	if field(`name: SEGMENT_INDEX.*\s+valueFrom:\s+fieldRef:\s+fieldPath:\s*(\S+)`) != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Error("SEGMENT_INDEX is not the pod's completion index")
	}
	if field(`^\s+restartPolicy:\s*(\S+)`) != "Never" || field(`^\s+backoffLimit:\s*(\d+)`) != "0" {
		t.Error("a failed segment must not be retried (restartPolicy Never, backoffLimit 0): a retry would publish its share again, late")
	}
	count, _ := strconv.Atoi(segs)
	env := map[string]string{ // as Kubernetes sets them for the last pod
		"SEGMENTS":      segs,
		"SEGMENT_INDEX": strconv.Itoa(count - 1),
		"START_AT":      time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		"RELAY_URL":     field(`name: RELAY_URL\s+value:\s*(\S+)`),
	}
	block := regexp.MustCompile(`(?ms)^\s+args:\n((?:\s+(?:- .*|#.*)\n)+)`).FindStringSubmatch(doc)
	if block == nil {
		t.Fatal("the Job's container has no args")
	}
	var args []string
	for _, l := range strings.Split(block[1], "\n") {
		l = strings.TrimSpace(l)
		if a, ok := strings.CutPrefix(l, "- "); ok {
			a, _, _ = strings.Cut(a, " #")
			a = regexp.MustCompile(`\$\((\w+)\)`).ReplaceAllStringFunc(strings.Trim(a, `"`), func(v string) string {
				if val, ok := env[v[2:len(v)-1]]; ok {
					return val
				}
				t.Errorf("args use $(%s), which the container's env does not define", v[2:len(v)-1])
				return v
			})
			args = append(args, a)
		}
	}
	for _, want := range []string{"--segment=" + env["SEGMENT_INDEX"] + "/" + segs, "--start-at=" + env["START_AT"], "--json=-"} {
		if !contains(args, want) {
			t.Errorf("args %q lack %s", args, want)
		}
	}
	if err := parseOnly(t, args); err != nil {
		t.Errorf("relaybench %s: %v", strings.Join(args, " "), err)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// parseOnly parses args as relaybench would and runs its flag checks
// (AfterApply), without running the command.
func parseOnly(t *testing.T, args []string) error {
	t.Helper()
	var root struct{ Globals }
	opts := []kong.Option{kong.Name("relaybench"), cliVars(), kong.Bind(&Globals{Ctx: context.Background()}),
		kong.Exit(func(int) {})}
	for _, c := range commands {
		opts = append(opts, kong.DynamicCommand(c.name, c.help, c.group, c.cmd))
	}
	parser, err := kong.New(&root, opts...)
	if err != nil {
		t.Fatal(err)
	}
	_, err = parser.Parse(normalizeArgs(args))
	return err
}

// The manifests pass a Kubernetes schema validator and the compose file
// Docker Compose's own check, when those tools are installed (offline both).
func TestDeployFilesValidate(t *testing.T) {
	deploy := filepath.Join("..", "..", "deploy")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ran := 0
	if kv, err := exec.LookPath("kubernetes-validate"); err == nil {
		ran++
		out, err := exec.CommandContext(ctx, kv, "--strict", filepath.Join(deploy, "k8s", "relaybench-job.yaml"), filepath.Join(deploy, "k8s", "relay.yaml")).CombinedOutput()
		if err != nil {
			t.Errorf("kubernetes-validate: %v\n%s", err, out)
		}
	}
	compose := [][]string{{"docker", "compose"}, {"docker-compose"}}
	for _, c := range compose {
		if _, err := exec.LookPath(c[0]); err != nil {
			continue
		}
		if err := exec.CommandContext(ctx, c[0], append(c[1:], "version")...).Run(); err != nil {
			continue // e.g. a docker CLI without the compose plugin
		}
		ran++
		out, err := exec.CommandContext(ctx, c[0], append(c[1:], "-f", filepath.Join(deploy, "compose.yaml"), "config", "-q")...).CombinedOutput()
		if err != nil {
			t.Errorf("%s config: %v\n%s", strings.Join(c, " "), err, out)
		}
		break
	}
	if ran < 2 {
		t.Skipf("validated with %d of 2 tools: kubernetes-validate (pip) and docker compose / docker-compose (apt) check the deploy files when installed", ran)
	}
}
