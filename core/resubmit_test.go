package core

import (
	"errors"
	"strings"
	"testing"
)

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

// TestDeliveryRisk holds the rule that keeps an intent out of bulk
// resubmission: either fact that the gateway may have the message is a
// risk, whatever the status, and the refusal says which fact it is.
func TestDeliveryRisk(t *testing.T) {
	for _, c := range []struct {
		name string
		in   Intent
		says string
	}{
		{"accepted after the deadline", Intent{IntentID: "a", Status: StatusExhausted, AcceptedAfterDeadline: true, AcceptedMessageID: "m-7"},
			"accepted intent \"a\" after its acceptance deadline (message m-7)"},
		{"accepted after the deadline without a message id", Intent{IntentID: "a", Status: StatusExhausted, AcceptedAfterDeadline: true},
			"after its acceptance deadline"},
		{"possibly accepted", Intent{IntentID: "b", Status: StatusExhausted, PossiblyAccepted: true}, "whose answer was lost"},
	} {
		err := DeliveryRisk(c.in)
		if !errors.Is(err, ErrDeliveryRisk) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: DeliveryRisk = %v, want ErrDeliveryRisk saying %q", c.name, err, c.says)
		}
	}
	for _, in := range []Intent{
		{IntentID: "c", Status: StatusExhausted, ExhaustedReason: ExhaustedDeadlineExceeded},
		{IntentID: "d", Status: StatusRejected},
	} {
		if err := DeliveryRisk(in); err != nil {
			t.Errorf("%+v: DeliveryRisk = %v, want none", in, err)
		}
	}
}
