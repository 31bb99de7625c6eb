// Package leader elects the one instance that executes attempts. Every
// instance runs an Elector: as a follower it tries to acquire the SQL lease
// every AcquireInterval; once it holds the lease it runs the executor
// (the lead function) and renews the lease every RenewInterval. Any renew
// failure, store error or fenced write drops leadership at once: the
// executor's context is cancelled, its stillLeader check turns false before
// it is told, and the instance returns to follower.
//
// The elector is pure core: it reaches the database only through
// ports.LeaseStore and time only through ports.Clock, so its tests drive it
// with a fake clock and an in-memory lease instead of sleeping.
package leader
