package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// pgDatabase is the database relays get in a private cluster.
const pgDatabase = "relaybench"

// Postgres is a private PostgreSQL cluster: initdb'd into a temporary
// directory with trust authentication, listening on a private 127.0.0.1 port
// and a Unix socket inside that directory. Close stops it and removes the
// directory.
type Postgres struct {
	Dir     string // cluster root: data/
	Sock    string // Unix socket directory (short: socket paths are limited to 107 bytes)
	Port    int
	URL     string // postgres://postgres@127.0.0.1:PORT/relaybench?sslmode=disable
	LogFile string
	PID     int // the postmaster; its process group holds all backends

	binDir string
	cred   *syscall.Credential
	cmd    *exec.Cmd
	exited chan struct{}
}

// PostgresBinDir finds the PostgreSQL server binaries: the newest
// /usr/lib/postgresql/*/bin holding initdb and postgres.
func PostgresBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgVersion(dirs[i]) > pgVersion(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errors.New("PostgreSQL server binaries not found in /usr/lib/postgresql/*/bin (Debian: apt-get install -y postgresql)")
}

func pgVersion(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// PostgresUsable reports why a private cluster cannot run here: no server
// binaries, or running as root without a "postgres" user. nil when it can.
func PostgresUsable() error {
	if _, err := PostgresBinDir(); err != nil {
		return err
	}
	if os.Geteuid() == 0 {
		if _, err := user.Lookup("postgres"); err != nil {
			return errNoPostgresUser
		}
	}
	return nil
}

var errNoPostgresUser = errors.New("PostgreSQL refuses to run as root and there is no 'postgres' system user to run it as (create one: useradd --system postgres)")

// StartPostgres creates and starts a private cluster under parent, logging
// to logFile, with an empty database called "relaybench". The server
// processes are pinned to cpus when it is not empty. As root, the server
// runs as the "postgres" system user (PostgreSQL refuses to run as root).
func StartPostgres(ctx context.Context, parent, logFile, cpus string) (*Postgres, error) {
	binDir, err := PostgresBinDir()
	if err != nil {
		return nil, err
	}
	p := &Postgres{binDir: binDir, LogFile: logFile}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, errNoPostgresUser
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	if p.Dir, err = os.MkdirTemp(parent, "relaybench-pg-"); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			p.Close(context.Background())
		}
	}()
	sockRoot := os.TempDir()
	if len(sockRoot) > 60 {
		sockRoot = "/tmp"
	}
	sweepStale(sockRoot, "rbpg-") // left by a relaybench killed outright
	if p.Sock, err = os.MkdirTemp(sockRoot, "rbpg-"); err != nil {
		return nil, fmt.Errorf("postgres: socket dir: %w", err)
	}
	os.WriteFile(filepath.Join(p.Sock, ownerFile), []byte(ownerStamp()), 0o644)
	if p.cred != nil {
		// The server user must reach its directory through the parents.
		if err := os.Chmod(p.Dir, 0o711); err != nil {
			return nil, fmt.Errorf("postgres: %w", err)
		}
		for _, d := range []string{p.Dir, p.Sock} {
			if err := os.Chown(d, int(p.cred.Uid), int(p.cred.Gid)); err != nil {
				return nil, fmt.Errorf("postgres: chown %s: %w", d, err)
			}
		}
		if err := checkTraversable(parent, p.cred); err != nil {
			return nil, err
		}
	}
	logf, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	defer logf.Close()

	initdb := exec.CommandContext(ctx, filepath.Join(binDir, "initdb"), "-D", filepath.Join(p.Dir, "data"),
		"-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.Stdout, initdb.Stderr = logf, logf
	initdb.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: p.cred}
	if err := initdb.Run(); err != nil {
		return nil, fmt.Errorf("postgres: initdb failed: %v%s", err, logTail(logFile, 3))
	}

	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	p.Port = port
	p.cmd = exec.Command(filepath.Join(binDir, "postgres"), "-D", filepath.Join(p.Dir, "data"),
		"-p", strconv.Itoa(port), "-k", p.Sock,
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200",
		"-c", "log_min_messages=warning", "-c", "logging_collector=off")
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: p.cred, Pdeathsig: syscall.SIGKILL}
	if err := startPinned(p.cmd, cpus); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	p.PID = p.cmd.Process.Pid
	p.exited = make(chan struct{})
	go func() { p.cmd.Wait(); close(p.exited) }()

	// Ready when the database can be created.
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := p.psql(ctx, "postgres", "CREATE DATABASE "+pgDatabase)
		if err == nil {
			break
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("postgres: server exited at start%s", logTail(logFile, 3))
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("postgres: not ready within 30s: %v (log: %s)", err, logFile)
		}
	}
	p.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", port, pgDatabase)
	ok = true
	return p, nil
}

