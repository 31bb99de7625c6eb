package core

import (
	"crypto/sha256"
	"crypto/subtle"
	"math"
)

// Role is what a key lets its holder do. Client keys submit and read;
// operator keys may do everything, including what reaches beyond one
// client's own submissions (resubmission, gateway controls, the console).
// The roles are bits, so a set of roles is a Role too.
type Role uint8

// The roles a key can have.
const (
	// RoleNone is no key, or a key that is not configured.
	RoleNone Role = 0
	// RoleClient submits intents and reads them.
	RoleClient Role = 1
	// RoleOperator does everything a client does, and operates.
	RoleOperator Role = 2
)

// String names the role for logs and metrics.
func (r Role) String() string {
	switch r {
	case RoleClient:
		return "client"
	case RoleOperator:
		return "operator"
	default:
		return "none"
	}
}

// KeySet is the configured keys with their roles: the one place a
// presented key is compared with them. It keeps only SHA-256 digests and
// compares the presented key's digest with every one of them in constant
// time, so neither a key's length, nor how much of it matched, nor which
// key matched leaks through timing. The zero value holds no key: everything
// is open, as a zero-configuration loopback service is.
type KeySet struct {
	keys  []roleKey
	roles Role
}

type roleKey struct {
	digest [sha256.Size]byte
	role   Role
}

// NewKeySet holds the client and operator keys; empty strings are no key.
// A key listed under both roles is an operator key.
func NewKeySet(clientKeys, operatorKeys []string) KeySet {
	var k KeySet
	add := func(keys []string, role Role) {
		for _, key := range keys {
			if key != "" {
				k.keys = append(k.keys, roleKey{digest: sha256.Sum256([]byte(key)), role: role})
				k.roles |= role
			}
		}
	}
	add(clientKeys, RoleClient)
	add(operatorKeys, RoleOperator)
	return k
}

// Open reports whether no key of either role is configured.
func (k KeySet) Open() bool { return k.roles == RoleNone }

// Has reports whether any key of the role is configured.
func (k KeySet) Has(role Role) bool { return role != RoleNone && k.roles&role == role }

// Role returns the role of a presented key: RoleNone for an empty or
// unknown key, RoleOperator for a key configured under both roles. Every
// configured key is compared, whatever matched first.
func (k KeySet) Role(key string) Role {
	if key == "" {
		return RoleNone
	}
	got := sha256.Sum256([]byte(key))
	var found Role
	for _, c := range k.keys {
		eq := subtle.ConstantTimeCompare(got[:], c.digest[:]) // 1 or 0
		found |= c.role * Role(eq)
	}
	if found&RoleOperator != 0 {
		return RoleOperator
	}
	return found
}

// MinKeyBits is the strength every key should have: 128 random bits, as
// `openssl rand -hex 16` (32 hex digits) or `openssl rand -base64 16` (22
// characters and padding) draw them. Below that, a key is a password, and
// an attacker who can try keys (at the throttle's pace, on every instance)
// may find it.
const MinKeyBits = 128

// KeyBits estimates at most how many bits of randomness a key carries: its
// length times the bits per character of the smallest usual alphabet its
// characters fit (hex digits, digits, one case of letters, base64url,
// printable ASCII). It sees only length and character classes, not whether
// the key was drawn at random, so it is an upper bound: "password1234567890"
// scores higher than it deserves, and a key under MinKeyBits is weak for
// sure.
func KeyBits(key string) float64 {
	var digit, hexLower, lower, hexUpper, upper, urlSafe, other, wide bool
	n := 0
	for _, r := range key {
		n++
		switch {
		case r >= '0' && r <= '9':
			digit = true
		case r >= 'a' && r <= 'f':
			hexLower = true
		case r >= 'g' && r <= 'z':
			lower = true
		case r >= 'A' && r <= 'F':
			hexUpper = true
		case r >= 'G' && r <= 'Z':
			upper = true
		case r == '-' || r == '_':
			urlSafe = true
		case r >= 0x20 && r < 0x7f:
			other = true
		default:
			wide = true
		}
	}
	if n == 0 {
		return 0
	}
	alphabet := 0
	switch {
	case wide:
		alphabet = 1 << 16 // a generous bound for keys beyond ASCII
	case lower || upper || urlSafe || other || hexLower && hexUpper:
		for _, class := range []struct {
			present bool
			size    int
		}{{digit, 10}, {lower || hexLower, 26}, {upper || hexUpper, 26}, {urlSafe, 2}, {other, 30}} {
			if class.present {
				alphabet += class.size
			}
		}
	case hexLower || hexUpper:
		alphabet = 16
	default:
		alphabet = 10
	}
	return float64(n) * math.Log2(float64(alphabet))
}
