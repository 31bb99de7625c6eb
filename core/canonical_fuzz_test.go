package core

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzCanonicalPayload checks, for every payload the service accepts, that
// the canonical form is valid JSON, is its own canonical form, and decodes
// to the same data as the payload (numbers compared as written).
func FuzzCanonicalPayload(f *testing.F) {
	for _, seed := range []string{
		`{"b":1,"a":[true,null,"\u003c"]}`, `"\ud83d\ude00"`, `[{"":{"":0}}]`, `-0.0e+10`,
		`{"k":"\u0000\u001f\u007f\u2028"}`, `12345678901234567890.5`, `{"a":{"a":1},"A":2}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		compacted, err := CompactPayload(raw)
		if err != nil {
			return
		}
		canon, err := CanonicalPayload(compacted)
		if fast := CheckMemberNames(compacted); (err == nil) != (fast == nil) || err != nil && err.Error() != fast.Error() {
			t.Fatalf("%s: CanonicalPayload says %v, CheckMemberNames %v", compacted, err, fast)
		}
		if err != nil {
			return // a repeated member name
		}
		if !json.Valid(canon) {
			t.Fatalf("canonical form of %s is not JSON: %s", compacted, canon)
		}
		again, err := CanonicalPayload(canon)
		if err != nil || !bytes.Equal(again, canon) {
			t.Fatalf("canonical form is not a fixed point: %s -> %s (%v)", canon, again, err)
		}
		if a, b := decodeNumbers(t, compacted), decodeNumbers(t, canon); !reflect.DeepEqual(a, b) {
			t.Fatalf("canonical form %s means other data than %s", canon, compacted)
		}
	})
}

func decodeNumbers(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
	return v
}

// BenchmarkCanonicalPayload measures the canonical form of a compacted
// payload of about 1 KiB: done once per submission (to refuse repeated
// member names) and twice per judged repeat.
func BenchmarkCanonicalPayload(b *testing.B) {
	p, err := CompactPayload(benchPayload(b))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := CanonicalPayload(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckMemberNames measures the repeated-name check every
// submission pays, on the same payload.
func BenchmarkCheckMemberNames(b *testing.B) {
	p, err := CompactPayload(benchPayload(b))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		if err := CheckMemberNames(p); err != nil {
			b.Fatal(err)
		}
	}
}
