//go:build !linux

package gatewaysim

// newKernelTimer returns a Go timer: there is no timerfd here.
func newKernelTimer() kernelTimer { return newGoTimer() }
