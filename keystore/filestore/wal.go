package filestore

import (
	"cmp"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/idempay/idempay"
	bolt "go.etcd.io/bbolt"
)

// The log: a file beside the store file (its path with logSuffix) that
// commits go to first, at the cost of one sync, where a bbolt commit costs
// two (data pages, then the meta page). Its entries are applied to the
// store file in one bbolt commit (a checkpoint) once the log holds
// checkpointBytes, and at Close, ListOpen and Expire; Open applies what a
// killed process left in it. After a Close the store file alone holds
// everything (a backup of a closed store needs only it).
//
// An entry is a 24-byte header (body length uint32, CRC-32C of the rest of
// the entry uint32, log sequence number uint64, the number of the first
// entry of the same commit uint64, all big-endian), then the
// record key (uvarint length, bytes) and the encoded record (codec.go).
// Entries follow each other from the start of the file with consecutive
// sequence numbers; the first is the one after the last applied, kept in
// the meta bucket. After a checkpoint writing starts again at offset 0, so
// that the file keeps its size and a sync does not have to write it; what
// follows the last entry (older entries, or a write a crash cut short)
// fails the sequence or the checksum and ends the log.
const (
	logSuffix       = "-log"
	logHeader       = 24
	checkpointBytes = 1 << 20
	// maxEntry bounds an entry's body, which bounds what a damaged length
	// can make Open read: far above any record.
	maxEntry = 64 << 20
)

// metaApplied is the sequence number of the last log entry applied to
// the store file; metaLogID is a random identity of the store file that
// every entry's checksum covers, so that a log left beside another store
// file (one deleted and created again) is never applied to it.
var (
	metaApplied = []byte("log-applied")
	metaLogID   = []byte("log-id")
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// wal is the log file and where the next entry goes. Only the committer
// touches it once the Store is open.
type wal struct {
	f   *os.File
	id  []byte // the store file's metaLogID
	off int64
	lsn uint64 // the last entry's
	buf []byte
}

// sum is the checksum of an entry whose header and body are e.
func sum(id, e []byte) uint32 {
	return crc32.Update(crc32.Checksum(id, crcTable), crcTable, e[8:])
}

// openLog opens (creating it, durably, if missing) the log of the store
// file at path.
func openLog(path string, mode fs.FileMode) (*os.File, error) {
	name := path + logSuffix
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		if f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE, mode); err == nil {
			err = syncDir(filepath.Dir(name))
		}
	}
	if err == nil {
		err = preallocate(f)
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		return nil, fmt.Errorf("the store's log %s: %w", name, unpath(err))
	}
	return f, nil
}

// preallocate writes zeros to the end of the first checkpoint's worth of
// log, once, and syncs them, so that log writes land in place and a sync
// has no size to record. Zeros end a log: no entry is numbered 0.
func preallocate(f *os.File) error {
	const size = checkpointBytes + 64<<10
	fi, err := f.Stat()
	if err != nil || fi.Size() >= size {
		return err
	}
	if _, err := f.WriteAt(make([]byte, size-fi.Size()), fi.Size()); err != nil {
		return err
	}
	return f.Sync()
}

// appendEntries writes the records of batch to the log after its last
// entry, one entry each, in the order of their write numbers, and syncs
// it. On an error nothing counts as written: the next call writes at the
// same place.
//
// The order is what lets unsynced writes depend on each other: a crash
// keeps a prefix of a torn commit's entries (readLog), so a record's last
// write in a commit is only ever kept with the records whose last write
// came before it (the ledger's charge facts with the close that follows
// them).
func (l *wal) appendEntries(batch map[string]dirtyRecord) error {
	if len(batch) == 0 {
		return nil
	}
	keys := make([]string, 0, len(batch))
	for k := range batch {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(batch[a].seq, batch[b].seq) })
	b := l.buf[:0]
	lsn := l.lsn
	first := lsn + 1
	for _, k := range keys {
		d := batch[k]
		lsn++
		start := len(b)
		b = append(b, make([]byte, logHeader)...)
		b = appendString(b, k)
		b = append(b, encodeRecord(d.rec)...)
		binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-logHeader))
		binary.BigEndian.PutUint64(b[start+8:], lsn)
		binary.BigEndian.PutUint64(b[start+16:], first)
		binary.BigEndian.PutUint32(b[start+4:], sum(l.id, b[start:]))
	}
	l.buf = b
	if _, err := l.f.WriteAt(b, l.off); err != nil {
		return err
	}
	if err := syncData(l.f); err != nil {
		return err
	}
	l.off += int64(len(b))
	l.lsn = lsn
	return nil
}

