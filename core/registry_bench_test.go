package core

import (
	"fmt"
	"testing"
)

// BenchmarkRegistryLookup measures contract resolution at submission, which
// clones the contract for the intent's snapshot.
func BenchmarkRegistryLookup(b *testing.B) {
	const targets = 64
	contracts := make([]Contract, targets)
	names := make([]string, targets)
	for i := range contracts {
		c := deadlineContract.Clone()
		c.SubmissionTarget = fmt.Sprintf("tenant-%02d.sms.realtime", i)
		contracts[i], names[i] = c, c.SubmissionTarget
	}
	r, err := NewRegistry(contracts)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, ok := r.Lookup(names[i%targets]); !ok {
			b.Fatal("lookup missed")
		}
		i++
	}
}
