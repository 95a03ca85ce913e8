// Package idempaytest helps consumers of idempay test their own code, in
// the way net/http/httptest helps with HTTP. It imports no assertion
// library, has no globals and no init, and every helper can be used from
// parallel tests.
//
// It offers three levels of fake, from the most real to the most direct:
//
//   - Server: a payment provider on a loopback port, speaking the own-API
//     contract that idempay.OwnAPI speaks by default, with real
//     idempotency, scripted and random faults, declines (DeclineToken),
//     refunds, captures and cancels (RefundPath, CapturePath, CancelPath),
//     and the books of the money it moved (Ledger, CheckMoney). NewClient gives an idempay.Client wired to it
//     with an in-memory store and fast retries. Use it to test the code
//     around a real Client: what it does with each outcome, that it
//     resumes unknown charges, that it never charges twice (NewClient
//     closes the client and checks that when the test ends).
//   - FakeCharger: an idempay.Charger answering from a script, with no
//     network at all, for code that takes a Charger. It keeps a record per
//     intent as the Client's KeyStore does, and every rule of the Client's
//     that a caller can observe holds for it; the package's parity tests
//     run each rule against both.
//   - httpmock responders (ChargeResponder, PendingResponder,
//     DropResponder, ...): one exact answer of the contract per request,
//     for tests of how a Client reads a given answer.
//
// # The rules the fakes keep
//
// A charge has one of four outcomes, read with idempay.OutcomeOf; code
// under test should switch on all four:
//
//   - succeeded: a nil error and the charge;
//   - pending: the charge (State idempay.StatePending, its AuthorizeURL)
//     and an error matching idempay.ErrPending; the order is not paid yet,
//     and a later charge of the intent answers it as pending until it is
//     settled;
//   - failed: definitely no money moved;
//   - unknown: money may have moved; charge again with the same request.
//
// An intent is one order and may take several attempts, each with its own
// idempotency key, of which at most one succeeds. After a decline or an
// invalid request the same request is answered again with that refusal,
// and a request with other parameters (another card) begins the next
// attempt; after a failure that reached no provider, any request does.
// While an attempt is unknown or pending, other parameters are refused
// with idempay.ErrAttemptOpen, that attempt's outcome and no charge (so
// code that reads the charge on OutcomePending must check for it). A paid
// intent answers every later charge
// with its success, ParamsDiffer set when the parameters differ. A
// request's Key is used only to begin an attempt, and never one that an
// earlier, failed attempt used. Two requests are the same payment when all
// fields but Key are equal, the currency in any case and an empty map
// equal to none. Bad input (a nil context too) is refused before anything
// is stored, and a caller whose context ends while its charge runs is told
// idempay.ErrStoppedWaiting while the charge goes on.
//
// The Server cannot answer a pending charge; script one with FakeCharger's
// Pending, or answer it with PendingResponder.
//
// # Fakes of the providers
//
// The same kind of server for each provider idempay speaks to, with its
// real wire format, one package each so that a test compiles only the ones
// it uses: idempaytest/stripetest, idempaytest/omisetest and
// idempaytest/twoc2ptest. They share idempaytest/fakes: the Fault values
// and Rates, a Clock that moves only when told, and the Ledger whose Check
// (each server's CheckMoney) proves no intent was charged twice, no refund
// made twice, nothing refunded beyond what was charged. Give a server
// WithTest(t) and the check runs when the test ends.
//
// For webhook handlers, SignStripeWebhook and SignOmiseWebhook return the
// headers a provider would send with a body, signed with your test secret.
//
// # Using the responders
//
// The responders are github.com/jarcoal/httpmock Responders. Register them
// on a MockTransport of your own and give it to the client through
// idempay.Config.HTTPClient:
//
//	mock := httpmock.NewMockTransport()
//	mock.RegisterResponder(http.MethodPost, baseURL+idempaytest.ChargePath,
//		idempaytest.DropResponder().Then(idempaytest.ReplayResponder("ch_1")))
//	client, err := idempay.New(idempay.Config{BaseURL: baseURL, Store: memstore.New(),
//		HTTPClient: &http.Client{Transport: mock}, Retry: idempaytest.FastRetry()})
//	defer client.Close(ctx)
//
// Do not rely on httpmock.Activate: it replaces http.DefaultTransport,
// which a Client given its own HTTPClient never uses, and which every test
// of the process shares, so parallel tests would see each other's mocks.
//
// httpmock's Responder.Then chains answers for consecutive requests (above:
// the first answer is lost, the retry gets the replay), and
// Responder.HeaderSet adds headers, for example Stripe's replay spelling
// "Idempotent-Replayed".
package idempaytest
