package filestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
	bolt "go.etcd.io/bbolt"
)

// Environment of the damage child: the case to run, the undamaged file and
// the copy to damage.
const (
	damageCaseEnv = "IDEMPAY_FILESTORE_DAMAGE_CASE"
	damageBaseEnv = "IDEMPAY_FILESTORE_DAMAGE_BASE"
	damagePathEnv = "IDEMPAY_FILESTORE_DAMAGE_PATH"
)

// damageIntents is how many intents the undamaged file holds: enough for
// the records bucket to need a branch page over several leaves.
const damageIntents = 300

func damageID(i int) string { return fmt.Sprintf("intent-%04d", i) }

// layout is where things are in the undamaged file.
type layout struct {
	size     int64
	pageSize int64
	used     int64  // bytes below the high-water mark
	lastUsed uint64 // the last page in use (not free)
	meta     meta
	recRoot  uint64 // root page of bucket records (a branch page)
	recLeaf  uint64 // a leaf page under it
}

// damageCase damages a copy of the undamaged file. With afterOpen the
// child damages the file while its Store has it open, as a disk or an
// operator could.
type damageCase struct {
	name      string
	damage    func(t *testing.T, path string, l layout)
	afterOpen bool
}

func truncateTo(size func(l layout) int64) func(*testing.T, string, layout) {
	return func(t *testing.T, path string, l layout) {
		if err := os.Truncate(path, size(l)); err != nil {
			t.Fatal(err)
		}
	}
}

func zeroPage(page func(l layout) uint64) func(*testing.T, string, layout) {
	return func(t *testing.T, path string, l layout) {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt(make([]byte, l.pageSize), int64(page(l))*l.pageSize); err != nil {
			t.Fatal(err)
		}
	}
}

// damageCases must each give ErrCorrupt. Each failed before this package
// checked for damage (commit 6d33e90), as its comment says.
var damageCases = []damageCase{
	// Opened as a new, empty store: every key lost.
	{"empty", truncateTo(func(layout) int64 { return 0 }), false},
	// bbolt's "invalid database", not ErrCorrupt.
	{"100 bytes", truncateTo(func(layout) int64 { return 100 }), false},
	// bbolt's "file size too small", not ErrCorrupt.
	{"4 KiB", truncateTo(func(layout) int64 { return 4 << 10 }), false},
	// A panic ("invalid freelist page") in bolt.Open, or SIGBUS.
	{"8 KiB", truncateTo(func(layout) int64 { return 8 << 10 }), false},
	{"16 KiB", truncateTo(func(layout) int64 { return 16 << 10 }), false},
	{"half", truncateTo(func(l layout) int64 { return l.size / 2 }), false},
	// Cut at the start of the last page in use: bbolt grows the file
	// back with zeros, and the records on that page are silently lost.
	{"last used page cut", truncateTo(func(l layout) int64 { return int64(l.lastUsed) * l.pageSize }), false},
	// Opened, with the last transaction lost: bbolt falls back to the
	// other meta page, one transaction older.
	{"later meta page zeroed", zeroPage(func(l layout) uint64 { return l.meta.txid % 2 }), false},
	// bbolt's "invalid database", not ErrCorrupt.
	{"both meta pages zeroed", func(t *testing.T, p string, l layout) {
		zeroPage(func(layout) uint64 { return 0 })(t, p, l)
		zeroPage(func(layout) uint64 { return 1 })(t, p, l)
	}, false},
	// A panic ("invalid freelist page") in bolt.Open.
	{"freelist page zeroed", zeroPage(func(l layout) uint64 { return l.meta.freelist }), false},
	// A panic ("Page expected to be: N") in Load.
	{"root bucket page zeroed", zeroPage(func(l layout) uint64 { return l.meta.root }), false},
	{"records branch page zeroed", zeroPage(func(l layout) uint64 { return l.recRoot }), false},
	{"records leaf page zeroed", zeroPage(func(l layout) uint64 { return l.recLeaf }), false},
	// Damage while the store is open: a panic in Load; SIGBUS once the
	// file is shorter than the pages read.
	{"records leaf zeroed while open", zeroPage(func(l layout) uint64 { return l.recLeaf }), true},
	{"truncated to 8 KiB while open", truncateTo(func(layout) int64 { return 8 << 10 }), true},
}

