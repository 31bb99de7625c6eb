// Package ports declares, as Go interfaces, every boundary between the core
// and the outside world. Here "port" means an interface: the driven ports are
// what the core needs (Store, LeaseStore, Gateway, Clock) and the driving
// ports are what it offers (IntentService). They are expressed in core types
// only, so adapters depend on ports and core, and the core never depends on an
// adapter.
package ports
