package client

import (
	"context"
	"net/http"
)

// WithAPIKey makes every request of the client carry the key as a bearer
// token, which the service demands on /v1 once it was started with API keys.
func WithAPIKey(key string) ClientOption {
	return WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+key)
		return nil
	})
}
