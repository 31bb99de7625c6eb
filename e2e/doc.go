// Package e2e holds the end-to-end tests: the real service (started
// in-process through cmd/submission-manager/command, or as processes by the
// HA tests) on a real SQLite file, talking to simulated gateways over HTTP,
// and driven only through the generated Go client, exactly as a user would.
// The core tests (submit, batch, get, list, resubmit, Prefer: wait, the
// leader's execution) run once per store (store_test.go): also on a fresh
// SQL Server database the service migrates itself. It also holds the tests
// of several rooms working together, which no room's own tests may import
// (see internal/archtest): the elector driving the executor on a fake clock.
package e2e
