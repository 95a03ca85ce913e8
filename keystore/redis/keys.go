package redis

import "strconv"

// keys are the Redis keys of one record and of its namespace's indexes, in
// the order the scripts take them as KEYS.
type keys struct {
	record  string
	open    string // open and pending intents, score CreatedAt (µs)
	settled string // succeeded and failed intents, score ClosedAt (µs)
	// legacy is the old layout's index of closed intents, scored by
	// CreatedAt. Nothing adds to it any more; Expire moves its entries to
	// settled (see legacy.go) and the scripts drop an intent from it when
	// they touch the intent.
	legacy string
	// marker says the namespace's data set is whole: a write sequence
	// every Reserve advances, and the instant a loss was noticed (see
	// marker.go).
	marker string
}

// list returns the keys as a script's KEYS.
func (k keys) list() []string { return []string{k.record, k.open, k.settled, k.legacy} }

// nsTag is the Cluster hash tag of a namespace. The length prefix makes the
// key layout decodable whatever the namespace contains: without it, the
// namespace "a}:r:b" with intent "c" and the namespace "a" with intent
// "b}:r:c" could produce the same key. A '}' inside the namespace ends the
// hash tag early, which only moves the namespace to another slot: every key
// of the namespace still carries the same tag.
func nsTag(namespace string) string {
	return "{" + strconv.Itoa(len(namespace)) + ":" + namespace + "}"
}

func (s *Store) keysOf(namespace, intentID string) keys {
	base := s.cfg.prefix + nsTag(namespace)
	return keys{
		record:  base + ":r:" + intentID,
		open:    base + ":open",
		settled: base + ":settled",
		legacy:  base + ":closed",
		marker:  base + ":marker",
	}
}

// namespacesKey is the set of namespaces that may have settled records,
// which Expire walks because it is not given a namespace. It lives in a
// slot of its own, so no script may touch it: every closing Resolve adds
// its namespace in the same round trip as its script instead.
func (s *Store) namespacesKey() string { return s.cfg.prefix + "namespaces" }