// logEntry is one entry read back.
type logEntry struct {
	key []byte
	rec idempay.Record
}

// readLog reads the entries of log file f that follow the applied one,
// up to the first that is not there: the end, a write cut short, or an
// entry of before the last checkpoint. A crash can cut a commit's write
// anywhere (its pages reach the disk in any order), but no later commit
// is written before it is synced: a sound entry further on of a commit
// that began after the missing entry means the log was damaged in the
// middle, which loses writes that were synced: an error matching
// ErrCorrupt.
func readLog(f *os.File, id []byte, applied uint64) ([]logEntry, error) {
	data, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<62))
	if err != nil {
		return nil, err
	}
	var out []logEntry
	off := 0
	for {
		e, n, ok := parseEntry(data[off:], id, applied+uint64(len(out))+1)
		if !ok {
			break
		}
		out = append(out, e)
		off += n
	}
	next := applied + uint64(len(out)) + 1
	for i := off + 1; i+logHeader <= len(data); i++ {
		lsn, first := binary.BigEndian.Uint64(data[i+8:]), binary.BigEndian.Uint64(data[i+16:])
		if first > next && first <= lsn && lsn < next+1<<20 {
			if _, _, ok := parseEntry(data[i:], id, lsn); ok {
				return nil, corrupt("the log %s is damaged at byte %d: entry %d follows, and the writes between are lost", f.Name(), off, lsn)
			}
		}
	}
	return out, nil
}

// parseEntry reads the entry at the start of b if it is whole, sound and
// numbered lsn.
func parseEntry(b, logID []byte, lsn uint64) (logEntry, int, bool) {
	if len(b) < logHeader {
		return logEntry{}, 0, false
	}
	n := int(binary.BigEndian.Uint32(b))
	if n > maxEntry || len(b) < logHeader+n || binary.BigEndian.Uint64(b[8:]) != lsn ||
		sum(logID, b[:logHeader+n]) != binary.BigEndian.Uint32(b[4:]) {
		return logEntry{}, 0, false
	}
	d := decoder{b: b[logHeader : logHeader+n]}
	key := []byte(d.string())
	if d.err != nil {
		return logEntry{}, 0, false
	}
	ns, id, err := splitRecordKey(key)
	if err != nil {
		return logEntry{}, 0, false
	}
	rec, err := decodeRecord(ns, id, d.b)
	if err != nil {
		return logEntry{}, 0, false
	}
	return logEntry{key: key, rec: rec}, logHeader + n, true
}

// logState reads what the store file says of its log: its identity (nil
// if it has none yet) and the last entry applied.
func logState(tx *bolt.Tx) (id []byte, applied uint64) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return nil, 0
	}
	if v := meta.Get(metaApplied); len(v) == 8 {
		applied = binary.BigEndian.Uint64(v)
	}
	if v := meta.Get(metaLogID); len(v) == 8 {
		id = append([]byte(nil), v...)
	}
	return id, applied
}

// applyLog applies the entries a process left in the log without a
// checkpoint, in Open's write transaction.
func applyLog(tx *bolt.Tx, entries []logEntry, applied uint64) error {
	if len(entries) == 0 {
		return nil
	}
	batch := make(map[string]dirtyRecord, len(entries))
	for _, e := range entries {
		batch[string(e.key)] = dirtyRecord{rec: e.rec} // later entries win
	}
	if err := commit(tx, batch); err != nil {
		return err
	}
	return putApplied(tx, applied+uint64(len(entries)))
}

// ensureLogID gives the store file its log identity if it has none.
func ensureLogID(tx *bolt.Tx, id []byte) ([]byte, error) {
	if id != nil {
		return id, nil
	}
	id = make([]byte, 8)
	if _, err := rand.Read(id); err != nil {
		return nil, err
	}
	return id, tx.Bucket(bucketMeta).Put(metaLogID, id)
}

func putApplied(tx *bolt.Tx, lsn uint64) error {
	return tx.Bucket(bucketMeta).Put(metaApplied, binary.BigEndian.AppendUint64(nil, lsn))
}
