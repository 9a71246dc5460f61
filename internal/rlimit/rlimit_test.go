package rlimit

import (
	"strings"
	"testing"
)

func TestFilesRaisesSoftToHard(t *testing.T) {
	soft, hard := Files()
	if soft == 0 {
		t.Skip("no RLIMIT_NOFILE here")
	}
	if soft != hard {
		t.Errorf("soft limit %d after raising, hard %d", soft, hard)
	}
}

func TestCheck(t *testing.T) {
	if err := check(100, 1024, 1024); err != nil {
		t.Errorf("100 connections under 1024: %v", err)
	}
	if err := check(100, 0, 0); err != nil {
		t.Errorf("unknown limit: %v", err)
	}
	err := check(10000, 1024, 4096)
	if err == nil {
		t.Fatal("10000 connections under 1024: no error")
	}
	msg := err.Error()
	// counts with thousands separators, as everywhere; the command as typed
	for _, want := range []string{"limit is 1,024 (hard limit 4,096", "about 10,064 open files", "ulimit -n 10064`", "10,000 connections"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("not one line: %q", msg)
	}
}