// checkTraversable fails when the server user cannot reach dir.
func checkTraversable(dir string, cred *syscall.Credential) error {
	for d := dir; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
		if st.Mode().Perm()&0o001 == 0 {
			if s, ok := st.Sys().(*syscall.Stat_t); !ok || s.Uid != cred.Uid {
				return fmt.Errorf("postgres: the postgres user cannot enter %s (mode %v): choose another data root", d, st.Mode().Perm())
			}
		}
		if d == "/" || d == "." {
			return nil
		}
	}
}

// psql runs one SQL statement through the Unix socket and returns its output.
func (p *Postgres) psqlOut(ctx context.Context, db, sql string) (string, error) {
	psql := filepath.Join(p.binDir, "psql")
	if !isExec(psql) {
		psql = "psql"
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, psql, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1",
		"-h", p.Sock, "-p", strconv.Itoa(p.Port), "-U", "postgres", "-d", db, "-c", sql)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s: %v: %s", sql, err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

func (p *Postgres) psql(ctx context.Context, db, sql string) error {
	_, err := p.psqlOut(ctx, db, sql)
	return err
}

// DatabaseSize is pg_database_size of the relay's database, in bytes.
func (p *Postgres) DatabaseSize(ctx context.Context) (int64, error) {
	out, err := p.psqlOut(ctx, "postgres", "SELECT pg_database_size('"+pgDatabase+"')")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(out, 10, 64)
}

// ResetDatabase drops and recreates the relay's database. The relay must
// be stopped.
func (p *Postgres) ResetDatabase(ctx context.Context) error {
	if err := p.psql(ctx, "postgres", "DROP DATABASE IF EXISTS "+pgDatabase+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if err := p.psql(ctx, "postgres", "CREATE DATABASE "+pgDatabase); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// Close stops the server (fast shutdown, SIGKILL to its group after 10 s or
// when ctx ends) and removes the cluster directory. It may be called twice.
func (p *Postgres) Close(ctx context.Context) error {
	if p.cmd != nil && p.cmd.Process != nil {
		// Backends call setsid(): they are the postmaster's children but
		// not in its process group. Fast shutdown (SIGINT) stops them all;
		// whatever survives the postmaster is killed one by one.
		var kids []int
		for _, st := range treeOf(allStats(), []int{p.PID}, nil) {
			if st.pid != p.PID {
				kids = append(kids, st.pid)
			}
		}
		stopGroup(ctx, p.PID, syscall.SIGINT, 10*time.Second, p.exited)
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			left := 0
			for _, pid := range kids {
				if st, ok := readStat(pid); ok && st.state != 'Z' && st.state != 'X' {
					left++
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			if left == 0 {
				break
			}
		}
		p.cmd = nil
	}
	if p.Sock != "" {
		os.RemoveAll(p.Sock)
		p.Sock = ""
	}
	if p.Dir != "" {
		if err := os.RemoveAll(p.Dir); err != nil {
			return fmt.Errorf("postgres: remove %s: %w", p.Dir, err)
		}
		p.Dir = ""
	}
	return nil
}
