package archtest

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/submissionmanager/submission-manager"

// pkg is the part of `go list -json` output the rules need.
type pkg struct {
	ImportPath   string
	Dir          string
	GoFiles      []string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Deps         []string
}

// listPackages runs `go list -deps=false -json` over patterns in the module root.
func listPackages(t *testing.T, patterns ...string) []pkg {
	t.Helper()
	args := append([]string{"list", "-e", "-json"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", patterns, err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatalf("go list %v found no package", patterns)
	}
	return pkgs
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// The dependency rule, as the README's room table states it: each room of
// the module may import only the rooms listed for it, and its own packages.
// A room is a top-level folder or, where the table splits one, a folder
// inside it (app/executor); a package belongs to the longest room its path
// starts with. "adapters/*" stands for every adapter: each may import its
// own packages, never another adapter's. The rule points inwards: adapters
// and the application layer depend on ports, ports on core, core on nothing
// of ours; only cmd wires rooms together (cmd and e2e are not ruled).
var rule = map[string][]string{
	"core":           {},
	"ports":          {"core"},
	"app/changes":    {"ports"},
	"app/clockctx":   {"ports"},
	"app/intake":     {"core", "ports"},
	"app/protection": {"core", "ports"},
	"app/executor":   {"core", "ports", "app/protection", "app/changes", "app/clockctx"},
	"app/leader":     {"core", "ports", "app/clockctx"},
	"app/access":     {"core", "ports"},
	"app/watch":      {"core", "ports", "app/changes"},
	"app/history":    {"core", "ports"},
	"app/instances":  {"core", "ports", "app/clockctx"},
	"fakes":          {"core", "ports"},
	"adapters/*":     {"core", "ports", "api", "db"},
	"api":            {},
	"db":             {},
	"internal":       {},
}

// unruled are the top-level rooms the rule leaves out on purpose.
var unruled = map[string]bool{"cmd": true, "e2e": true}

// roomOf returns the room of a package of this module, "" for a package
// outside it. An adapter's room is its own folder ("adapters/sqlite").
func roomOf(importPath string) string {
	rest, ok := strings.CutPrefix(importPath, module+"/")
	if !ok {
		return ""
	}
	if r := adapterRoot(importPath); r != "" {
		return r
	}
	best := ""
	for r := range rule {
		if (rest == r || strings.HasPrefix(rest, r+"/")) && len(r) > len(best) {
			best = r
		}
	}
	if best == "" {
		best, _, _ = strings.Cut(rest, "/")
	}
	return best
}

// mayImport returns the rooms the rule lets room own import, and whether
// the rule covers own.
func mayImport(own string) ([]string, bool) {
	if strings.HasPrefix(own, "adapters/") {
		own = "adapters/*"
	}
	may, ok := rule[own]
	return may, ok
}

// allowed reports whether a package of room own may depend on dep.
func allowed(own string, may []string, dep string) bool {
	r := roomOf(dep)
	if r == "" || r == own {
		return true
	}
	for _, m := range may {
		if r == m || strings.HasPrefix(r, m+"/") {
			return true
		}
	}
	return false
}

// reach returns the rooms room own may depend on transitively: what the
// rule lets it import, and what those rooms may import in turn (a room that
// imports ports depends on core through it).
func reach(may []string) []string {
	out := slices.Clone(may)
	for i := 0; i < len(out); i++ {
		next, _ := mayImport(out[i])
		for _, r := range next {
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// TestDependencyRule checks every package against the rule above: its own
// imports against its room's list, and everything it depends on
// transitively against what that list reaches, so that a detour through a
// permitted room cannot smuggle in a forbidden one.
func TestDependencyRule(t *testing.T) {
	for _, p := range listPackages(t, "./...") {
		own := roomOf(p.ImportPath)
		may, ruled := mayImport(own)
		if !ruled {
			continue
		}
		for _, dep := range p.Imports {
			if !allowed(own, may, dep) {
				t.Errorf("%s imports %s: %s may import only %v", p.ImportPath, dep, own, may)
			}
		}
		far := reach(may)
		for _, dep := range p.Deps {
			if !allowed(own, far, dep) {
				t.Errorf("%s depends on %s: %s may reach only %v", p.ImportPath, dep, own, far)
			}
		}
	}
}

// testDouble reports whether a test may import importPath beyond what its
// room may: the fakes (fakes/*), each a double of a port that runs that
// port's conformance suite; the suites themselves (ports/*test), which
// drive an implementation through its port; and the gateway simulator
// (adapters/gatewaysim), the one adapter that is a double as well: a real
// HTTP peer that stands for the gateway on the far side of
// adapters/gateway's client. Nothing else of adapters or app is: a test
// that needs another room's behaviour takes a double of its port, and a
// test of rooms working together is an end-to-end test (e2e/, not ruled).
func testDouble(importPath string) bool {
	rest, ok := strings.CutPrefix(importPath, module+"/")
	if !ok {
		return false
	}
	if rest == "fakes" || strings.HasPrefix(rest, "fakes/") || roomOf(importPath) == "adapters/gatewaysim" {
		return true
	}
	suite, ok := strings.CutPrefix(rest, "ports/")
	return ok && !strings.Contains(suite, "/") && strings.HasSuffix(suite, "test")
}

// TestTestsFollowTheRule checks the imports of every package's tests (its
// own and its external test package) against the rule: a test may import
// what its room may, plus the test doubles and suites (see testDouble);
// the core's tests get neither, as the core depends on nothing of ours.
// The packages a test imports are themselves checked by
// TestDependencyRule, so its direct imports are enough.
func TestTestsFollowTheRule(t *testing.T) {
	for _, p := range listPackages(t, "./...") {
		own := roomOf(p.ImportPath)
		may, ruled := mayImport(own)
		if !ruled {
			continue
		}
		doubles := own != "core"
		for _, dep := range append(slices.Clone(p.TestImports), p.XTestImports...) {
			if allowed(own, may, dep) || (doubles && testDouble(dep)) {
				continue
			}
			also := " (and no test double)"
			if doubles {
				also = ", the fakes, the suites and adapters/gatewaysim"
			}
			t.Errorf("a test of %s imports %s: a test of %s may import only %v%s", p.ImportPath, dep, own, may, also)
		}
	}
}

// TestRuleCoversEveryRoom fails when a new top-level room appears that the
// rule does not mention, so that the README's picture and the check move
// together.
func TestRuleCoversEveryRoom(t *testing.T) {
	for _, p := range listPackages(t, "./...") {
		r := roomOf(p.ImportPath)
		top, _, _ := strings.Cut(r, "/")
		if _, ok := mayImport(r); !ok && !unruled[top] {
			t.Errorf("room %s (package %s) is not in the dependency rule", r, p.ImportPath)
		}
	}
}

// TestSuitesUseNoImplementation checks the conformance suites' test code as
// well: a suite that imported an adapter or a fake would test one
// implementation through another.
func TestSuitesUseNoImplementation(t *testing.T) {
	for _, p := range listPackages(t, "./ports/...") {
		for _, imp := range append(p.Imports, append(p.TestImports, p.XTestImports...)...) {
			if r := roomOf(imp); r != "" && r != "core" && r != "ports" {
				t.Errorf("%s imports %s: a conformance suite depends on core and ports only", p.ImportPath, imp)
			}
		}
	}
}

// TestCoreIsPure checks that the core does no I/O: the standard packages
// that reach the outside world are as forbidden as our own outer rooms.
func TestCoreIsPure(t *testing.T) {
	// fmt and friends import os themselves, so only the core's own imports
	// are checked against these.
	forbiddenStd := map[string]bool{"database/sql": true, "net/http": true, "net": true,
		"os": true, "os/exec": true, "io/ioutil": true, "syscall": true, "io/fs": true, "context": true}
	for _, p := range listPackages(t, "./core/...") {
		for _, imp := range p.Imports {
			if forbiddenStd[imp] {
				t.Errorf("%s imports %s: the core does no I/O", p.ImportPath, imp)
			}
		}
	}
}

// TestNoWallClockBelowCmd checks that no non-test file of core, app or
// fakes calls time.Now, time.Since, time.After, time.Sleep or time.NewTimer:
// they take time from the clock port, so every rule and every schedule is
// testable with a fake clock.
func TestNoWallClockBelowCmd(t *testing.T) {
	banned := map[string]bool{"Now": true, "Since": true, "Until": true, "After": true,
		"AfterFunc": true, "Sleep": true, "NewTimer": true, "NewTicker": true, "Tick": true}
	for _, p := range listPackages(t, "./core/...", "./app/...", "./fakes/...") {
		if strings.HasSuffix(p.ImportPath, "/clocktest") {
			continue // the fake clock names these only to implement ports.Clock
		}
		for _, name := range p.GoFiles {
			path := filepath.Join(p.Dir, name)
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			timeName := ""
			for _, imp := range f.Imports {
				if imp.Path.Value == `"time"` {
					timeName = "time"
					if imp.Name != nil {
						timeName = imp.Name.Name
					}
				}
			}
			if timeName == "" {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for fn := range banned {
				if strings.Contains(string(src), timeName+"."+fn+"(") {
					t.Errorf("%s calls %s.%s: time must come from ports.Clock", path, timeName, fn)
				}
			}
		}
	}
}

// adapterRoot returns "adapters/<name>" for a package inside an adapter.
func adapterRoot(importPath string) string {
	rest, ok := strings.CutPrefix(importPath, module+"/adapters/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return "adapters/" + name
}

// TestTestDoublesAreTheFakesSuitesAndSimulator pins what testDouble lets
// through, so that widening it is a visible change.
func TestTestDoublesAreTheFakesSuitesAndSimulator(t *testing.T) {
	for path, want := range map[string]bool{
		"fakes/memstore":           true,
		"fakes/gatewayfake":        true,
		"fakes/tracefake":          true,
		"ports/storetest":          true,
		"ports/gatewaytest":        true,
		"adapters/gatewaysim":      true,
		"ports":                    false,
		"adapters/gateway":         false,
		"adapters/sysclock":        false,
		"app/intake":               false,
		"cmd/submission-manager":   false,
		"ports/gatewaytest/nested": false,
	} {
		if got := testDouble(module + "/" + path); got != want {
			t.Errorf("testDouble(%s) = %v, want %v", path, got, want)
		}
	}
	if testDouble("github.com/other/fakes/memstore") {
		t.Error("a package outside the module counts as a test double")
	}
}
