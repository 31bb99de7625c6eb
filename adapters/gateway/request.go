package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// requestBody writes {"reference":...,"payload":...} by hand: encoding/json
// would re-encode a json.RawMessage (escaping <, > and &), and the payload
// must reach the gateway exactly as the client sent it.
func requestBody(reference string, payload []byte) ([]byte, error) {
	if reference == "" {
		return nil, errors.New("the reference (intentId) is empty")
	}
	if !json.Valid(payload) {
		return nil, errors.New("the payload is not valid JSON")
	}
	var ref bytes.Buffer
	enc := json.NewEncoder(&ref)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(reference); err != nil {
		return nil, err
	}
	encodedRef := bytes.TrimSuffix(ref.Bytes(), []byte("\n"))
	body := make([]byte, 0, len(`{"reference":,"payload":}`)+len(encodedRef)+len(payload))
	body = append(body, `{"reference":`...)
	body = append(body, encodedRef...)
	body = append(body, `,"payload":`...)
	body = append(body, payload...)
	body = append(body, '}')
	return body, nil
}

// baseURL checks a gatewayUrl and gives it a trailing slash, so that a URL
// with a path (an HAProxy frontend routing by prefix) keeps its path when
// the operation path is resolved against it.
func baseURL(gatewayURL string) (string, error) {
	u, err := url.Parse(gatewayURL)
	if err != nil {
		return "", fmt.Errorf("gatewayUrl %q is not a URL: %w", gatewayURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("gatewayUrl %q is not an absolute http(s) URL", gatewayURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("gatewayUrl %q must not carry a query or fragment", gatewayURL)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	return u.String(), nil
}
