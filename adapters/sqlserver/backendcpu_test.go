package sqlserver

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// clockTicks is the kernel's USER_HZ, the unit of /proc's CPU times on
// every Linux this runs on.
const clockTicks = 100

// backendCPU sums the CPU time, in seconds, of the database server's
// processes that serve this test process's connections to port, when the
// server runs on this machine as PostgreSQL's backends (Babelfish). A
// backend names its client's address in its process title, and this
// process's sockets name their local ports, so the sum counts no other
// client's work on a shared server. ok is false where nothing is found
// (SQL Server elsewhere, or no /proc).
func backendCPU(port int) (seconds float64, backends int, ok bool) {
	ports := clientPorts(port)
	if len(ports) == 0 {
		return 0, 0, false
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		cmd, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(cmd, []byte("postgres: ")) {
			continue
		}
		open := bytes.LastIndexByte(cmd, '(')
		shut := bytes.IndexByte(cmd[max(open, 0):], ')')
		if open < 0 || shut < 0 {
			continue
		}
		client, err := strconv.Atoi(string(cmd[open+1 : open+shut]))
		if err != nil || !ports[client] {
			continue
		}
		if s, err := procCPU(filepath.Dir(p)); err == nil {
			seconds += s
			backends++
		}
	}
	return seconds, backends, backends > 0
}

// procCPU reads a process's user and system time from its stat file,
// whose second field (the command) may hold spaces but ends at the last ')'.
func procCPU(dir string) (float64, error) {
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return 0, err
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("short stat in %s", dir)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("stat times in %s", dir)
	}
	return float64(utime+stime) / clockTicks, nil
}

// clientPorts returns the local ports of this process's TCP connections
// to remote port.
func clientPorts(remote int) map[int]bool {
	inodes := map[string]bool{}
	fds, _ := filepath.Glob("/proc/self/fd/*")
	for _, fd := range fds {
		if link, err := os.Readlink(fd); err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	ports := map[int]bool{}
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || !inodes[fields[9]] {
				continue
			}
			local, peer := hexPort(fields[1]), hexPort(fields[2])
			if peer == remote && local > 0 {
				ports[local] = true
			}
		}
		_ = f.Close()
	}
	return ports
}

// hexPort reads the port of a /proc/net/tcp address ("0100007F:0599").
func hexPort(addr string) int {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return 0
	}
	p, err := strconv.ParseInt(addr[i+1:], 16, 32)
	if err != nil {
		return 0
	}
	return int(p)
}
