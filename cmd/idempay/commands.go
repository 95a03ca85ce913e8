package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/admin"
)

// out is where a command writes, and how.
type out struct {
	stdout, stderr io.Writer
	json           bool
}

func (o out) emit(v any, table func(w *tabwriter.Writer)) error {
	if o.json {
		enc := json.NewEncoder(o.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	tw := tabwriter.NewWriter(o.stdout, 0, 4, 2, ' ', 0)
	table(tw)
	return tw.Flush()
}

func dispatch(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idempay", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	store := fs.String("store", getenv("IDEMPAY_STORE"), "the store's URL")
	asJSON := fs.Bool("json", false, "JSON instead of tables")
	if err := fs.Parse(args); err != nil {
		return usagef("%v", err)
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return usagef("no command")
	}
	cmd, cargs := rest[0], rest[1:]
	run, ok := commands[cmd]
	if !ok {
		return usagef("unknown command %q", cmd)
	}
	ops, closeOps, err := connect(ctx, *store, getenv)
	if err != nil {
		return err
	}
	defer closeOps()
	return run(ctx, ops, cargs, out{stdout: stdout, stderr: stderr, json: *asJSON})
}

var commands = map[string]func(context.Context, admin.Ops, []string, out) error{
	"open":      cmdOpen,
	"show":      cmdShow,
	"settle":    cmdSettle,
	"reconcile": cmdReconcile,
	"journal":   cmdJournal,
	"expire":    cmdExpire,
}

func noArgs(name string, args []string) error {
	if len(args) != 0 {
		return usagef("%s takes no arguments", name)
	}
	return nil
}

func oneIntent(name string, args []string) (string, error) {
	if len(args) != 1 || args[0] == "" {
		return "", usagef("%s takes one INTENT", name)
	}
	return args[0], nil
}

func cmdOpen(ctx context.Context, ops admin.Ops, args []string, o out) error {
	if err := noArgs("open", args); err != nil {
		return err
	}
	items, err := ops.Open(ctx)
	if err != nil {
		return err
	}
	if err := o.emit(items, func(w *tabwriter.Writer) {
		fmt.Fprintln(w, "KIND\tID\tATTEMPT\tSTATE\tCREATED\tLEASED TO")
		for _, it := range items {
			lease := ""
			if it.LeaseOwner != "" && it.LeaseUntil.After(time.Now()) {
				lease = it.LeaseOwner
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\n", it.Kind, it.ID, it.Attempt, it.State, it.CreatedAt.UTC().Format(time.RFC3339), lease)
		}
	}); err != nil {
		return err
	}
	if len(items) > 0 {
		return &codeError{code: exitUnsettled, err: fmt.Errorf("%d open", len(items))}
	}
	return nil
}

func cmdShow(ctx context.Context, ops admin.Ops, args []string, o out) error {
	id, err := oneIntent("show", args)
	if err != nil {
		return err
	}
	rec, err := ops.Show(ctx, id)
	if errors.Is(err, idempay.ErrNotFound) {
		return &codeError{code: exitNotFound, err: fmt.Errorf("no record for intent %q", id)}
	}
	if err != nil {
		return err
	}
	rec.Result = nil
	for i := range rec.History {
		rec.History[i].Result = nil
	}
	return o.emit(rec, func(w *tabwriter.Writer) {
		fmt.Fprintln(w, "ATTEMPT\tKEY\tSTATE\tCREATED\tCLOSED\tPROVIDER REF")
		for _, p := range rec.History {
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\n", p.Attempt, p.Key, p.State, stamp(p.CreatedAt), stamp(p.ClosedAt), p.ProviderRef)
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\n", rec.Attempt, rec.Key, rec.State, stamp(rec.CreatedAt), stamp(rec.ClosedAt), rec.ProviderRef)
	})
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func cmdSettle(ctx context.Context, ops admin.Ops, args []string, o out) error {
	id, err := oneIntent("settle", args)
	if err != nil {
		return err
	}
	s, err := ops.Settle(ctx, id)
	if errors.Is(err, idempay.ErrNotFound) {
		return &codeError{code: exitNotFound, err: fmt.Errorf("no record for intent %q", id)}
	}
	if err != nil {
		return err
	}
	if err := o.emit(s, func(w *tabwriter.Writer) {
		fmt.Fprintln(w, "INTENT\tOUTCOME\tSTATE\tCHARGE\tDETAIL")
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", s.IntentID, s.Outcome, s.State, s.ChargeID, s.Error)
	}); err != nil {
		return err
	}
	switch s.Outcome {
	case idempay.OutcomeSucceeded:
		return nil
	case idempay.OutcomePending:
		return &codeError{code: exitPending, err: errors.New(s.Error)}
	case idempay.OutcomeFailed:
		return &codeError{code: exitFailed, err: errors.New(s.Error)}
	}
	return &codeError{code: exitUnsettled, err: errors.New(s.Error)}
}

func cmdReconcile(ctx context.Context, ops admin.Ops, args []string, o out) error {
	if err := noArgs("reconcile", args); err != nil {
		return err
	}
	var (
		mu   sync.Mutex
		last time.Time
	)
	progress := func(p idempay.ReconcileProgress) { // called by several workers at once
		mu.Lock()
		defer mu.Unlock()
		// A line at most every second, so a long run shows it is alive.
		if now := time.Now(); now.Sub(last) >= time.Second {
			last = now
			fmt.Fprintf(o.stderr, "reconcile: %d done, %d settled, %d left open\n", p.Done, p.Settled, p.Unsettled)
		}
	}
	rep, err := ops.Reconcile(ctx, progress)
	if err != nil {
		return err
	}
	if err := o.emit(rep, func(w *tabwriter.Writer) {
		fmt.Fprintln(w, "KIND\tID\tWAS\tNOW\tBY\tTRIES\tREASON")
		for _, list := range [][]idempay.ReconcileItem{rep.Settled, rep.Unsettled} {
			for _, it := range list {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", it.Kind, it.ID, it.Was, it.State, it.By, it.Tries, it.Reason)
			}
		}
	}); err != nil {
		return err
	}
	fmt.Fprintf(o.stderr, "reconcile: %d settled, %d left open\n", len(rep.Settled), len(rep.Unsettled))
	if len(rep.Unsettled) > 0 {
		return &codeError{code: exitUnsettled, err: fmt.Errorf("%d left open", len(rep.Unsettled))}
	}
	return nil
}

func cmdJournal(ctx context.Context, ops admin.Ops, args []string, o out) error {
	fs := flag.NewFlagSet("journal", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	since := fs.String("since", "24h", "a duration back from now, or an RFC 3339 time")
	asCSV := fs.Bool("csv", false, "CSV instead of JSON lines")
	if err := fs.Parse(args); err != nil {
		return usagef("journal: %v", err)
	}
	from, err := parseSince(*since, time.Now())
	if err != nil {
		return usagef("journal: -since: %v", err)
	}
	var buf bytes.Buffer
	if _, err := ops.Journal(ctx, from, &buf); err != nil {
		return err
	}
	if !*asCSV {
		_, err := o.stdout.Write(buf.Bytes())
		return err
	}
	_, err = idempay.WriteJournalCSV(o.stdout, decodeLines(&buf))
	return err
}

// decodeLines reads JSON lines of journal entries.
func decodeLines(r io.Reader) func(yield func(idempay.JournalEntry, error) bool) {
	return func(yield func(idempay.JournalEntry, error) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			var e idempay.JournalEntry
			err := json.Unmarshal(sc.Bytes(), &e)
			if !yield(e, err) || err != nil {
				return
			}
		}
		if err := sc.Err(); err != nil {
			yield(idempay.JournalEntry{}, err)
		}
	}
}

func parseSince(v string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(v); err == nil {
		return now.Add(-d), nil
	}
	return time.Parse(time.RFC3339Nano, strings.TrimSpace(v))
}

func cmdExpire(ctx context.Context, ops admin.Ops, args []string, o out) error {
	fs := flag.NewFlagSet("expire", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	retention := fs.Duration("retention", 30*24*time.Hour, "how long settled records are kept after they closed")
	dry := fs.Bool("dry-run", false, "change nothing; say what the journal would close")
	if err := fs.Parse(args); err != nil {
		return usagef("expire: %v", err)
	}
	if *retention <= 0 {
		return usagef("expire: -retention must be positive")
	}
	e, err := ops.Expire(ctx, *retention, *dry)
	if err != nil {
		return err
	}
	return o.emit(e, func(w *tabwriter.Writer) {
		fmt.Fprintln(w, "DRY RUN\tRECORDS DELETED\tJOURNAL RECORDS CLOSED")
		records := fmt.Sprint(e.Records)
		if e.Records < 0 {
			records = "(not countable without deleting)"
		}
		fmt.Fprintf(w, "%t\t%s\t%d\n", e.DryRun, records, e.Journal)
	})
}
