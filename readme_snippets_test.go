package idempay_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// readmeImports maps the package names the README's code uses to their
// import paths. A snippet that uses a package missing here fails to compile,
// which is the signal to add it.
var readmeImports = map[string]string{
	"context":     "context",
	"errors":      "errors",
	"fmt":         "fmt",
	"json":        "encoding/json",
	"http":        "net/http",
	"httptest":    "net/http/httptest",
	"os":          "os",
	"slog":        "log/slog",
	"strings":     "strings",
	"testing":     "testing",
	"time":        "time",
	"idempay":     "github.com/idempay/idempay",
	"idempaytest": "github.com/idempay/idempay/idempaytest",
	"fakes":       "github.com/idempay/idempay/idempaytest/fakes",
	"stripetest":  "github.com/idempay/idempay/idempaytest/stripetest",
	"omisetest":   "github.com/idempay/idempay/idempaytest/omisetest",
	"filestore":   "github.com/idempay/idempay/keystore/filestore",
	"memstore":    "github.com/idempay/idempay/keystore/memstore",
	"postgres":    "github.com/idempay/idempay/keystore/postgres",
	"redis":       "github.com/idempay/idempay/keystore/redis",
	"guard":       "github.com/idempay/idempay/guard",
	"webhook":     "github.com/idempay/idempay/webhook",
	"stripe":      "github.com/idempay/idempay/provider/stripe",
	"omise":       "github.com/idempay/idempay/provider/omise",
	"twoc2p":      "github.com/idempay/idempay/provider/twoc2p",
}

// TestReadmeCodeCompiles: every Go block of the README, put together in one
// file with the imports it names, compiles against this module, so that what
// a reader copies from the entry page works. Each block is a set of
// declarations (functions, types), never a fragment, so it can be checked
// as written. The file is handed to the go command through -overlay: nothing
// is written into the source tree.
func TestReadmeCodeCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the README's code with the go command")
	}
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goCmd); err != nil {
		if goCmd, err = exec.LookPath("go"); err != nil {
			t.Skip("no go command to compile the README's code with")
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlocks(string(readme))
	if len(blocks) < 4 {
		t.Fatalf("README.md has %d Go blocks; expected the BFF, its handler, its test, refunds and webhooks", len(blocks))
	}
	src := snippetFile(strings.Join(blocks, "\n\n"))

	dir := t.TempDir()
	file := filepath.Join(dir, "snippets.go")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	virtual := filepath.Join(root, "internal", "readmesnippets", "snippets.go")
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {virtual: file}})
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goCmd, "build", "-overlay="+overlayFile, "./internal/readmesnippets")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README's Go code does not compile: %v\n%s\n--- the file built from it:\n%s", err, out, numbered(src))
	}
}

// TestReadmeIsAnEntryPage: the README stays a page a user reads first;
// details live beside the code they describe.
func TestReadmeIsAnEntryPage(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(readme, []byte("\n")); n > 500 {
		t.Errorf("README.md has %d lines; keep it under 500 and move details beside their code", n)
	}
	for _, must := range []string{"go get github.com/idempay/idempay", "go run ./examples/quickstart",
		"stripetest", "FastRetry", "guard.New", "filestore.Open"} {
		if !bytes.Contains(readme, []byte(must)) {
			t.Errorf("README.md does not mention %q", must)
		}
	}
}

var goFence = regexp.MustCompile("(?s)```go\n(.*?)```")

func goBlocks(md string) []string {
	var out []string
	for _, m := range goFence.FindAllStringSubmatch(md, -1) {
		out = append(out, m[1])
	}
	return out
}

// snippetFile wraps code in a package clause and the imports it uses.
func snippetFile(code string) string {
	used := map[string]bool{}
	for name := range readmeImports {
		if regexp.MustCompile(`(^|[^A-Za-z0-9_.])` + name + `\.`).MatchString(stripComments(code)) {
			used[name] = true
		}
	}
	var paths []string
	for name := range used {
		paths = append(paths, readmeImports[name])
	}
	sort.Strings(paths)
	var b strings.Builder
	b.WriteString("package readmesnippets\n\nimport (\n")
	for _, p := range paths {
		fmt.Fprintf(&b, "\t%q\n", p)
	}
	b.WriteString(")\n\n")
	b.WriteString(code)
	return b.String()
}

var lineComment = regexp.MustCompile(`//[^\n]*`)

func stripComments(code string) string { return lineComment.ReplaceAllString(code, "") }

func numbered(src string) string {
	lines := strings.Split(src, "\n")
	for i := range lines {
		lines[i] = fmt.Sprintf("%4d  %s", i+1, lines[i])
	}
	return strings.Join(lines, "\n")
}
