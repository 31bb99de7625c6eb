package e2e

import (
	"net"
	"os"
	"regexp"
	"testing"
	"time"
)

// haFreeAddr returns a loopback address with a port that was free a moment
// ago. The processes bind it themselves, so there is a small window in
// which another program could take it; a clash fails the start loudly.
func haFreeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// haAnyPort is the --listen of an instance whose port the kernel picks;
// haServeAddr reads the port back from the instance's log. A port that
// haFreeAddr found free is free only until its listener closes: an
// outgoing connection of another test may take it before the child binds
// it. haFreeAddr stays for what must know its address before it starts (a
// simulator named in a registry, HAProxy's front, an instance restarted on
// its address).
const haAnyPort = "127.0.0.1:0"

// haServingURL finds the address in the serve command's "serving" line, in
// the text or the JSON log format.
var haServingURL = regexp.MustCompile(`submission-manager serving"?,?\s*(?:url=|"url":")http://([^\s"]+)`)

// haServeAddr waits for p's "serving" line and returns the address it
// serves on.
func haServeAddr(t *testing.T, p *haProcess) string {
	t.Helper()
	deadline := time.Now().Add(haStartWait)
	for {
		if data, err := os.ReadFile(p.logPath); err == nil {
			if m := haServingURL.FindSubmatch(data); m != nil {
				return string(m[1])
			}
		}
		if !p.alive() {
			t.Fatalf("%s exited (%v) before it served:\n%s", p.name, p.err, haTail(p.logPath, 30))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s logged no serving address within %s:\n%s", p.name, haStartWait, haTail(p.logPath, 30))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
