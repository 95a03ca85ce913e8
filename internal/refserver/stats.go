package refserver

// Stats counts what the server saw and did with charge requests. Keys and
// order IDs are counted across tenants.
type Stats struct {
	// Requests is the number of charge requests received, faulted or not.
	Requests int
	// ByKey counts charge requests per idempotency key (unquoted; only
	// keys that parsed).
	ByKey map[string]int
	// ByOrder counts charge requests per order_id (only bodies whose
	// order_id could be read).
	ByOrder map[string]int
	// KeysByOrder lists the distinct keys sent for each order_id, in the
	// order they were first seen. A client that keeps one key per intent
	// shows exactly one.
	KeysByOrder map[string][]string
	// Replays is the number of replayed responses actually sent.
	Replays int
	// Reclaims is the number of in-flight claims taken over after their
	// lease expired.
	Reclaims int
	// Faults counts the faults applied, by kind. A scripted or drawn fault
	// that did not apply (Mid on a replay, say) is not counted.
	Faults map[Fault]int
	// Statuses counts the responses sent to charge requests, by status.
	Statuses map[int]int
	// Lookups is the number of lookup requests (GET by order_id).
	Lookups int
	// Ops counts the refund, capture and cancel requests. Faults and
	// Statuses above count theirs too.
	Ops OpStats
}

// OpStats counts what the server saw of refund, capture and cancel
// requests, as Stats does of charges.
type OpStats struct {
	Requests int                 // received, faulted or not
	ByID     map[string]int      // requests per refund_id, capture_id or cancel_id
	KeysByID map[string][]string // the distinct keys sent for each operation ID
	Replays  int                 // replayed answers actually sent
	Lookups  int                 // lookup requests (GET)
}

// snapshot gathers the counts of both gates, as copies the caller may keep.
func (s *Server) snapshot() Stats {
	ch, op := s.charges.Traffic.Snapshot(), s.opGate.Traffic.Snapshot()
	for f, n := range op.Faults {
		ch.Faults[f] += n
	}
	for code, n := range op.Statuses {
		ch.Statuses[code] += n
	}
	return Stats{Requests: ch.Requests, ByKey: ch.ByKey, ByOrder: ch.ByID, KeysByOrder: ch.Keys, Replays: ch.Replays,
		Reclaims: int(s.reclaims.Load()), Faults: ch.Faults, Statuses: ch.Statuses, Lookups: int(s.lookups.Load()),
		Ops: OpStats{Requests: op.Requests, ByID: op.ByID, KeysByID: op.Keys, Replays: op.Replays,
			Lookups: int(s.opLookups.Load())}}
}
