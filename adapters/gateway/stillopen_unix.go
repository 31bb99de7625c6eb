//go:build unix

package gateway

import (
	"net"
	"syscall"
)

// stillOpen tells whether an idle connection can carry another exchange: it
// peeks without waiting. Nothing to read means open; end of stream means the
// gateway (or its frontend) closed it while idle; bytes mean an answer
// nobody asked for. A connection it cannot inspect counts as open.
func stillOpen(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	var buf [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		open = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
		return true
	})
	return err == nil && open
}
