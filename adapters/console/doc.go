// Package console serves the operator console at /ui/: server-rendered
// html/template pages with a little JavaScript and SVG charts, all embedded
// in the binary, so it needs no build step, no CDN and no node at run time
// (operators run it on closed networks).
//
// It reads and acts only through the application's ports (IntentService,
// OperatorService, LeadershipReporter, GatewayReporter): it never reads SQL.
// Everything it shows goes through html/template's contextual escaping, and
// its Content-Security-Policy allows scripts only from its own files, so no
// markup in an intentId, payload or gateway reason ever runs.
//
// Operators sign in with an operator key through a form; the console keeps
// an HMAC-signed, expiring session cookie and puts a CSRF token bound to the
// session in every form. With no key configured at all the console is
// open, and says so in a banner.
package console
