// Package gatewaysim simulates the SMS and push gateways SubmissionManager
// talks to, over the real wire protocol of api/gateway.yaml, so that tests and
// local runs exercise the real gateway client, real HTTP and real failure
// modes instead of mocks.
//
// One Simulator serves each gateway type on its own listener, like the two
// HAProxy frontends of production. Each simulated gateway remembers the
// references it accepted and refuses a repeat with duplicate_reference, counts
// submissions per reference (GET /stats) so tests can prove at-most-once
// acceptance and count attempts, and answers by a configurable behaviour:
// latency, a rejection ratio with a reason mix, a fault mode for every invalid
// answer and for hanging, and scripted answers per reference. Start it on port
// 0 in tests:
//
//	sim, err := gatewaysim.Start(gatewaysim.Config{})
//	...
//	defer sim.Close()
//	sim.Script("intent-1", "provider_failure", "provider_failure", "accepted")
//	url := sim.URL(core.GatewaySMS)
//
// The state of each gateway lives in sharded maps and atomic counters; no lock
// is held while a submission waits out its latency, so the simulator keeps up
// with load tests of thousands of submissions a second.
package gatewaysim
