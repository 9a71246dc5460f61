package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
)

// chromium returns the path of a Chromium-like browser; the real-browser
// test t is skipped in one line without one, and with -short.
func chromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping the real-browser test")
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	t.Skip("chromium not installed (apt-get install -y chromium): skipping the real-browser test")
	return ""
}

// runChromium runs headless Chromium on page with extra arguments and
// returns its standard output. Networking is cut off (every host resolves to
// nothing), so a page that needed the network would show it.
func runChromium(t *testing.T, bin, page string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--host-resolver-rules=MAP * ~NOTFOUND", "--user-data-dir=" + t.TempDir(), "--window-size=1280,2400"}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+page)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return stdout.Bytes()
}

// TestBrowserRendersHTML renders the HTML report in headless Chromium, keeps
// the page and its screenshot in testdata/artifacts/ (git-ignored) and
// checks that the screenshot is a real picture and that every chart is an
// SVG element of the rendered DOM.
func TestBrowserRendersHTML(t *testing.T) {
	bin := chromium(t)
	dir, err := filepath.Abs(filepath.Join("testdata", "artifacts"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		files  []*results.File
		charts int
		ab     bool // files[0] is the baseline, files[1] the candidate
	}{
		{"single", []*results.File{singleFile()}, 10, false},
		{"compare", []*results.File{compareFile(3, 1)}, 10, false},
		{"spread", []*results.File{spreadFile()}, 14, false},
		// As compare, each chart with both sides' runs.
		{"ab", []*results.File{compareFile(5, 1), compareFile(5, 1.5)}, 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			var err error
			if tc.ab {
				err = CompareHTML(&b, tc.files[:1], tc.files[1:], Options{}, nil)
			} else {
				err = HTML(&b, tc.files, Options{})
			}
			if err != nil {
				t.Fatal(err)
			}
			page := filepath.Join(dir, "report-"+tc.name+".html")
			shot := filepath.Join(dir, "report-"+tc.name+".png")
			if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			_ = os.Remove(shot)
			runChromium(t, bin, page, "--screenshot="+shot)
			f, err := os.Open(shot)
			if err != nil {
				t.Fatalf("no screenshot: %v", err)
			}
			defer f.Close()
			img, err := png.Decode(f)
			if err != nil {
				t.Fatalf("screenshot: %v", err)
			}
			bd := img.Bounds()
			if bd.Dx() < 1000 || bd.Dy() < 2000 {
				t.Fatalf("screenshot is %dx%d", bd.Dx(), bd.Dy())
			}
			// A page that rendered shows text, tables and charts: a fair
			// share of non-white pixels and more than a few colours.
			var ink, total int
			colours := map[uint32]bool{}
			for y := bd.Min.Y; y < bd.Max.Y; y += 3 {
				for x := bd.Min.X; x < bd.Max.X; x += 3 {
					r, g, b, _ := img.At(x, y).RGBA()
					total++
					if r < 0xe000 || g < 0xe000 || b < 0xe000 {
						ink++
					}
					colours[(r>>12)<<8|(g>>12)<<4|b>>12] = true
				}
			}
			if frac := float64(ink) / float64(total); frac < 0.03 {
				t.Errorf("screenshot nearly blank: %.1f%% ink", frac*100)
			}
			if len(colours) < 20 {
				t.Errorf("screenshot has only %d colours", len(colours))
			}

			dom := string(runChromium(t, bin, page, "--dump-dom"))
			if n := strings.Count(dom, "<svg"); n != tc.charts {
				t.Errorf("rendered DOM has %d <svg> elements, want %d", n, tc.charts)
			}
			if n := strings.Count(dom, "<path"); n < 10*tc.charts {
				t.Errorf("rendered DOM has only %d <path> elements for %d charts", n, tc.charts)
			}
			want := []string{"Publishing", "What was run", "Verdict: "}
			if tc.ab {
				want = []string{"Baseline vs candidate", "Ratio", "khatru-badger (candidate, 5 runs)"}
			}
			for _, w := range want {
				if !strings.Contains(dom, w) {
					t.Errorf("rendered DOM lacks %q", w)
				}
			}
			t.Logf("screenshot: %s", shot)
		})
	}
}

// TestBrowserPageWidth renders pages whose relay strings are long and
// unbroken (a name, software and version as a relay may send them) in
// headless Chromium 1400 px wide and checks that nothing widens the page:
// a wide table scrolls inside its box, a long header value wraps.
func TestBrowserPageWidth(t *testing.T) {
	bin := chromium(t)
	long := func(scale float64) *results.File {
		f := compareFile(0, scale)
		for i := range f.Runs {
			r := &f.Runs[i].Relay
			r.Name += "-" + strings.Repeat("n", 120)
			r.Software = "<b>" + strings.Repeat("s", 300) + "</b>"
			r.Version = "v1-" + strings.Repeat("v", 200)
		}
		return f
	}
	// The test's copy of the page measures itself; the report has no script.
	const probe = `<script>document.body.setAttribute("data-width", document.documentElement.scrollWidth + "/" + document.documentElement.clientWidth)</script>`
	widthRE := regexp.MustCompile(`data-width="(\d+)/(\d+)"`)
	for _, ab := range []bool{false, true} {
		var b bytes.Buffer
		var err error
		if ab {
			err = CompareHTML(&b, []*results.File{long(1)}, []*results.File{long(1.5)}, Options{}, nil)
		} else {
			err = HTML(&b, []*results.File{long(1)}, Options{})
		}
		if err != nil {
			t.Fatal(err)
		}
		page := filepath.Join(t.TempDir(), "wide.html")
		if err := os.WriteFile(page, []byte(strings.Replace(b.String(), "</body>", probe+"</body>", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		m := widthRE.FindStringSubmatch(string(runChromium(t, bin, page, "--window-size=1400,2400", "--dump-dom")))
		if m == nil {
			t.Fatalf("ab=%v: the page did not report its width", ab)
		}
		scroll, client := atoi(t, m[1]), atoi(t, m[2])
		if client < 1000 || scroll > client {
			t.Errorf("ab=%v: the page is %d px wide in a %d px window: a table or a header value pushes it wider", ab, scroll, client)
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
