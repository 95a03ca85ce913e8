// Command idempay lets an operator see and settle idempay's records without
// writing Go: what is open, one intent, settling it, a reconcile pass, the
// attempt journal, and expiry.
//
//	idempay [-store URL] [-json] COMMAND [flags]
//
//	open                       list every open and pending record
//	show INTENT                one charge's record, with its earlier attempts
//	settle INTENT              settle one charge by lookup at the provider
//	reconcile                  settle every open record by lookup
//	journal [-since 24h|TIME] [-csv]   the attempt journal, as JSON lines or CSV
//	expire [-retention 720h] [-dry-run]   delete settled records past retention
//
// The store is named by -store or IDEMPAY_STORE: postgres://... (with
// idempay_schema and idempay_table query parameters if not the defaults),
// redis://... (idempay_prefix; idempay_lossy=true for a server that may lose
// writes, as redis.WithLossyServer), or http(s)://... for a service that mounts
// the admin.Handler: the way to reach a file store, whose lock admits the
// service's process only (the token comes from IDEMPAY_ADMIN_TOKEN). For
// PostgreSQL and Redis the provider comes from the environment:
// IDEMPAY_PROVIDER (ownapi, stripe, omise; default ownapi), IDEMPAY_BASE_URL,
// IDEMPAY_API_KEY, IDEMPAY_ACCOUNT, and IDEMPAY_LOOKUP_PATH for ownapi.
//
// Exit codes:
//
//	0  done, and nothing is left open (settle: succeeded)
//	1  could not do it: store, network or configuration error
//	2  usage error
//	3  records are left open or unknown (open: some are listed; settle:
//	   outcome unknown; reconcile: some could not be settled)
//	4  settle: pending at the provider (money has not moved yet)
//	5  settle: failed, definitely no money moved
//	6  show, settle: no such intent
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
)

// Exit codes; see the package doc.
const (
	exitOK        = 0
	exitError     = 1
	exitUsage     = 2
	exitUnsettled = 3
	exitPending   = 4
	exitFailed    = 5
	exitNotFound  = 6
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usageError is a command line that cannot run.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// exitError carries the exit code a command decided on.
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string { return e.err.Error() }
func (e *codeError) Unwrap() error { return e.err }

// run is the command: args without the program name, the environment, and
// where to write. It returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, getenv, stdout, stderr)
	var ue *usageError
	var ce *codeError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "idempay: %s\n%s", ue.msg, usage)
		return exitUsage
	case errors.As(err, &ce):
		if ce.err != nil && ce.code != exitUnsettled && ce.code != exitPending && ce.code != exitFailed {
			fmt.Fprintf(stderr, "idempay: %v\n", ce.err)
		}
		return ce.code
	}
	fmt.Fprintf(stderr, "idempay: %v\n", err)
	return exitError
}

const usage = `usage: idempay [-store URL] [-json] COMMAND [flags]
commands: open, show INTENT, settle INTENT, reconcile, journal [-since D|TIME] [-csv], expire [-retention D] [-dry-run]
`
