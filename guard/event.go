package guard

// Outcome is what the guard did with one guarded request.
type Outcome int

// The outcomes, in Event.Outcome.
const (
	// Stored: the handler ran and its response was stored for replay.
	Stored Outcome = iota + 1
	// Released: the handler ran and its response was not stored (a 5xx,
	// a panic, a 3xx or 4xx not marked final): a retry runs it again.
	Released
	// Unsettled: the handler ran, marked the request unsettled and its
	// response was not stored, or its answer streamed with the key locked
	// and its close failed: the key stays locked until settled.
	Unsettled
	// NotStored: the handler ran and its response should have been stored
	// but outgrew the limit; replays answer 500 response_not_stored.
	NotStored
	// Unrecorded: the handler ran but the store did not take its outcome;
	// an answer the guard held was replaced by 503 store_unavailable, and
	// the key frees itself when the lease runs out.
	Unrecorded
	// Replayed: a stored response was replayed; the handler did not run.
	Replayed
	// InUse: another request with the key is running: 409.
	InUse
	// Locked: the key is unsettled: 409.
	Locked
	// Reused: the key was used with another request: 422.
	Reused
	// Refused: the request was refused before the store was asked: no or
	// a malformed key (400), no identity (401), a body too large (413) or
	// unreadable (400).
	Refused
	// StoreFailed: the store could not be asked; nothing ran: 503.
	StoreFailed
	// Corrupt: the stored result could not be read; nothing ran: 500.
	Corrupt
)

var outcomeNames = [...]string{"", "stored", "released", "unsettled", "not-stored", "unrecorded",
	"replayed", "in-use", "locked", "reused", "refused", "store-failed", "corrupt"}

// String returns the outcome's name, e.g. "replayed".
func (o Outcome) String() string {
	if o > 0 && int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "none"
}

// Ran reports whether the handler ran for this request.
func (o Outcome) Ran() bool { return o >= Stored && o <= Unrecorded }

// Event is what WithObserver's function sees of one guarded request. It
// holds no header and no body.
type Event struct {
	Outcome  Outcome
	Status   int    // the status the client was answered
	Key      string // the decoded Idempotency-Key, if it was valid
	Identity string // the caller, if known
	Method   string
	Path     string
}
