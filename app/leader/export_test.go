package leader

import (
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// ExpiryMargin and RetryIn open the follower's wait to the external tests.
const ExpiryMargin = expiryMargin

func (c Config) RetryIn(shown core.Lease) time.Duration { return c.retryIn(shown) }
