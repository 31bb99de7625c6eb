package archtest

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/submissionmanager/submission-manager"

// pkg is the part of `go list -json` output the rules need.
type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
	Deps       []string
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

// TestCoreIsPure checks that core packages reach the outside world only
// through ports: no adapters, generated API code, SQL, HTTP, OS or exec.
func TestCoreIsPure(t *testing.T) {
	// Rooms of this module the core must not reach, even transitively.
	forbiddenRooms := []string{module + "/adapters", module + "/api", module + "/cmd", module + "/db"}
	// Standard packages that do I/O; fmt and friends import os themselves, so
	// only the core's own imports are checked against these.
	forbiddenStd := map[string]bool{"database/sql": true, "net/http": true, "net": true,
		"os": true, "os/exec": true, "io/ioutil": true, "syscall": true, "io/fs": true}
	for _, p := range listPackages(t, "./core/...") {
		for _, dep := range append(p.Imports, p.Deps...) {
			for _, room := range forbiddenRooms {
				if dep == room || strings.HasPrefix(dep, room+"/") {
					t.Errorf("%s depends on %s: the core must stay pure", p.ImportPath, dep)
				}
			}
		}
		for _, imp := range p.Imports {
			if forbiddenStd[imp] {
				t.Errorf("%s imports %s: the core does no I/O", p.ImportPath, imp)
			}
		}
	}
}

// TestCoreReadsNoWallClock checks that no non-test core file calls
// time.Now, time.Since, time.After, time.Sleep or time.NewTimer: the core
// takes time from the clock port so every rule is testable with a fake clock.
func TestCoreReadsNoWallClock(t *testing.T) {
	banned := map[string]bool{"Now": true, "Since": true, "Until": true, "After": true,
		"AfterFunc": true, "Sleep": true, "NewTimer": true, "NewTicker": true, "Tick": true}
	for _, p := range listPackages(t, "./core/...") {
		if strings.HasSuffix(p.ImportPath, "/clocktest") {
			continue // the fake clock for tests wraps no wall clock either, but may name these
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
					t.Errorf("%s calls %s.%s: core time must come from ports.Clock", path, timeName, fn)
				}
			}
		}
	}
}

// TestPortsDependOnlyOnCore checks that ports are interfaces in core terms.
func TestPortsDependOnlyOnCore(t *testing.T) {
	for _, p := range listPackages(t, "./ports") {
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module+"/") && imp != module+"/core" {
				t.Errorf("%s imports %s: ports may import only core", p.ImportPath, imp)
			}
		}
	}
}

// TestAdaptersNeverImportEachOther checks that each adapter depends on
// ports, core, api and db but never on another adapter; cmd wires them.
func TestAdaptersNeverImportEachOther(t *testing.T) {
	for _, p := range listPackages(t, "./adapters/...") {
		own := adapterRoot(p.ImportPath)
		for _, dep := range append(p.Imports, p.Deps...) {
			if other := adapterRoot(dep); other != "" && other != own {
				t.Errorf("%s depends on adapter %s: adapters never import each other", p.ImportPath, other)
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
