package core

import (
	"math"
	"testing"
)

func TestKeySetRoles(t *testing.T) {
	k := NewKeySet([]string{"client-1", "", "both"}, []string{"op-1", "both"})
	for key, want := range map[string]Role{
		"client-1": RoleClient, "op-1": RoleOperator, "both": RoleOperator,
		"": RoleNone, "client-": RoleNone, "op-1 ": RoleNone, "OP-1": RoleNone,
	} {
		if got := k.Role(key); got != want {
			t.Errorf("Role(%q) = %v, want %v", key, got, want)
		}
	}
	if k.Open() || !k.Has(RoleClient) || !k.Has(RoleOperator) || k.Has(RoleNone) {
		t.Errorf("Open=%v Has(client)=%v Has(operator)=%v", k.Open(), k.Has(RoleClient), k.Has(RoleOperator))
	}
	ops := NewKeySet(nil, []string{"op"})
	if ops.Has(RoleClient) || !ops.Has(RoleOperator) || ops.Open() {
		t.Errorf("operator keys only: Has(client)=%v Has(operator)=%v Open=%v", ops.Has(RoleClient), ops.Has(RoleOperator), ops.Open())
	}
	var none KeySet
	if !none.Open() || none.Role("anything") != RoleNone || !NewKeySet([]string{""}, nil).Open() {
		t.Error("a key set without keys is not open, or knows a key")
	}
}

func TestKeyBits(t *testing.T) {
	for key, want := range map[string]float64{
		"":                                 0,
		"1234":                             4 * math.Log2(10),
		"0123456789abcdef0123456789abcdef": 128,                   // openssl rand -hex 16
		"0123456789ABCDEF0123456789ABCDEF": 128,                   // upper-case hex
		"op-secret-key":                    13 * math.Log2(28),    // a phrase: lower case and '-'
		"Zm9vYmFyYmF6cXV4cXV1eA":           22 * math.Log2(62),    // base64url of 16 bytes
		"correct horse":                    13 * math.Log2(26+30), // the space is "other"
		"aBcdef":                           6 * math.Log2(52),
	} {
		if got := KeyBits(key); math.Abs(got-want) > 1e-9 {
			t.Errorf("KeyBits(%q) = %.2f, want %.2f", key, got, want)
		}
	}
	if KeyBits("0123456789abcdef0123456789abcde") >= MinKeyBits {
		t.Error("31 hex digits reach the minimum")
	}
	if KeyBits("Zm9vYmFyYmF6cXV4cXV1eA") < MinKeyBits {
		t.Error("22 base64url characters fall short of the minimum")
	}
}
