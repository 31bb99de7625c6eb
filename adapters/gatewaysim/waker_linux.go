package gatewaysim

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// timerFD is a timerfd on the monotonic clock, non-blocking, so that its
// os.File waits in the runtime's poller: the poller's epoll_wait returns
// when the timer fires, at the kernel timer's resolution, instead of at
// the next millisecond of its own timeout.
type timerFD struct {
	fd   int
	file *os.File
}

// newKernelTimer returns a timerfd, or a Go timer if none can be made.
func newKernelTimer() kernelTimer {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return newGoTimer()
	}
	return &timerFD{fd: fd, file: os.NewFile(uintptr(fd), "gatewaysim-timerfd")}
}

// arm sets the timer relative to now: the deadline was taken from Go's
// monotonic clock, which is the same clock. A zero or negative d would
// disarm a timerfd, so the earliest it fires is a nanosecond from now.
func (t *timerFD) arm(d time.Duration) {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(max(d, time.Nanosecond)))}
	// Settime fails only for an invalid fd or spec, and neither is: the
	// spec is positive, and the waker never arms a closed timer.
	_ = unix.TimerfdSettime(t.fd, 0, &spec, nil)
}

// wait reads the timer's expiration count, which blocks (in the poller)
// until it fired.
func (t *timerFD) wait() bool {
	var expirations [8]byte
	_, err := t.file.Read(expirations[:])
	return err == nil
}

// close makes a waiting read return, with an error.
func (t *timerFD) close() { _ = t.file.Close() }
