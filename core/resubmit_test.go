package core

import "testing"

func TestDeriveResubmissionID(t *testing.T) {
	for in, want := range map[string]string{
		"order-42":     "order-42~r1",
		"order-42~r1":  "order-42~r2",
		"order-42~r9":  "order-42~r10",
		"order-42~r01": "order-42~r01~r1",
		"order-42~r0":  "order-42~r0~r1",
		"~r3":          "~r3~r1",
		"a~rx":         "a~rx~r1",
	} {
		if got := DeriveResubmissionID(in); got != want {
			t.Errorf("DeriveResubmissionID(%q) = %q, want %q", in, got, want)
		}
	}
}
