// Package guard is net/http middleware that makes an endpoint of your own
// (a BFF's /checkout, say) idempotent under the Idempotency-Key header of
// draft-ietf-httpapi-idempotency-key-header, on the same idempay.KeyStore
// as your charges: memory, file, PostgreSQL or Redis.
//
//	g, err := guard.New(store, guard.WithIdentity(tenantOf))
//	mux.Handle("POST /checkout", g.Wrap(checkout))
//
// For each guarded request (POST and PATCH unless WithMethods) the guard
// reads the key, asks who the caller is (WithIdentity: one tenant's key
// never replays another's response) and fingerprints the request. Then one
// atomic KeyStore.Reserve decides:
//
//   - a new key, or one released by a failed attempt: the handler runs,
//     holding a lease on the key (WithLease) that is renewed while it runs;
//   - a key another request holds: 409 with Retry-After;
//   - a key used with another request: 422;
//   - a key whose response is stored: that response, replayed byte for
//     byte, with Idempotency-Replayed: true.
//
// When the handler returns, the key follows the rule the idempay Client
// follows for a charge. A 2xx, or a 4xx the handler marked final
// (MarkFinal), is stored durably and replayed to every retry. A 5xx, a
// panic or an unmarked 4xx releases the key: the retry runs the handler
// again. A handler that cannot tell whether money moved calls
// MarkUnsettled: the key stays locked (409) until Guard.Settle records the
// answer or Guard.Reopen lets the handler run again; Guard.Unsettled lists
// them.
//
// A retry after a release or a crash is safe when the handler charges
// through idempay with the request's key as ChargeRequest.BaseKey (from
// KeyFrom): the charge resumes under the same provider key, and after an
// attempt that charged nothing the next one uses idempay.AttemptKey.
//
// An answer the guard may store (below 500) is held until its record is
// durable, so no client sees an answer whose retry could run the handler
// again; a store that refuses it for a whole lease turns it into 503
// store_unavailable. Records expire with the store's Expire from the time
// they closed: keep them longer than any client retries (24 hours at
// least). What the frontend is answered per outcome, what is stored, the
// costs and streaming are in README.md in this directory.
package guard
