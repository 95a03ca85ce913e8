package postgres

import (
	"fmt"
	"regexp"
)

// Defaults for the options.
const (
	DefaultSchema      = "public"
	DefaultTable       = "idempay_records"
	DefaultExpireBatch = 1000
)

// Option configures a Store. Options validate their input: New returns the
// error of the first invalid one.
type Option func(*config) error

type config struct {
	schema         string
	table          string
	expireBatch    int
	migrate        bool
	durableResolve bool
}

func defaultConfig() config {
	return config{
		schema:      DefaultSchema,
		table:       DefaultTable,
		expireBatch: DefaultExpireBatch,
		migrate:     true,
	}
}

// identRE accepts the identifiers the store is willing to create. Lower case
// only: PostgreSQL folds unquoted names to lower case, so a mixed-case name
// would be a different table for anyone typing it in psql.
var identRE = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// maxTableLen leaves room in PostgreSQL's 63-byte identifier limit for the
// suffixes of the version table and the indexes derived from the table name;
// PostgreSQL would silently truncate a longer name, and two stores could then
// share an index name.
const maxTableLen = 40

// WithSchema sets the schema holding the table (default "public"). The
// schema is created if it does not exist. name must be a lower-case SQL
// identifier of at most 63 bytes.
func WithSchema(name string) Option {
	return func(c *config) error {
		if !identRE.MatchString(name) || len(name) > 63 {
			return fmt.Errorf("postgres: invalid schema name %q: want [a-z_][a-z0-9_]*, at most 63 bytes", name)
		}
		c.schema = name
		return nil
	}
}

// WithTable sets the table name (default "idempay_records"). name must be a
// lower-case SQL identifier of at most 40 bytes.
func WithTable(name string) Option {
	return func(c *config) error {
		if !identRE.MatchString(name) || len(name) > maxTableLen {
			return fmt.Errorf("postgres: invalid table name %q: want [a-z_][a-z0-9_]*, at most %d bytes", name, maxTableLen)
		}
		c.table = name
		return nil
	}
}

// WithExpireBatch sets how many records one DELETE of Expire removes
// (default 1000). Expire loops until nothing is left, so the batch bounds how
// long each statement holds its row locks, not how much Expire deletes.
func WithExpireBatch(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("postgres: expire batch must be positive, got %d", n)
		}
		c.expireBatch = n
		return nil
	}
}

// WithoutMigration makes New skip Migrate, for deployments where the schema
// is applied by a separate step with more privileges than the service has.
// Store methods then fail if the table does not exist.
func WithoutMigration() Option {
	return func(c *config) error {
		c.migrate = false
		return nil
	}
}

// WithDurableResolve makes every Resolve durable, as if each Resolution
// said Durable: its commit waits for the WAL flush, as Reserve's always
// does. It is not needed for correctness: a Resolution that must survive a
// crash says so itself (the idempay.Claim sets Durable on every failed
// close and on every close of a webhook handler, a guarded endpoint or the
// ledger), and this store honours it per call whatever the option.
// Without it, a Resolution without Durable (a charge's or an operation's
// succeeded or pending close) commits with synchronous_commit off, which
// the KeyStore contract allows (the record reopens with a key the provider
// has seen, and resuming it is answered by a replay or lookup) and which
// spares a charge its second fsync. Use the option when
// something else reads the table and must never see a settled record
// revert to open after a database crash. It can only add durability, never
// remove it.
func WithDurableResolve() Option {
	return func(c *config) error {
		c.durableResolve = true
		return nil
	}
}
