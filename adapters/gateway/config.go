package gateway

import (
	"errors"
	"net"
	"net/http"
	"time"
)

// Defaults of Config. The timeout is the default; the connection
// bound lets one instance keep a few dozen attempts in flight per gateway
// frontend without opening a connection per attempt.
const (
	DefaultTimeout         = 10 * time.Second
	DefaultMaxConnsPerHost = 64
	DefaultIdleConnTimeout = 90 * time.Second
	DefaultDialTimeout     = 5 * time.Second
	DefaultMaxAnswerBytes  = 64 << 10
	// DefaultMaxAnswerHeaderBytes bounds the answer's headers as the body
	// is bounded; net/http's own default (10 MB) is far more than any
	// gateway needs and more than an instance should buffer per call.
	DefaultMaxAnswerHeaderBytes = 64 << 10
)

// Config tunes one Client. Zero fields take the defaults above.
type Config struct {
	// Timeout bounds one attempt: waiting for a pooled connection,
	// connecting, sending and reading the whole answer.
	Timeout time.Duration
	// MaxConnsPerHost bounds the connections to one gateway URL's host;
	// attempts beyond it wait (within Timeout) for a free connection.
	MaxConnsPerHost int
	// MaxIdleConnsPerHost bounds the idle connections kept for reuse; it
	// defaults to MaxConnsPerHost so a steady load never reconnects.
	MaxIdleConnsPerHost int
	// IdleConnTimeout closes pooled connections idle this long.
	IdleConnTimeout time.Duration
	// DialTimeout bounds connecting; it is capped by Timeout anyway.
	DialTimeout time.Duration
	// MaxAnswerBytes bounds the answer body read; a larger answer is an
	// invalid answer, so a broken gateway cannot exhaust memory.
	MaxAnswerBytes int64
	// MaxAnswerHeaderBytes bounds the answer's status line and headers; a
	// larger header is a transport failure, so a broken gateway cannot
	// exhaust memory through its headers either.
	MaxAnswerHeaderBytes int64
	// UserAgent is sent on every call, so gateway logs can tell who called.
	UserAgent string
}

func (c Config) withDefaults() (Config, error) {
	if c.Timeout < 0 || c.MaxConnsPerHost < 0 || c.MaxIdleConnsPerHost < 0 ||
		c.IdleConnTimeout < 0 || c.DialTimeout < 0 || c.MaxAnswerBytes < 0 || c.MaxAnswerHeaderBytes < 0 {
		return Config{}, errors.New("gateway config: values must not be negative")
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxConnsPerHost == 0 {
		c.MaxConnsPerHost = DefaultMaxConnsPerHost
	}
	if c.MaxIdleConnsPerHost == 0 {
		c.MaxIdleConnsPerHost = c.MaxConnsPerHost
	}
	if c.IdleConnTimeout == 0 {
		c.IdleConnTimeout = DefaultIdleConnTimeout
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.MaxAnswerBytes == 0 {
		c.MaxAnswerBytes = DefaultMaxAnswerBytes
	}
	if c.MaxAnswerHeaderBytes == 0 {
		c.MaxAnswerHeaderBytes = DefaultMaxAnswerHeaderBytes
	}
	if c.UserAgent == "" {
		c.UserAgent = "submission-manager"
	}
	return c, nil
}

// transport is the bounded connection pool of one Client. Gateways are
// plain HTTP/1.1 behind HAProxy; no proxy from the environment is used, so
// an attempt goes exactly to the snapshot's gatewayUrl.
func (c Config) transport() *http.Transport {
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            (&net.Dialer{Timeout: c.DialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxConnsPerHost:        c.MaxConnsPerHost,
		MaxIdleConns:           0, // bounded per host instead
		MaxIdleConnsPerHost:    c.MaxIdleConnsPerHost,
		IdleConnTimeout:        c.IdleConnTimeout,
		TLSHandshakeTimeout:    c.DialTimeout,
		ExpectContinueTimeout:  0,
		ForceAttemptHTTP2:      false,
		MaxResponseHeaderBytes: c.MaxAnswerHeaderBytes,
	}
}
