package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// demo is a module whose package ok passes with skips and whose package
// bad fails.
var demo = map[string]string{
	"go.mod": "module demo\n\ngo 1.26\n",
	"ok/ok_test.go": `package ok

import "testing"

func TestPasses(t *testing.T) {}

func TestNeedsADatabase(t *testing.T) {
	t.Log("looking for a database")
	t.Skip("no database: set DEMO_DSN")
}

func TestAlsoNeedsADatabase(t *testing.T) { t.Skip("no database: set DEMO_DSN") }

func TestParts(t *testing.T) {
	t.Run("done", func(t *testing.T) {})
	t.Run("later", func(t *testing.T) { t.SkipNow() })
}
`,
	"bad/bad_test.go": `package bad

import "testing"

func TestFails(t *testing.T) { t.Error("the detail of the failure") }

func TestPasses(t *testing.T) {}
`,
}

func writeDemo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range demo {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReportSummarisesSkipsAndKeepsTheExitStatus(t *testing.T) {
	dir := writeDemo(t)
	t.Setenv("GOWORK", "off")
	t.Setenv("GOFLAGS", "-buildvcs=false")

	var out, errOut bytes.Buffer
	if code := run(dir, []string{"-count=1", "./ok/"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d for a passing package\n%s%s", code, out.String(), errOut.String())
	}
	got := out.String()
	for _, want := range []string{
		"ok  \tdemo/ok\t",
		"SKIPPED 3 test(s):",
		"  2 × no database: set DEMO_DSN\n      (demo/ok.TestNeedsADatabase, demo/ok.TestAlsoNeedsADatabase)",
		"  1 × (no reason given)\n      (demo/ok.TestParts/later)",
		"\n3 passed, 0 failed, 3 skipped\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "looking for a database") || strings.Contains(got, "=== RUN") {
		t.Errorf("the report shows the output of tests that did not fail:\n%s", got)
	}

	out.Reset()
	if code := run(dir, []string{"-count=1", "./..."}, &out, &errOut); code != 1 {
		t.Fatalf("exit %d with a failing package, want 1\n%s", code, out.String())
	}
	got = out.String()
	for _, want := range []string{"--- FAIL: TestFails", "the detail of the failure", "FAIL\tdemo/bad", "\n4 passed, 1 failed, 3 skipped\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q:\n%s", want, got)
		}
	}
}