// strictCases opened before with nothing lost, by luck: what they damaged
// was not in use. They give ErrCorrupt too, since Open cannot tell them
// from their harmful kin: a meta page cannot say which transaction it
// held once damaged, and a cut below the high-water mark is a cut into
// the pages bbolt says it uses.
var strictCases = []damageCase{
	{"earlier meta page zeroed", zeroPage(func(l layout) uint64 { return 1 - l.meta.txid%2 }), false},
	{"cut one page below the high-water mark", truncateTo(func(l layout) int64 { return l.used - l.pageSize }), false},
}

// slackCut cuts the file to its high-water mark, which loses nothing: the
// file must open, every key there.
var slackCut = damageCase{"slack cut", truncateTo(func(l layout) int64 { return l.used }), false}

// TestDamagedFiles opens damaged copies of a store file, each in a child
// process, since a fault that escaped would kill the process: every one
// must give an error matching ErrCorrupt, and the child must exit
// normally. A file cut short only past its last used page loses nothing
// and must open.
func TestDamagedFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	dir := t.TempDir()
	base := filepath.Join(dir, "base.db")
	makeDamageBase(t, base)
	l := readLayout(t, base)
	t.Logf("undamaged file: %d bytes, %d pages in use, records at page %d over leaf %d", l.size, l.used/l.pageSize, l.recRoot, l.recLeaf)
	for _, c := range slices.Concat(damageCases, strictCases) {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			if got := runDamageChild(t, base, dir, c.name); !strings.HasPrefix(got, "corrupt") {
				t.Errorf("%s: %s; want an error matching ErrCorrupt", c.name, got)
			}
		})
	}
	t.Run("slack_cut", func(t *testing.T) {
		t.Parallel()
		if got := runDamageChild(t, base, dir, "slack cut"); got != "ok" {
			t.Errorf("a file cut only past its last used page: %s; want it opened, every key there", got)
		}
	})
}

// runDamageChild runs the child on a copy of base damaged by the named
// case and returns its verdict, after checking that it exited normally.
func runDamageChild(t *testing.T, base, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".db")
	orig, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDamageChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), damageCaseEnv+"="+name, damageBaseEnv+"="+base, damagePathEnv+"="+path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: the child ended with %v; stderr:\n%.2000s", name, err, stderr.String())
	}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if v, ok := strings.CutPrefix(line, "verdict: "); ok {
			t.Logf("%s: %s", name, v)
			return v
		}
	}
	t.Fatalf("%s: the child gave no verdict; stdout:\n%s\nstderr:\n%s", name, stdout.String(), stderr.String())
	return ""
}

// TestDamageChild is the child half of TestDamagedFiles: it damages its
// copy, uses it as a service would and prints a verdict.
func TestDamageChild(t *testing.T) {
	name := os.Getenv(damageCaseEnv)
	if name == "" {
		t.Skip("runs only as the child of TestDamagedFiles")
	}
	c := slackCut
	for _, d := range slices.Concat(damageCases, strictCases) {
		if d.name == name {
			c = d
		}
	}
	path := os.Getenv(damagePathEnv)
	l := readLayout(t, os.Getenv(damageBaseEnv))
	if !c.afterOpen {
		c.damage(t, path, l)
	}
	err := useDamaged(path, func() { c.damage(t, path, l) }, c.afterOpen)
	switch {
	case err == nil:
		fmt.Println("verdict: ok")
	case errors.Is(err, ErrCorrupt):
		fmt.Println("verdict: corrupt:", err)
	case errors.Is(err, idempay.ErrNotFound):
		fmt.Println("verdict: a key is lost:", err)
	default:
		fmt.Println("verdict: other error:", err)
	}
}

