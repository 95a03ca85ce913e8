package redis

import (
	"context"
	"fmt"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Expire implements idempay.KeyStore. For each namespace it reads the
// closed index up to the cutoff's microsecond, WithExpireBatch entries at a
// time, and deletes the records created before cutoff in one script call per
// batch, so the server is never blocked for long. Open and pending records
// are never in the closed index and are checked again by the script before
// anything is deleted. If ctx ends, Expire returns what it deleted so far
// with the error.
//
// With WithClosedTTL, Redis also deletes settled records by itself, and
// Expire deletes only those still indexed (see WithClosedTTL).
func (s *Store) Expire(ctx context.Context, cutoff time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	cut := encodeCutoff(cutoff)
	// Entries of the cutoff's own microsecond may or may not be older than
	// the cutoff; the script decides on the exact nanoseconds.
	maxScore := "+inf"
	if cutoff.Before(maxTime) {
		maxScore = strconv.FormatFloat(score(cutoff), 'f', -1, 64)
		if cutoff.Before(time.Unix(0, 0)) {
			maxScore = "0"
		}
	}
	total := 0
	iter := s.client.SScan(ctx, s.namespacesKey(), 0, "", 100).Iterator()
	for iter.Next(ctx) {
		n, err := s.expireNamespace(ctx, iter.Val(), cut, maxScore)
		total += n
		if err != nil {
			return total, err
		}
	}
	if err := iter.Err(); err != nil {
		return total, fmt.Errorf("redis: expire: %w", err)
	}
	return total, nil
}

func (s *Store) expireNamespace(ctx context.Context, namespace, cut, maxScore string) (int, error) {
	closed := s.keysOf(namespace, "").closed
	total := 0
	// kept entries stay in the index at its end (they hold the highest
	// score in range), so the next batch starts after them.
	kept := int64(0)
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		ids, err := s.client.ZRangeByScore(ctx, closed, &goredis.ZRangeBy{
			Min: "-inf", Max: maxScore, Offset: kept, Count: int64(s.cfg.expireBatch),
		}).Result()
		if err != nil {
			return total, fmt.Errorf("redis: expire: %w", err)
		}
		if len(ids) == 0 {
			return total, nil
		}
		keys := make([]string, 0, len(ids)+1)
		args := make([]any, 0, len(ids)+1)
		keys = append(keys, closed)
		args = append(args, cut)
		for _, id := range ids {
			keys = append(keys, s.keysOf(namespace, id).record)
			args = append(args, id)
		}
		reply, err := expireScript.Run(ctx, s.client, keys, args...).Int64Slice()
		if err != nil {
			return total, fmt.Errorf("redis: expire: %w", err)
		}
		total += int(reply[0])
		kept += reply[1]
		if len(ids) < s.cfg.expireBatch {
			return total, nil
		}
	}
}
