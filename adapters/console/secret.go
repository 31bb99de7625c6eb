package console

import (
	"context"
	"crypto/rand"
	"sync"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// How long an instance trusts its copy of the session secret. A rotation
// (submission-manager console rotate-secret) ends every session in the
// store at once; the secret itself reaches every instance within
// secretRefresh, or at once on the first cookie of the new generation, which
// an instance looks up at most once per secretRecheck (so cookies naming
// made-up generations cannot make it hammer the store).
const (
	secretRefresh = 30 * time.Second
	secretRecheck = time.Second
)

// secretCache keeps this instance's copy of the store's session secret.
type secretCache struct {
	store ports.SessionStore
	clock ports.Clock

	mu      sync.Mutex
	current core.SessionSecret
	readAt  time.Time
}

// secret returns the current secret, reading the store when the copy is
// older than secretRefresh. The first instance to ask stores a random one.
func (c *secretCache) secret(ctx context.Context) (core.SessionSecret, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.current.Generation == 0 || c.clock.Now().Sub(c.readAt) >= secretRefresh {
		if err := c.load(ctx); err != nil {
			return core.SessionSecret{}, err
		}
	}
	return c.current, nil
}

// generation returns the secret of a cookie's generation if it is the
// current one. A newer generation than the copy's sends the cache to the
// store (at most once per secretRecheck); an older one was rotated away.
func (c *secretCache) generation(ctx context.Context, gen int64) (core.SessionSecret, bool, error) {
	cur, err := c.secret(ctx)
	if err != nil || gen == cur.Generation {
		return cur, err == nil, err
	}
	if gen < cur.Generation {
		return core.SessionSecret{}, false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.clock.Now().Sub(c.readAt) >= secretRecheck {
		if err := c.load(ctx); err != nil {
			return core.SessionSecret{}, false, err
		}
	}
	return c.current, gen == c.current.Generation, nil
}

// load reads the secret, offering a fresh random one in case the store has
// none yet. The caller holds mu.
func (c *secretCache) load(ctx context.Context) error {
	first := make([]byte, core.SessionSecretBytes)
	_, _ = rand.Read(first) // crypto/rand.Read never fails
	s, err := c.store.SessionSecret(ctx, first)
	if err != nil {
		return err
	}
	c.current, c.readAt = s, c.clock.Now()
	return nil
}
