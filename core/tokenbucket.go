package core

import (
	"fmt"
	"time"
)

// TokenBucket limits a rate of calls: it holds up to Burst tokens, refills
// Rate tokens per second, and each call takes one. It is pure (time passed
// in) and not safe for concurrent use. Reserve lets the bucket go into debt
// so each waiting call gets its own future time instead of all waiting calls
// retrying at the same instant.
type TokenBucket struct {
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

// NewTokenBucket returns a full bucket. rate must be positive, burst at
// least 1.
func NewTokenBucket(rate float64, burst int) (*TokenBucket, error) {
	if !(rate > 0) {
		return nil, fmt.Errorf("token bucket: rate must be positive, got %v", rate)
	}
	if burst < 1 {
		return nil, fmt.Errorf("token bucket: burst must be at least 1, got %d", burst)
	}
	return &TokenBucket{rate: rate, burst: float64(burst), tokens: float64(burst)}, nil
}

func (b *TokenBucket) refill(now time.Time) {
	if !b.last.IsZero() && now.After(b.last) {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	if b.last.IsZero() || now.After(b.last) {
		b.last = now
	}
}

// Take takes a token at now if one is there.
func (b *TokenBucket) Take(now time.Time) bool {
	b.refill(now)
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// Reserve takes a token now or in the future and returns when it is
// available: now when there was one, else the time the bucket will have
// refilled it. The token is spent either way, so reservations queue.
func (b *TokenBucket) Reserve(now time.Time) time.Time {
	b.refill(now)
	b.tokens--
	if b.tokens >= 0 {
		return now
	}
	wait := time.Duration(-b.tokens / b.rate * float64(time.Second))
	return now.Add(wait)
}

// Rate and Burst return the settings.
func (b *TokenBucket) Rate() float64 { return b.rate }

// Burst returns the bucket size.
func (b *TokenBucket) Burst() int { return int(b.burst) }
