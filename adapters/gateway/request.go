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
	body := make([]byte, 0, len(`{"reference":"","payload":}`)+len(reference)+len(payload))
	body = append(body, `{"reference":`...)
	body, err := appendJSONString(body, reference)
	if err != nil {
		return nil, err
	}
	body = append(body, `,"payload":`...)
	body = append(body, payload...)
	body = append(body, '}')
	return body, nil
}

// appendJSONString appends s as a JSON string, as encoding/json writes it
// without HTML escaping. A string of printable ASCII without a quote or a
// backslash, which is what intentIds are, is written as it is: the
// encoder's reflection and buffers cost more per attempt than the rest of
// the body. Anything else goes through the encoder
// (FuzzAppendJSONStringMatchesTheEncoder).
func appendJSONString(dst []byte, s string) ([]byte, error) {
	plain := true
	for i := 0; i < len(s) && plain; i++ {
		c := s[i]
		plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\'
	}
	if plain {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"'), nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...), nil
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
