package redis

import "strconv"

// keys are the Redis keys of one record and of its namespace's indexes.
type keys struct {
	record, open, closed string
}

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
		record: base + ":r:" + intentID,
		open:   base + ":open",
		closed: base + ":closed",
	}
}

// namespacesKey is the set of namespaces that have had records, which
// Expire walks because it is not given a namespace.
func (s *Store) namespacesKey() string { return s.cfg.prefix + "namespaces" }
