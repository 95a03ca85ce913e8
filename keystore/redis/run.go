package redis

import (
	"context"
	"errors"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// call is one script run and what is sent with it in the same round trip.
type call struct {
	script *goredis.Script
	keys   []string
	args   []any
	// register, if not empty, is a namespace added to the namespaces set
	// in the same round trip.
	register string
	// waitAOF, if positive, follows the script with WAITAOF 1 0 waitAOF on
	// the same connection: the reply comes once the server's AOF holds the
	// script's writes on disk.
	waitAOF time.Duration
}

// answer is what came back from a call.
type answer struct {
	reply    any
	register error // the SADD's error; nil if none was sent
	aof      []int64
	aofErr   error
}

// run sends c in one round trip (two in a Cluster when it registers a
// namespace and waits for the AOF: the namespaces set lives on another
// node). A script the server does not have cached (NOSCRIPT: a fresh or
// restarted server, or SCRIPT FLUSH) did not run, so the round trip is sent
// again with the script's source.
func (s *Store) run(ctx context.Context, c call) (answer, error) {
	if c.register == "" && c.waitAOF <= 0 {
		v, err := c.script.Run(ctx, s.client, c.keys, c.args...).Result()
		return answer{reply: v}, err
	}
	a, err := s.pipelined(ctx, c, false)
	if isNoScript(err) {
		a, err = s.pipelined(ctx, c, true)
	}
	return a, err
}

func (s *Store) pipelined(ctx context.Context, c call, source bool) (answer, error) {
	p, apart, err := s.pipelineFor(ctx, c)
	if err != nil {
		return answer{}, err
	}
	var a answer
	if apart {
		a.register = s.client.SAdd(ctx, s.namespacesKey(), c.register).Err()
	}
	var reg *goredis.IntCmd
	if c.register != "" && !apart {
		reg = p.SAdd(ctx, s.namespacesKey(), c.register)
	}
	var sc *goredis.Cmd
	if source {
		sc = c.script.Eval(ctx, p, c.keys, c.args...)
	} else {
		sc = c.script.EvalSha(ctx, p, c.keys, c.args...)
	}
	var aof *goredis.Cmd
	if c.waitAOF > 0 {
		aof = p.Do(ctx, "WAITAOF", 1, 0, max(c.waitAOF.Milliseconds(), 1))
	}
	_, _ = p.Exec(ctx) // each command's error is read below
	if reg != nil {
		a.register = reg.Err()
	}
	if aof != nil {
		a.aof, a.aofErr = aof.Int64Slice()
	}
	a.reply, err = sc.Result()
	return a, err
}

// pipelineFor returns the pipeline that sends the round trip: the Store
// client's, or in a Cluster, when the script is followed by WAITAOF (which
// must go on the script's connection), one to the master of the record's
// slot; apart then says the namespaces set, on another slot, is written
// apart.
func (s *Store) pipelineFor(ctx context.Context, c call) (goredis.Pipeliner, bool, error) {
	cc, ok := s.client.(*goredis.ClusterClient)
	if !ok {
		return s.client.Pipeline(), false, nil
	}
	if c.waitAOF <= 0 {
		return cc.Pipeline(), false, nil
	}
	m, err := cc.MasterForKey(ctx, c.keys[0])
	if err != nil {
		return nil, false, err
	}
	return m.Pipeline(), c.register != "", nil
}

// isNoScript reports whether err says the server does not have the script
// cached.
func isNoScript(err error) bool {
	return err != nil && (errors.Is(err, goredis.ErrNoScript) || goredis.HasErrorPrefix(err, "NOSCRIPT"))
}
