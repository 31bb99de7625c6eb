package app

import (
	"errors"
	"flag"
	"strings"
)

// keysFlag is a comma-separated list of keys. A value that holds no key at
// all (",", " , ") is refused rather than read as "no keys": no keys means
// an open API, and a typo in a secret's templating must not open it.
type keysFlag []string

var _ flag.Value = (*keysFlag)(nil)

func (k *keysFlag) String() string {
	if k == nil || len(*k) == 0 {
		return ""
	}
	return "<redacted>" // flag defaults and errors must never print a key
}

func (k *keysFlag) Set(s string) error {
	var keys []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			keys = append(keys, item)
		}
	}
	if len(keys) == 0 {
		return errors.New("holds no key; leave it unset to run without keys")
	}
	*k = keys
	return nil
}
