package main

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the child binary exit if the test process dies (for
// example on a test timeout), so a failed run leaves no simulator behind.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
