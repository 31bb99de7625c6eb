// Package e2e holds the end-to-end tests: the real service (started
// in-process through cmd/submission-manager/app, or as processes by the HA
// tests) on a real SQLite file, talking to simulated gateways over HTTP, and
// driven only through the generated Go client, exactly as a user would.
package e2e
