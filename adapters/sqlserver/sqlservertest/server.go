// Package sqlservertest finds the SQL Server that tests run against and
// gives each test a database of its own on it. The adapter's tests and the
// end-to-end tests share it, so both find the same server the same way.
//
// The server is the one SUBMISSION_TEST_SQLSERVER_DSN names (any database on
// it; the login needs CREATE DATABASE), such as the Babelfish server .ci/run
// starts, or, without it, a SQL Server container started through
// testcontainers where a Docker engine answers. With neither, a test that
// needs the server is skipped with the reason, and fails with it when the
// environment variable CI (or SUBMISSION_TEST_SQLSERVER_REQUIRED) is set:
// CI must never pass without having run the SQL Server tests.
package sqlservertest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tcmssql "github.com/testcontainers/testcontainers-go/modules/mssql"
)

const (
	// EnvDSN names the server for the tests.
	EnvDSN = "SUBMISSION_TEST_SQLSERVER_DSN"
	// EnvImage overrides the container image testcontainers starts.
	EnvImage = "SUBMISSION_TEST_SQLSERVER_IMAGE"
	// EnvCI, when set, turns "no server" from a skip into a failure.
	EnvCI = "CI"
	// EnvRequired does the same outside CI (make test-sqlserver sets it).
	EnvRequired  = "SUBMISSION_TEST_SQLSERVER_REQUIRED"
	defaultImage = "mcr.microsoft.com/mssql/server:2022-CU18-ubuntu-22.04"
	// The container's sa password: SQL Server's complexity rules, and no
	// character that would need escaping in the URL DSN.
	containerPassword = "Submission2026Manager"
)

// server is the process's test server, found or started once.
var server struct {
	once      sync.Once
	dsn       string // admin DSN
	skip      string // why no server is available, when set
	err       error  // a server should have been available but failed
	container *tcmssql.MSSQLServerContainer
}

// AdminDSN returns the DSN of the test server's administrative database. It
// skips the test when no server is available, or fails it under CI.
func AdminDSN(t testing.TB) string {
	t.Helper()
	server.once.Do(findServer)
	if server.skip != "" {
		for _, env := range []string{EnvCI, EnvRequired} {
			if os.Getenv(env) != "" {
				t.Fatalf("%s; %s is set, so the SQL Server tests must run: set %s to a server (.ci/run starts one)",
					server.skip, env, EnvDSN)
			}
		}
		t.Skip("SQL Server tests skipped: " + server.skip)
	}
	if server.err != nil {
		t.Fatalf("SQL Server for tests: %v", server.err)
	}
	return server.dsn
}

func findServer() {
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		server.dsn = dsn
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := dockerHealth(ctx); err != nil {
		host := os.Getenv("DOCKER_HOST")
		if host == "" {
			host = "unix:///var/run/docker.sock"
		}
		server.skip = fmt.Sprintf("no SQL Server for the tests: %s is unset and no Docker engine answers at %s (testcontainers: %v)",
			EnvDSN, host, err)
		return
	}
	image := os.Getenv(EnvImage)
	if image == "" {
		image = defaultImage
	}
	c, err := tcmssql.Run(ctx, image, tcmssql.WithAcceptEULA(), tcmssql.WithPassword(containerPassword))
	server.container = c
	if err != nil {
		server.err = fmt.Errorf("start %s: %w", image, err)
		return
	}
	dsn, err := c.ConnectionString(ctx, "TrustServerCertificate=true")
	if err != nil {
		server.err = fmt.Errorf("container connection string: %w", err)
		return
	}
	server.dsn = dsn
}

// dockerHealth asks testcontainers whether a Docker engine answers, without
// letting its panics (no socket at all) escape.
func dockerHealth(ctx context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	provider, err := testcontainers.ProviderDocker.GetProvider()
	if err != nil {
		return err
	}
	defer provider.Close()
	return provider.Health(ctx)
}

// Stop releases what the package holds for the process: the shared admin
// connection and a container it started. A TestMain calls it after m.Run.
func Stop() error {
	var err error
	if admin.db != nil {
		err = admin.db.Close()
	}
	if c := server.container; c != nil {
		if cerr := testcontainers.TerminateContainer(c); cerr != nil {
			err = fmt.Errorf("stopping the SQL Server container: %w", cerr)
		}
	}
	return err
}
