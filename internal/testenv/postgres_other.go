//go:build !unix

package testenv

// FreezeWALWriter is not available off Unix: the test is skipped (failed
// under CI).
func (p *Postgres) FreezeWALWriter() {
	p.tb.Helper()
	Unavailable(p.tb, "freezing the WAL writer needs a Unix system")
}

func (p *Postgres) killFrozen() {}
