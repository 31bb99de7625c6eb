package command

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/api/submission"
)

const gatewaysUsage = `usage: submission-manager gateways <list|pause|resume> [flags] [TYPE|URL]

  list             show every gateway: targets, pause, and on the leader its
                   breaker, calls in flight, limits and recent failures
  pause TYPE|URL   stop calling a gateway type (sms, push) or one gateway URL;
                   stored, so every instance and the next leader honour it
  resume TYPE|URL  lift that pause

Every subcommand takes --url (SUBMISSION_URL, default http://127.0.0.1:8000),
--api-key (SUBMISSION_API_KEY; an operator key to pause or resume) and --json.
Run "submission-manager gateways <subcommand> -h" for its flags.
`

// runGateways runs the gateways operator commands through the Go client, as
// any client of the HTTP API would.
func runGateways(ctx context.Context, args []string, env LookupEnv, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") || args[0] == "help" {
		fmt.Fprint(stderr, gatewaysUsage)
		if len(args) > 0 && isHelp(args[0]) {
			return nil
		}
		return &usageError{msg: "gateways needs a subcommand: list, pause or resume"}
	}
	sub, rest := args[0], args[1:]
	var synopsis, about string
	switch sub {
	case "list":
		synopsis, about = "gateways list [flags]", "Shows every gateway: its targets, whether it is paused, and on the leader its\nbreaker, calls in flight, limits and recent failures."
	case "pause", "resume":
		synopsis = "gateways " + sub + " [flags] TYPE|URL"
		about = map[string]string{
			"pause":  "Stops calling a gateway type (sms, push) or one gateway URL until resumed.",
			"resume": "Lifts a pause of a gateway type or URL.",
		}[sub]
	default:
		return &usageError{msg: fmt.Sprintf("unknown gateways subcommand %q: want list, pause or resume", sub)}
	}
	c := newClientCmd(synopsis, about, stdout, stderr)
	positional, err := c.parse(rest, env)
	if err != nil {
		return err
	}
	if sub == "list" {
		if len(positional) != 0 {
			return &usageError{msg: "gateways list takes no arguments"}
		}
		return c.listGateways(ctx)
	}
	if len(positional) != 1 {
		return &usageError{msg: fmt.Sprintf("gateways %s takes one gateway type (sms, push) or gateway URL", sub)}
	}
	return c.switchGateway(ctx, sub, positional[0])
}

// selectorOf reads TYPE|URL: anything with "://" is a URL.
func selectorOf(arg string) client.GatewaySelector {
	if strings.Contains(arg, "://") {
		return client.GatewaySelector{GatewayUrl: &arg}
	}
	t := client.GatewayType(arg)
	return client.GatewaySelector{GatewayType: &t}
}

func (c *clientCmd) switchGateway(ctx context.Context, sub, arg string) error {
	sm, err := c.client()
	if err != nil {
		return err
	}
	sel := selectorOf(arg)
	stdout := c.stdout
	if sub == "pause" {
		res, err := sm.API().PauseGatewayWithResponse(ctx, sel)
		if err == nil && res.JSON200 == nil {
			err = submission.ProblemOf(res.HTTPResponse, res.Body)
		}
		if err != nil {
			return explained("pause "+arg, err)
		}
		if c.json {
			return c.printJSON(res.JSON200)
		}
		fmt.Fprintf(stdout, "paused %s since %s\n", arg, res.JSON200.PausedAt.Format(time.RFC3339))
		return nil
	}
	res, err := sm.API().ResumeGatewayWithResponse(ctx, sel)
	if err == nil && res.JSON200 == nil {
		err = submission.ProblemOf(res.HTTPResponse, res.Body)
	}
	if err != nil {
		return explained("resume "+arg, err)
	}
	if c.json {
		return c.printJSON(res.JSON200)
	}
	if res.JSON200.WasPaused {
		fmt.Fprintf(stdout, "resumed %s\n", arg)
	} else {
		fmt.Fprintf(stdout, "%s was not paused\n", arg)
	}
	return nil
}

func (c *clientCmd) listGateways(ctx context.Context) error {
	sm, err := c.client()
	if err != nil {
		return err
	}
	res, err := sm.API().ListGatewaysWithResponse(ctx)
	if err == nil && res.JSON200 == nil {
		err = submission.ProblemOf(res.HTTPResponse, res.Body)
	}
	if err != nil {
		return explained("list gateways", err)
	}
	l, stdout := res.JSON200, c.stdout
	if c.json {
		return c.printJSON(l)
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "GATEWAY URL\tTYPE\tPAUSED\tBREAKER\tIN FLIGHT\tLIMITS\tRECENT FAILURES\tTARGETS")
	for _, g := range l.Gateways {
		breaker, inFlight, limits, failures := "-", "-", "-", "-"
		if e := g.Executor; e != nil {
			breaker = "off"
			if e.Breaker != nil {
				breaker = string(*e.Breaker)
				if e.ProbeAt != nil {
					breaker += " (probe " + e.ProbeAt.Format(time.TimeOnly) + ")"
				}
			}
			inFlight = fmt.Sprint(e.InFlight)
			var parts []string
			if e.MaxInFlight != nil {
				parts = append(parts, fmt.Sprintf("max-in-flight=%d", *e.MaxInFlight))
			}
			if e.Rate != nil {
				parts = append(parts, fmt.Sprintf("rate=%g/s burst=%d", *e.Rate, deref(e.Burst)))
			}
			if len(parts) > 0 {
				limits = strings.Join(parts, " ")
			}
			failures = fmt.Sprintf("%d/%d", e.RecentFailures, e.RecentCalls)
		}
		fmt.Fprintf(w, "%s\t%s\t%v\t%s\t%s\t%s\t%s\t%s\n", g.GatewayUrl, g.GatewayType, g.Paused,
			breaker, inFlight, limits, failures, strings.Join(g.Targets, ","))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if !l.Leader {
		fmt.Fprintln(stdout, "(this instance does not lead: breakers and in-flight calls are the leader's; ask it)")
	}
	for _, p := range l.Pauses {
		what := ""
		if p.GatewayType != nil {
			what = "type " + string(*p.GatewayType)
		} else if p.GatewayUrl != nil {
			what = *p.GatewayUrl
		}
		fmt.Fprintf(stdout, "paused: %s since %s\n", what, p.PausedAt.Format(time.RFC3339))
	}
	return nil
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
