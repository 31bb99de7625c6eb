package httpapi

import "sync"

// DefaultMaxBodyBytesInFlight is how many bytes of request bodies the API
// holds at once unless configured otherwise (or the largest body it reads,
// when that is larger): 64 MiB, at the default limits about 120
// maximum-size single bodies, or seven maximum-size batches (which may take
// half), while the count bounds alone let 256 single and 32 batch bodies
// pin about 287 MB. What a held body costs beyond its bytes (decoding,
// compacting its payloads) is a small factor that TestBodyMemoryIsBounded
// holds below 3, so bodies pin a bounded multiple of this whatever their
// mix of sizes.
const DefaultMaxBodyBytesInFlight = 64 << 20

// LargestBody is the most of a request body the API reads with these
// limits: a batch's, which holds the largest single body and more. A
// byte budget below it could never admit such a batch, so configuration
// checks the budget against it.
func LargestBody(maxPayloadBytes int64, maxBatch int) int64 {
	return batchBodyLimit(maxPayloadBytes, maxBatch)
}

// bodyBudget bounds the bytes of request bodies held in memory at once,
// across all requests, beside bodySlots' bound on their count: a count
// alone lets a few large bodies (maximum-size batches) pin many times what
// the same count of small ones does. A request is charged before any of
// its body is read, what it announced (Content-Length) or, without one,
// its body limit until it is read; a request that finds too little left
// is answered 503 with Retry-After at once, as a full house of slots is.
// Batch bodies may hold at most half of the budget (though always one of
// them, however large), so that a burst of batches never leaves single
// submissions without room.
type bodyBudget struct {
	mu        sync.Mutex
	limit     int64
	used      int64
	batchUsed int64
}

func newBodyBudget(limit int64) *bodyBudget { return &bodyBudget{limit: limit} }

// tryReserve charges n bytes, for a batch body or a single one, if they
// fit.
func (b *bodyBudget) tryReserve(n int64, batch bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	if batch {
		if b.batchUsed > 0 && b.batchUsed+n > b.limit/2 {
			return false
		}
		b.batchUsed += n
	}
	b.used += n
	return true
}

// release returns n bytes charged by tryReserve.
func (b *bodyBudget) release(n int64, batch bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	if batch {
		b.batchUsed -= n
	}
}

// bodyCharge is one request's charge on the budget. It starts at what the
// request may hold and is lowered to what its body turned out to take.
type bodyCharge struct {
	budget *bodyBudget
	n      int64
	batch  bool
}

// chargeBody charges a request whose body is at most maxBody bytes: its
// Content-Length when it announced one, maxBody otherwise.
func (b *bodyBudget) chargeBody(contentLength, maxBody int64, batch bool) (*bodyCharge, bool) {
	n := maxBody
	if contentLength >= 0 && contentLength < maxBody {
		n = contentLength
	}
	if !b.tryReserve(n, batch) {
		return nil, false
	}
	return &bodyCharge{budget: b, n: n, batch: batch}, true
}

// shrinkTo lowers the charge to n bytes, once the body is read and found
// to take less than was charged (a body without Content-Length).
func (c *bodyCharge) shrinkTo(n int64) {
	if n < c.n {
		c.budget.release(c.n-n, c.batch)
		c.n = n
	}
}

// release ends the charge, when the request's body is no longer held.
func (c *bodyCharge) release() { c.budget.release(c.n, c.batch) }
