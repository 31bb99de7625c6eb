package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output events
}

// skip is one skipped test and why.
type skip struct {
	pkg, test, reason string
}

// report turns the events into go test's usual output and counts.
type report struct {
	w                       io.Writer
	passed, failed, skipped int
	skips                   []skip
	// tests holds each running test's output, by package and name.
	tests map[[2]string][]string
	// pkgs holds each package's own output until the package ends.
	pkgs map[string][]string
}

func newReport(w io.Writer) *report {
	return &report{w: w, tests: map[[2]string][]string{}, pkgs: map[string][]string{}}
}

// read consumes the event stream; a line that is not an event passes
// through as it is.
func (r *report) read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if line := sc.Bytes(); len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintln(r.w, sc.Text())
			continue
		}
		r.event(e)
	}
	return sc.Err()
}

func (r *report) event(e event) {
	key := [2]string{e.Package, e.Test}
	switch {
	case e.Action == "build-output":
		fmt.Fprint(r.w, e.Output)
	case e.Action == "output" && e.Test != "":
		r.tests[key] = append(r.tests[key], e.Output)
	case e.Action == "output":
		r.pkgs[e.Package] = append(r.pkgs[e.Package], e.Output)
	case e.Test != "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
		r.testEnded(key, e.Action)
	case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
		r.packageEnded(e.Package, e.Action)
	}
}

func (r *report) testEnded(key [2]string, action string) {
	out := r.tests[key]
	delete(r.tests, key)
	switch action {
	case "pass":
		r.passed++
	case "fail":
		r.failed++
		fmt.Fprint(r.w, strings.Join(out, ""))
	case "skip":
		r.skipped++
		r.skips = append(r.skips, skip{pkg: key[0], test: key[1], reason: skipReason(out)})
	}
}

// packageEnded prints the package's result line as go test does; for a
// failed package also everything it printed outside its tests, and the
// output of tests that never ended (a panic or a timeout).
func (r *report) packageEnded(pkg, action string) {
	out := r.pkgs[pkg]
	delete(r.pkgs, pkg)
	if action == "fail" {
		for key, lines := range r.tests {
			if key[0] == pkg {
				fmt.Fprint(r.w, strings.Join(lines, ""))
				delete(r.tests, key)
			}
		}
		fmt.Fprint(r.w, strings.Join(out, ""))
		return
	}
	for _, line := range out {
		if strings.HasPrefix(line, "ok ") || strings.HasPrefix(line, "?   ") {
			fmt.Fprint(r.w, line)
		}
	}
}

// framing matches the lines go test writes around a test's own output.
var framing = regexp.MustCompile(`^\s*(=== (RUN|PAUSE|CONT|NAME)|--- (SKIP|PASS|FAIL))`)

// logPosition is the "file_test.go:12: " that starts t.Skip's message.
var logPosition = regexp.MustCompile(`^[\w.-]+\.go:\d+: `)

// skipReason returns the last line a skipped test printed, which is its
// t.Skip message, without the file position.
func skipReason(out []string) string {
	for _, line := range slices.Backward(out) {
		line = strings.TrimSpace(line)
		if line != "" && !framing.MatchString(line) {
			return logPosition.ReplaceAllString(line, "")
		}
	}
	return "(no reason given)"
}

// summary prints the skipped tests grouped by reason, then the counts on a
// line of their own.
func (r *report) summary() {
	if len(r.skips) > 0 {
		byReason := map[string][]skip{}
		var reasons []string
		for _, s := range r.skips {
			if byReason[s.reason] == nil {
				reasons = append(reasons, s.reason)
			}
			byReason[s.reason] = append(byReason[s.reason], s)
		}
		fmt.Fprintf(r.w, "\nSKIPPED %d test(s):\n", len(r.skips))
		for _, reason := range reasons {
			group := byReason[reason]
			var names []string
			for _, s := range group[:min(len(group), 3)] {
				names = append(names, shortPackage(s.pkg)+"."+s.test)
			}
			if len(group) > 3 {
				names = append(names, fmt.Sprintf("and %d more", len(group)-3))
			}
			fmt.Fprintf(r.w, "  %d × %s\n      (%s)\n", len(group), reason, strings.Join(names, ", "))
		}
	}
	fmt.Fprintf(r.w, "\n%d passed, %d failed, %d skipped\n", r.passed, r.failed, r.skipped)
}

// shortPackage drops the module path shared by every package of the repository.
func shortPackage(pkg string) string {
	if i := strings.Index(pkg, "/submission-manager/"); i >= 0 {
		return pkg[i+len("/submission-manager/"):]
	}
	return pkg
}
