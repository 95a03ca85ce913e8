package filestore

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"math/bits"
	"os"
)

// The bbolt file layout that checkFile reads, as bbolt (its format version
// 2) writes it in the machine's byte order: pages of pageSize bytes, each
// with a 16-byte header (id uint64, flags uint16, count uint16, overflow
// uint32); pages 0 and 1 are meta pages, whose body is the meta below,
// protected by an FNV-1a checksum of its first 56 bytes.
const (
	pageHeaderSize = 16
	metaSize       = 64
	metaSummed     = 56

	boltMagic   = 0xED0CDAED
	boltVersion = 2

	branchPage   = 0x01
	leafPage     = 0x02
	metaPage     = 0x04
	freelistPage = 0x10

	noFreelist = ^uint64(0)
)

// pageHeader is the header of a page.
type pageHeader struct {
	id       uint64
	flags    uint16
	overflow uint32
}

// meta is the body of a meta page.
type meta struct {
	pageSize uint64
	root     uint64 // page of the root bucket
	freelist uint64 // first page of the freelist
	pgid     uint64 // high-water mark: pages in use are below it
	txid     uint64
}

// fileInfo is what checkFile learnt of a sound file.
type fileInfo struct {
	size int64
	meta meta // the meta page bbolt will use: the later transaction
}

// checkFile checks what can be checked of an existing store file before
// bbolt maps it into memory, with plain reads: bbolt takes a zero-length
// file for a new database, and reading past the end of a mapped file kills
// the process with SIGBUS. It requires both meta pages sound (a bad one
// would make bbolt fall back to the other, silently dropping the last
// transaction if the bad one was the later), in step (their transactions
// consecutive), and the file at least as long as the pages they say are in
// use, whose root and freelist pages must look like what they are. Any
// failure is a corruptError.
func checkFile(f *os.File) (fileInfo, error) {
	st, err := f.Stat()
	if err != nil {
		return fileInfo{}, err
	}
	info := fileInfo{size: st.Size()}
	if info.size == 0 {
		return info, corrupt("the file is empty: a store file never is, so its content was lost")
	}
	m0, err := readMeta(f, 0, 0)
	if err != nil {
		return info, corrupt("meta page 0: %v", err)
	}
	m1, err := readMeta(f, 1, m0.pageSize)
	if err != nil {
		return info, corrupt("meta page 1: %v", err)
	}
	if info.meta, err = pickMeta(m0, m1); err != nil {
		return info, err
	}
	if used := int64(max(m0.pgid, m1.pgid) * m0.pageSize); info.size < used {
		return info, corrupt("the file is %d bytes, shorter than the %d bytes its pages take (%d pages of %d): it was cut short",
			info.size, used, max(m0.pgid, m1.pgid), m0.pageSize)
	}
	return info, checkRoots(f, info.meta)
}

// readMeta reads and validates meta page id of a file whose page size is
// pageSize (0 when not known yet: page 0 says it).
func readMeta(f *os.File, id, pageSize uint64) (meta, error) {
	var b [pageHeaderSize + metaSize]byte
	if _, err := f.ReadAt(b[:], int64(id*pageSize)); err == io.EOF || err == io.ErrUnexpectedEOF {
		return meta{}, fmt.Errorf("missing: the file ends first")
	} else if err != nil {
		return meta{}, err
	}
	h, body := parseHeader(b[:]), b[pageHeaderSize:]
	ne := binary.NativeEndian
	switch {
	case ne.Uint32(body[0:]) != boltMagic:
		return meta{}, fmt.Errorf("no bbolt magic number: not a bbolt file, or the page was overwritten")
	case ne.Uint32(body[4:]) != boltVersion:
		return meta{}, fmt.Errorf("bbolt format version %d, not %d", ne.Uint32(body[4:]), boltVersion)
	case ne.Uint64(body[metaSummed:]) != fnvSum(body[:metaSummed]):
		return meta{}, fmt.Errorf("bad checksum")
	case h.id != id || h.flags != metaPage:
		return meta{}, fmt.Errorf("page header says page %d, flags %#x", h.id, h.flags)
	}
	m := meta{pageSize: uint64(ne.Uint32(body[8:])), root: ne.Uint64(body[16:]), freelist: ne.Uint64(body[32:]),
		pgid: ne.Uint64(body[40:]), txid: ne.Uint64(body[48:])}
	return m, checkMeta(m, id, pageSize)
}

// checkMeta checks the fields of a meta page whose checksum is good.
func checkMeta(m meta, id, pageSize uint64) error {
	switch {
	case m.pageSize < 1024 || m.pageSize > 1<<20 || bits.OnesCount64(m.pageSize) != 1:
		return fmt.Errorf("page size %d", m.pageSize)
	case pageSize != 0 && m.pageSize != pageSize:
		return fmt.Errorf("page size %d, page 0 says %d", m.pageSize, pageSize)
	case m.txid%2 != id:
		return fmt.Errorf("transaction %d on meta page %d", m.txid, id)
	case m.root < 2 || m.root >= m.pgid:
		return fmt.Errorf("root page %d out of the %d in use", m.root, m.pgid)
	case m.freelist != noFreelist && (m.freelist < 2 || m.freelist >= m.pgid):
		return fmt.Errorf("freelist page %d out of the %d in use", m.freelist, m.pgid)
	}
	return nil
}

// pickMeta returns the meta page of the later transaction, as bbolt uses,
// after checking that the two are consecutive, as bbolt writes them: one
// left behind by an older copy of the file would not be.
func pickMeta(m0, m1 meta) (meta, error) {
	later, earlier := m0, m1
	if m1.txid > m0.txid {
		later, earlier = m1, m0
	}
	if later.txid != earlier.txid+1 {
		return meta{}, corrupt("the meta pages are of transactions %d and %d, not consecutive", m0.txid, m1.txid)
	}
	return later, nil
}

// checkRoots checks the headers of the root bucket's page and of the
// freelist's pages, which bbolt reads first.
func checkRoots(f *os.File, m meta) error {
	h, err := readHeader(f, m.root, m.pageSize)
	if err != nil || h.id != m.root || (h.flags != branchPage && h.flags != leafPage) || m.root+uint64(h.overflow) >= m.pgid {
		return corrupt("root page %d is damaged (header %+v, %v)", m.root, h, err)
	}
	if m.freelist == noFreelist {
		return nil
	}
	h, err = readHeader(f, m.freelist, m.pageSize)
	if err != nil || h.id != m.freelist || h.flags != freelistPage || m.freelist+uint64(h.overflow) >= m.pgid {
		return corrupt("freelist page %d is damaged (header %+v, %v)", m.freelist, h, err)
	}
	return nil
}

func readHeader(f *os.File, id, pageSize uint64) (pageHeader, error) {
	var b [pageHeaderSize]byte
	if _, err := f.ReadAt(b[:], int64(id*pageSize)); err != nil {
		return pageHeader{}, err
	}
	return parseHeader(b[:]), nil
}

func parseHeader(b []byte) pageHeader {
	ne := binary.NativeEndian
	return pageHeader{id: ne.Uint64(b[0:]), flags: ne.Uint16(b[8:]), overflow: ne.Uint32(b[12:])}
}

func fnvSum(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}
