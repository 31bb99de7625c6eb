package command

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"

	"github.com/submissionmanager/submission-manager/api/submission"
)

// DefaultServer is the service the client commands talk to by default:
// a local instance on the default --listen address.
const DefaultServer = "http://" + DefaultListen

// APIKeyEnv holds the key the client commands send; it is --api-key's
// environment variable. The variable is the better home for a key: a flag's
// value shows in shell history and process listings.
const APIKeyEnv = EnvPrefix + "API_KEY"

// clientEnvFlags are the flags of the client commands that also read their
// environment variable: where the service is, and the key. The others
// (--yes, --status, ...) are command-line only, so that a stray
// SUBMISSION_YES or SUBMISSION_STATUS can never turn a command into an
// action nobody typed.
var clientEnvFlags = []string{"url", "api-key"}

// clientCmd is one run of a command that talks to the HTTP API (intents,
// gateways): the flags every such command has, and where it prints.
type clientCmd struct {
	fs     *flag.FlagSet
	url    string
	apiKey string
	json   bool
	stdout io.Writer
	stderr io.Writer
}

// newClientCmd returns a command with the client flags; the caller adds
// its own flags to c.fs before parse.
func newClientCmd(synopsis, about string, stdout, stderr io.Writer) *clientCmd {
	c := &clientCmd{stdout: stdout, stderr: stderr}
	c.fs = newCommandFlagSet(synopsis, about, stderr, func(name string) bool { return slices.Contains(clientEnvFlags, name) })
	c.fs.StringVar(&c.url, "url", DefaultServer, "base URL of a SubmissionManager instance, or of the load balancer in front of several")
	c.fs.StringVar(&c.apiKey, "api-key", "", "the key to send when the service requires one (an operator key to resubmit or pause); the environment variable keeps it out of shell history")
	c.fs.BoolVar(&c.json, "json", false, "print JSON for scripts instead of a table")
	return c
}

// parse reads args, whose flags may also follow the positional arguments
// (as people type them: intents get ID --json), and returns the positional
// arguments.
func (c *clientCmd) parse(args []string, env LookupEnv) ([]string, error) {
	fromEnv := func(name string) (string, bool) {
		for _, f := range clientEnvFlags {
			if name == EnvName(f) && env != nil {
				return env(name)
			}
		}
		return "", false
	}
	var positional []string
	for {
		if err := parseFlags(c.fs, args, fromEnv); err != nil {
			return nil, err
		}
		if c.fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, c.fs.Arg(0))
		args = c.fs.Args()[1:]
	}
}

// client returns the Go client of the service --url names.
func (c *clientCmd) client() (*submission.Client, error) {
	u, err := url.Parse(c.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &usageError{msg: fmt.Sprintf("--url %q (%s): want an http:// or https:// URL such as %s", c.url, EnvName("url"), DefaultServer)}
	}
	opts := []submission.Option{submission.WithHTTPClient(reachDoer{url: c.url})}
	if c.apiKey != "" {
		opts = append(opts, submission.WithAPIKey(c.apiKey))
	}
	return submission.New(c.url, opts...)
}

// printJSON prints v indented, for scripts.
func (c *clientCmd) printJSON(v any) error { return printJSON(c.stdout, v) }

// reachDoer makes the client's requests; when the service cannot be reached
// at all, its error names the flag and variable that say where it is.
type reachDoer struct{ url string }

func (d reachDoer) Do(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultClient.Do(req)
	if err != nil && req.Context().Err() == nil {
		cause := err
		var uerr *url.Error
		if errors.As(err, &uerr) {
			cause = uerr.Err
		}
		return nil, fmt.Errorf("cannot reach SubmissionManager at %s (set --url or %s): %w", d.url, EnvName("url"), cause)
	}
	return res, err
}

// explained adds what to do to the errors a user can fix by a flag: a
// missing key and a client key where an operator key is needed.
func explained(what string, err error) error {
	switch {
	case submission.IsProblem(err, submission.TypeUnauthorized):
		return fmt.Errorf("%s: %w (give a key with --api-key or %s)", what, err, APIKeyEnv)
	case submission.IsProblem(err, submission.TypeForbidden):
		return fmt.Errorf("%s: %w (this needs an operator key: --api-key or %s)", what, err, APIKeyEnv)
	}
	return fmt.Errorf("%s: %w", what, err)
}