// useDamaged opens the store at path and reads and writes it as a service
// would; with afterOpen it calls damage once the store is open. It returns
// the first error.
func useDamaged(path string, damage func(), afterOpen bool) error {
	s, err := Open(path, WithSweepInterval(0), WithOpenTimeout(time.Second))
	if err != nil {
		return err
	}
	defer s.Close()
	if afterOpen {
		damage()
	}
	ctx := context.Background()
	for i := range damageIntents {
		if _, err := s.Load(ctx, "t", damageID(i)); err != nil {
			return err
		}
	}
	if _, err := s.ListOpen(ctx, "t", idempay.Cursor{}, damageIntents); err != nil {
		return err
	}
	r := idempay.ReserveRequest{Namespace: "t", ID: "new", Attempt: 1, Key: "k", Fingerprint: "fp", Owner: "o", Lease: time.Minute}
	if _, err := s.Reserve(ctx, r); err != nil {
		return err
	}
	_, err = s.Expire(ctx, time.Hour)
	return err
}

// makeDamageBase writes the undamaged file: damageIntents intents, half of
// them succeeded.
func makeDamageBase(t *testing.T, path string) {
	s, err := Open(path, WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for i := range damageIntents {
		r := idempay.ReserveRequest{Namespace: "t", ID: damageID(i), Attempt: 1,
			Key: fmt.Sprintf("key-%04d-%s", i, strings.Repeat("x", 40)), Fingerprint: "fp", Owner: "o", Lease: time.Minute}
		if _, err := s.Reserve(ctx, r); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			continue
		}
		res := idempay.Resolution{Namespace: "t", ID: r.ID, Key: r.Key, State: idempay.StateSucceeded,
			Result: []byte(`{"status":"succeeded"}`)}
		if err := s.Resolve(ctx, res); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// readLayout finds the pages of the undamaged file that the cases damage.
func readLayout(t *testing.T, path string) layout {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := checkFile(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	l := layout{size: info.size, pageSize: int64(info.meta.pageSize), meta: info.meta}
	l.used = int64(info.meta.pgid) * l.pageSize
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, PreLoadFreelist: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		l.recRoot = uint64(tx.Bucket(bucketRecords).RootPage())
		for id := 2; id < int(info.meta.pgid); id++ {
			if p, err := tx.Page(id); err == nil && p != nil && p.Type != "free" {
				l.lastUsed = uint64(id)
			}
		}
		return nil
	})
	l.recLeaf = lastChild(t, path, l)
	return l
}

// lastChild reads the last element of the branch page l.recRoot: a
// branch element is pos and ksize (uint32 each), then the child's page.
func lastChild(t *testing.T, path string, l layout) uint64 {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := b[int64(l.recRoot)*l.pageSize:]
	if h := parseHeader(page); h.flags != branchPage {
		t.Fatalf("records root page %d has flags %#x; want a branch page", l.recRoot, h.flags)
	}
	count := int(binary.NativeEndian.Uint16(page[10:]))
	return binary.NativeEndian.Uint64(page[pageHeaderSize+(count-1)*16+8:])
}

// TestStoreRefusesCallsAfterDamage: once bbolt has stopped on a damaged
// page, the Store refuses every call, even on intact pages, and still
// closes. (A zeroed page makes bbolt panic, which is safe to test in this
// process; a fault is tested in the child, by TestDamagedFiles.)
func TestStoreRefusesCallsAfterDamage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keys.db")
	makeDamageBase(t, path)
	l := readLayout(t, path)
	s, err := Open(path, WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	zeroPage(func(l layout) uint64 { return l.recLeaf })(t, path, l)
	ctx := t.Context()
	var first error
	for i := range damageIntents {
		if _, first = s.Load(ctx, "t", damageID(i)); first != nil {
			break
		}
	}
	if !errors.Is(first, ErrCorrupt) {
		t.Fatalf("Load over a zeroed leaf = %v; want ErrCorrupt", first)
	}
	if _, err := s.Load(ctx, "t", damageID(0)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Load of an intact record after the damage = %v; want ErrCorrupt", err)
	}
	r := idempay.ReserveRequest{Namespace: "t", ID: "new", Attempt: 1, Key: "k", Fingerprint: "fp", Owner: "o", Lease: time.Minute}
	if _, err := s.Reserve(ctx, r); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Reserve after the damage = %v; want ErrCorrupt", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close after the damage = %v; want nil", err)
	}
}
