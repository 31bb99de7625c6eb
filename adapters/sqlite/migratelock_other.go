//go:build !unix

package sqlite

import "os"

// tryLockFile cannot lock here: without flock, concurrent first starts on
// one new file are not serialised on this platform; start one instance
// first (or run `submission-manager migrate up`) before the others.
func tryLockFile(*os.File) (bool, error) { return true, nil }

func unlockFile(*os.File) error { return nil }
