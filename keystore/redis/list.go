package redis

import (
	"context"
	"fmt"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idempay/idempay"
)

// ListOpen implements idempay.KeyStore by keyset paging over the
// namespace's open index. Its order is the contract's: the score is
// CreatedAt in microseconds, exact in a double, and Redis orders members of
// equal score bytewise, as Go compares intent IDs.
//
// Each step reads a page of index entries after the cursor, then their
// records in one pipeline; an entry whose record was settled or began a
// new attempt in between is skipped and the next page read, so a short
// answer always means the end of the index.
func (s *Store) ListOpen(ctx context.Context, namespace string, after idempay.Cursor, limit int) ([]idempay.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, fmt.Errorf("redis: list open: limit %d is not positive", limit)
	}
	var out []idempay.Record
	pos := indexPos(after)
	for len(out) < limit {
		n := limit - len(out)
		entries, err := s.openPage(ctx, namespace, pos, n)
		if err != nil {
			return nil, fmt.Errorf("redis: list open: %w", err)
		}
		recs, err := s.openRecords(ctx, namespace, entries)
		if err != nil {
			return nil, fmt.Errorf("redis: list open: %w", err)
		}
		out = append(out, recs...)
		if len(entries) < n {
			break // the index holds no more
		}
		pos = entries[len(entries)-1].pos
	}
	return out, nil
}

// pos is a place in the open index: just after the entry (score, after),
// or before every entry (start), or after every entry of score (all). The
// last is where a cursor with a fraction of a microsecond lies: records'
// instants are whole microseconds, so all those of the score below it come
// before it.
type pos struct {
	start bool
	score int64
	after string
	all   bool
}

func indexPos(c idempay.Cursor) pos {
	if c.CreatedAt.IsZero() || c.CreatedAt.Before(time.Unix(0, 0)) {
		return pos{start: true}
	}
	us := micros(c.CreatedAt)
	if !c.CreatedAt.Equal(time.UnixMicro(us)) {
		return pos{score: us, all: true}
	}
	return pos{score: us, after: c.ID}
}

// entry is an open-index entry.
type entry struct {
	id  string
	pos pos
}

// openPage reads up to n entries after p, in one round trip: the members
// of p's own score that sort after p's member (ties share a microsecond, so
// there are few), and the first n entries of greater scores.
func (s *Store) openPage(ctx context.Context, namespace string, p pos, n int) ([]entry, error) {
	idx := s.keysOf(namespace, "").open
	from := "-inf"
	if !p.start {
		from = "(" + strconv.FormatInt(p.score, 10)
	}
	var ties *goredis.StringSliceCmd
	var rest *goredis.ZSliceCmd
	_, err := s.client.Pipelined(ctx, func(pl goredis.Pipeliner) error {
		if !p.start && !p.all {
			sc := strconv.FormatInt(p.score, 10)
			ties = pl.ZRangeByScore(ctx, idx, &goredis.ZRangeBy{Min: sc, Max: sc})
		}
		rest = pl.ZRangeByScoreWithScores(ctx, idx, &goredis.ZRangeBy{Min: from, Max: "+inf", Count: int64(n)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []entry
	if ties != nil {
		for _, id := range ties.Val() {
			if id > p.after && len(out) < n {
				out = append(out, entry{id: id, pos: pos{score: p.score, after: id}})
			}
		}
	}
	for _, z := range rest.Val() {
		if len(out) == n {
			break
		}
		id, _ := z.Member.(string)
		out = append(out, entry{id: id, pos: pos{score: int64(z.Score), after: id}})
	}
	return out, nil
}

// openRecords loads the records of entries in one pipeline, keeping those
// still open or pending at the place the entry says.
func (s *Store) openRecords(ctx context.Context, namespace string, entries []entry) ([]idempay.Record, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	cmds := make([]*goredis.MapStringStringCmd, len(entries))
	_, err := s.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for i, e := range entries {
			cmds[i] = p.HGetAll(ctx, s.keysOf(namespace, e.id).record)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]idempay.Record, 0, len(entries))
	for i, c := range cmds {
		h := c.Val()
		if len(h) == 0 {
			continue
		}
		r, err := decodeRecord(h)
		if err != nil {
			return nil, err
		}
		if r.State.Closed() || micros(r.CreatedAt) != entries[i].pos.score {
			continue // settled, or a new attempt listed further on
		}
		out = append(out, r)
	}
	return out, nil
}
