// Package archtest holds the test that enforces the design card's
// dependency rules, so that a shortcut across rooms fails `make test`
// instead of surviving until review.
package archtest
