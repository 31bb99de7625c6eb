// Command testreport runs go test with -json and prints what go test would
// print without it (each package's result, and the output of failing
// tests), then a summary of the skipped tests, grouped by reason, and the
// counts. A suite that skipped (no SQL Server, no Chromium, no HAProxy) so
// never passes for one that ran. It exits with go test's status.
//
//	go run ./internal/testreport [-go GO] [go test flags and packages]
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

func main() {
	os.Exit(run("", os.Args[1:], os.Stdout, os.Stderr))
}

// run runs go test -json with args in dir ("" for the current directory)
// and reports on stdout; it returns the process's exit status.
func run(dir string, args []string, stdout, stderr io.Writer) int {
	// testreport's one flag, -go, comes first; every other argument is go test's.
	goCmd := "go"
	if len(args) >= 2 && args[0] == "-go" {
		goCmd, args = args[1], args[2:]
	}
	cmd := exec.Command(goCmd, append([]string{"test", "-json"}, args...)...)
	cmd.Dir = dir
	cmd.Stderr = stderr
	events, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(stderr, "testreport:", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "testreport:", err)
		return 2
	}
	r := newReport(stdout)
	readErr := r.read(events)
	waitErr := cmd.Wait()
	r.summary()
	var exit *exec.ExitError
	switch {
	case readErr != nil:
		fmt.Fprintln(stderr, "testreport: reading go test's output:", readErr)
		return 2
	case errors.As(waitErr, &exit):
		return exit.ExitCode()
	case waitErr != nil:
		fmt.Fprintln(stderr, "testreport:", waitErr)
		return 2
	case r.failed > 0:
		return 1
	}
	return 0
}
