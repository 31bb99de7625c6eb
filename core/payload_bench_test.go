package core

import (
	"encoding/json"
	"fmt"
	"testing"
)

// benchPayload is a pretty-printed payload of about 1 KiB, the size of a
// typical SMS or push submission with metadata.
func benchPayload(b *testing.B) []byte {
	meta := make(map[string]string)
	for i := range 16 {
		meta[fmt.Sprintf("key-%02d", i)] = fmt.Sprintf("value number %02d of the submission", i)
	}
	p, err := json.MarshalIndent(map[string]any{
		"to":   "+15550100",
		"body": "Your verification code is 123456. It expires in 10 minutes. Do not share it with anyone.",
		"meta": meta,
	}, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkCompactPayload measures validating and compacting a submission's
// payload, done once per submission.
func BenchmarkCompactPayload(b *testing.B) {
	p := benchPayload(b)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := CompactPayload(p); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(p)), "payload-B")
}
