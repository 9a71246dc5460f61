package live

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// browser is headless Chromium driven over the DevTools protocol (its
// remote-debugging WebSocket), with one page attached.
type browser struct {
	cmd     *exec.Cmd
	conn    *websocket.Conn
	session string
	mu      sync.Mutex
	id      int
}

// chromiumBin is Debian's chromium (or another Chromium-like browser), "" if none.
func chromiumBin() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// openBrowser starts headless Chromium (its own process group, killed
// when the test ends), with every host but 127.0.0.1 unreachable, and
// opens url in a page.
func openBrowser(t *testing.T, bin, url string) *browser {
	t.Helper()
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--user-data-dir="+t.TempDir(),
		"--remote-debugging-port=0", "--window-size=1280,2000", "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &browser{cmd: cmd}
	t.Cleanup(b.close)
	wsURL := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "DevTools listening on "); ok {
				wsURL <- u
			}
		}
	}()
	select {
	case u := <-wsURL:
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if b.conn, _, err = websocket.Dial(ctx, u, nil); err != nil {
			t.Fatalf("devtools: %v", err)
		}
		b.conn.SetReadLimit(64 << 20)
	case <-time.After(60 * time.Second): // hang guard
		t.Fatal("chromium never said where its DevTools listen")
	}
	var target struct{ TargetID string }
	b.call(t, "", "Target.createTarget", map[string]any{"url": url}, &target)
	var att struct{ SessionID string }
	b.call(t, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att)
	b.session = att.SessionID
	return b
}

func (b *browser) close() {
	if b.conn != nil {
		b.conn.CloseNow()
	}
	if b.cmd.Process != nil {
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		_ = b.cmd.Wait()
	}
}

// call sends one DevTools command and reads until its answer (events in
// between are skipped), with a 30 s hang guard.
func (b *browser) call(t *testing.T, session, method string, params, result any) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.id++
	msg := map[string]any{"id": b.id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	req, _ := json.Marshal(msg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.conn.Write(ctx, websocket.MessageText, req); err != nil {
		t.Fatalf("devtools %s: %v", method, err)
	}
	for {
		_, data, err := b.conn.Read(ctx)
		if err != nil {
			t.Fatalf("devtools %s: %v", method, err)
		}
		var ans struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct{ Message string }
		}
		if json.Unmarshal(data, &ans) != nil || ans.ID != b.id {
			continue
		}
		if ans.Error != nil {
			t.Fatalf("devtools %s: %s", method, ans.Error.Message)
		}
		if result != nil {
			if err := json.Unmarshal(ans.Result, result); err != nil {
				t.Fatalf("devtools %s: %v", method, err)
			}
		}
		return
	}
}

// eval evaluates a JavaScript expression in the page and decodes its
// JSON-able value into v.
func (b *browser) eval(t *testing.T, expr string, v any) {
	t.Helper()
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct{ Text string } `json:"exceptionDetails"`
	}
	b.call(t, b.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &res)
	if res.ExceptionDetails != nil {
		t.Fatalf("page: %s: %s", expr, res.ExceptionDetails.Text)
	}
	if err := json.Unmarshal(res.Result.Value, v); err != nil {
		t.Fatalf("page: %s: %v (%s)", expr, err, res.Result.Value)
	}
}

// pageFigures is what the page shows.
type pageFigures struct {
	Status   string     `json:"status"`
	Accepted string     `json:"accepted"`
	Phase    string     `json:"phase"`
	Progress string     `json:"progress"` // the phase's done / total and what they count ("now: together (4s)")
	Rows     [][]string `json:"rows"`
	Report   bool       `json:"report"`
	Canvas   int        `json:"canvas"`
	Found    string     `json:"found"` // faults found as the verifier found them
}

// A page still being parsed (or replaced) may hold some of the elements
// and not the others yet: it reads as loading until every one is there.
const readPage = `(() => {
  if (["status", "accepted", "phase", "progress", "found"].some(id => !document.getElementById(id))) return {status: "loading", rows: []};
  const t = id => document.getElementById(id).textContent;
  return {status: t("status"), accepted: t("accepted"), phase: t("phase"), progress: t("progress"), found: t("found"),
    rows: [...document.querySelectorAll("#phases tr")].map(tr => [...tr.children].map(td => td.textContent)),
    report: !!document.getElementById("reportframe"),
    canvas: [...document.querySelectorAll("canvas")].filter(c => c.width > 0).length};
})()`

func (b *browser) figures(t *testing.T) pageFigures {
	t.Helper()
	var f pageFigures
	b.eval(t, readPage, &f)
	return f
}
