// Package guard is net/http middleware that makes an endpoint of your own
// (a BFF's /checkout, say) idempotent under the Idempotency-Key header of
// draft-ietf-httpapi-idempotency-key-header, on the same idempay.KeyStore
// as your charges: memory, file, PostgreSQL or Redis.
//
//	g, err := guard.New(store, guard.WithIdentity(tenantOf))
//	mux.Handle("POST /checkout", g.Wrap(checkout))
//
// For each guarded request (POST and PATCH unless WithMethods) the guard
// reads the key (as a bare token or as the draft's structured-field
// string), asks the application who the caller is (WithIdentity), reads
// the body up to a limit and fingerprints method, path and query, caller
// and body. Then one atomic KeyStore.Reserve decides:
//
//   - a new key, or one released by a failed attempt: the handler runs,
//     holding a lease on the key that is renewed while it runs;
//   - a key another request holds: 409 with Retry-After;
//   - a key used with another request: 422;
//   - a key whose response is stored: the response, replayed byte for
//     byte with its replay headers and Idempotency-Replayed: true.
//
// Keys are scoped by caller: the record of a request is found by a hash of
// the caller's identity and the key, so one tenant's key can never replay
// another tenant's response.
//
// # Three outcomes, on the server side
//
// What becomes of the key when the handler returns follows the rule the
// idempay Client follows for a charge: succeeded, definitely failed, or
// unknown.
//
//   - Succeeded (2xx), or definitely failed and marked so (a 4xx after
//     MarkFinal): the response is stored, durably, and every retry gets it.
//   - Failed without effect (a 5xx, a panic, a 3xx or 4xx not marked
//     final): the key is released, and a retry runs the handler again.
//   - Unknown (the handler called MarkUnsettled: money may have moved, and
//     running it again could move it twice) and not answered for good:
//     the key stays locked; every retry gets 409 until the application
//     records the answer with Guard.Settle, or lets the handler run again
//     with Guard.Reopen. Guard.Unsettled lists them.
//
// A process that dies while its handler runs leaves the key leased; the
// lease runs out within WithLease (10 s by default) and the next retry
// runs the handler again. That, and a retry after a 5xx, is safe when the
// handler charges through idempay with the request's key
// (idempay.ChargeRequest.BaseKey = KeyFrom(ctx)): the charge is resumed
// under the same key, and the provider answers it from its record; after
// an attempt that failed with nothing charged, the retry begins the next
// attempt under idempay.AttemptKey(key, n).
//
// # What the frontend is answered
//
// With the handler of examples/bff (and the README), per outcome of the
// charge:
//
//	succeeded            201, stored: every retry gets it, replayed
//	pending              202, stored: the frontend follows the authorize URL
//	declined             402 after MarkFinal, stored: final, replayed
//	invalid              422 after MarkFinal, stored: final, replayed
//	failed, nothing      503 + Retry-After, released: retry with the same
//	charged (outage)     key; the retry begins the next attempt
//	unknown              503 + Retry-After, released: retry with the same
//	                     key; the retry resumes the same attempt under the
//	                     same provider key (a handler that cannot resume
//	                     calls MarkUnsettled: 409 until Guard.Settle)
//	the store down       503 store_unavailable: retry with the same key
//
// Mark a request unsettled only where running the handler again could
// repeat an effect that no key protects.
//
// # What is stored
//
// The status, the headers in the replay list (DefaultReplayHeaders and
// WithReplayHeaders; never those of DefaultSecretHeaders, such as
// Set-Cookie and Authorization) and the body as the handler wrote it (not
// as far as the connection took it: a client gone mid-answer, or an
// http.TimeoutHandler outside the guard, do not cut it), up to
// WithMaxResponse. A Content-Type the handler left to net/http's sniffing
// is fixed from the first bytes written, so every replay carries the one
// the first answer did.
// Trailers and 1xx responses are not stored. A response to store whose
// body is larger is still sent, and the record is closed with a marker:
// every replay answers 500 response_not_stored, marked replayed, so that
// a client (the idempay Client among them) stops and looks the result up
// instead of sending the operation again under a new key. Records are
// deleted by the store's Expire like charge records, from the time they
// were closed; a retry after that runs the handler again, so keep records
// longer than any client retries (24 hours at least). A released record
// is closed as released, and expires the same way from its release (its
// retry begins the record's next attempt); locked records are never
// expired.
//
// # What it costs
//
// A first request costs two store round trips (Reserve, then the close:
// with the response, as released, or locked), a retry of a released key
// one more (the Reserve that begins its next attempt), a replay, a 409 or
// a 422 one. A handler that runs longer than
// a third of the lease adds one renewal per third.
//
// # Streaming
//
// An answer below 500 (one the guard may store: a 2xx, a 4xx marked
// final), and any answer of a request marked unsettled, is held until its
// record (the response, or the lock) is written durably, written again
// after a store error while the lease is kept: no client sees an answer
// whose retry could find the key free and run the handler again. If the
// store refuses it for a whole lease, the client gets 503
// store_unavailable in its place. A 5xx goes to the client as it is
// written (its key is released either way).
//
// A handler that flushes a held answer, or writes one larger than
// WithMaxResponse, streams from then on: an answer to store only once the
// key is locked durably (two round trips more), so that if its close then
// fails for good, retries get 409 idempotency_key_unsettled until
// Guard.Settle, never a second run; if the lock cannot be written, the
// answer stays held. An unsettled request's answer always waits for its
// lock. A handler that hijacks the connection (WebSocket) cannot be
// guarded: the ResponseWriter does not offer Hijack.
package guard
