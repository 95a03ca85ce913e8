package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// Issue 8, item 10: a file store damaged between a kill and the restart
// (a disk that lost its last writes, a copy cut short). Before the file is
// opened again it may be damaged in one of these ways; then a child process
// opens it, because bbolt can die of SIGBUS on a short file, which no
// recover catches, and reads every record the store held. The oracle wants
// a typed error (filestore.ErrCorrupt, ErrFormat) or every record back;
// never a fresh empty store, never a crash. The undamaged file is then put
// back, as an operator restores a backup, and the seed goes on.

var damages = []string{"empty", "truncated to 8 KiB", "truncated to half", "last page cut", "a data page zeroed"}

// childEnv carries the open to the child: path, namespace, intents.
const childEnv = "IDEMPAY_SIM_CHILD_OPEN"

// childResult is what the child reports.
type childResult struct {
	OpenErr string   `json:"open_err,omitempty"`
	Typed   bool     `json:"typed"`
	Missing []string `json:"missing,omitempty"`
	LoadErr string   `json:"load_err,omitempty"`
}

func (w *world) damageCheck(ctx context.Context) {
	w.mu.Lock()
	n := w.kills
	w.mu.Unlock()
	if !w.d.chance(w.opt.damage, "damage", n) {
		return
	}
	sc, _ := w.storeConfig()
	held := w.heldIntents(ctx, sc)
	orig, err := os.ReadFile(sc.path)
	if err != nil {
		w.or.fatal("damage: read %s: %v", sc.path, err)
		return
	}
	kind := damages[w.d.intn(len(damages), "damage-kind", n)]
	if err := os.WriteFile(sc.path, damaged(orig, kind, w.d.intn(1<<20, "damage-page", n)), 0o600); err != nil {
		w.or.fatal("damage: %v", err)
		return
	}
	w.tr.add("", "world", "DAMAGE: the store file (%d bytes, %d records) is %s before the restart", len(orig), len(held), kind)
	w.judgeReopen(kind, sc.path, held)
	if err := os.WriteFile(sc.path, orig, 0o600); err != nil {
		w.or.fatal("damage: restore: %v", err)
	}
	w.tr.add("", "operator", "the undamaged file is restored")
}

// heldIntents lists the intents the store holds a record of, read from the
// file before it is damaged.
func (w *world) heldIntents(ctx context.Context, sc storeConfig) []string {
	s, closer, err := openStore(ctx, sc)
	if err != nil {
		w.or.fatal("damage: open before damage: %v", err)
		return nil
	}
	defer closer()
	var out []string
	for _, o := range w.orders {
		if _, ok, _ := loadRec(ctx, s, w.namespace(), o.id); ok {
			out = append(out, o.id)
		}
	}
	return out
}

// damaged returns a copy of b damaged as kind says (4 KiB pages).
func damaged(b []byte, kind string, pick int) []byte {
	const page = 4096
	out := bytes.Clone(b)
	switch kind {
	case "empty":
		return nil
	case "truncated to 8 KiB":
		return out[:min(len(out), 2*page)]
	case "truncated to half":
		return out[:len(out)/2]
	case "last page cut":
		return out[:max(len(out)-page, 0)]
	}
	if pages := len(out) / page; pages > 4 { // a data page: past the two meta pages and the freelist
		p := 3 + pick%(pages-3)
		clear(out[p*page : (p+1)*page])
	}
	return out
}

// judgeReopen opens the damaged file in a child and judges the answer.
func (w *world) judgeReopen(kind, path string, held []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestChildOpen$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+strings.Join(append([]string{path, w.namespace()}, held...), "\x1f"))
	out, err := cmd.CombinedOutput()
	line := childLine(out)
	switch {
	case line == "":
		w.or.report(checkStoreDamage, "", hintDamage, "opening the store file %s crashed the process (%v): %s", kind, err, crashLine(out))
		return
	}
	var r childResult
	if jerr := json.Unmarshal([]byte(line), &r); jerr != nil {
		w.or.fatal("damage: child said %q", line)
		return
	}
	w.tr.add("", "world", "reopen of the %s file: %+v", kind, r)
	switch {
	case r.OpenErr != "" && !r.Typed:
		w.or.report(checkStoreDamage, "", hintDamage, "opening the store file %s failed with an untyped error: %s", kind, r.OpenErr)
	case r.OpenErr == "" && len(r.Missing) > 0:
		w.or.report(checkStoreDamage, "", hintDamage, "the store file %s opened as a store that forgot %d of its %d records (%v): their next charge mints a new key",
			kind, len(r.Missing), len(held), r.Missing)
	case r.OpenErr == "" && r.LoadErr != "":
		w.or.report(checkStoreDamage, "", hintDamage, "the store file %s opened, then failed to read its records: %s", kind, r.LoadErr)
	}
}

func childLine(out []byte) string {
	for _, l := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(l, "SIMCHILD "); ok {
			return rest
		}
	}
	return ""
}

var hexAddr = regexp.MustCompile(`0x[0-9a-f]+`)

// crashLine picks the line of a crash that says what it was.
func crashLine(out []byte) string {
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "unexpected fault") {
			return hexAddr.ReplaceAllString(strings.TrimSpace(l), "0x…") // addresses differ from run to run
		}
	}
	return "no panic line in its output"
}

// childOpen is the child's side: open the file, read every record the
// parent expects, report.
func childOpen(spec string) childResult {
	parts := strings.Split(spec, "\x1f")
	path, ns, want := parts[0], parts[1], parts[2:]
	ctx := context.Background()
	s, closer, err := openStore(ctx, storeConfig{kind: "filestore", path: path, clock: time.Now})
	if err != nil {
		return childResult{OpenErr: err.Error(), Typed: corrupt(err)}
	}
	defer closer()
	var r childResult
	for _, id := range want {
		_, ok, err := loadRec(ctx, s, ns, id)
		switch {
		case err != nil && r.LoadErr == "":
			r.LoadErr = fmt.Sprintf("%s: %v", id, err)
		case err == nil && !ok:
			r.Missing = append(r.Missing, id)
		}
	}
	return r
}
