// Package idempaytest helps consumers of idempay test their own code, in
// the way net/http/httptest helps with HTTP. It imports no assertion
// library, has no globals and no init, and every helper can be used from
// parallel tests.
//
// It offers three levels of fake, from the most real to the most direct:
//
//   - Server: a payment provider on a loopback port, speaking the own-API
//     contract that idempay.OwnAPI speaks by default, with real
//     idempotency, scripted and random faults, and a ledger of charges.
//     NewClient gives an idempay.Client wired to it with an in-memory
//     store and fast retries. Use it to test the code around a real
//     Client: what it does with each outcome, that it resumes unknown
//     charges, that it never charges twice (NewClient checks that when
//     the test ends).
//   - FakeCharger: an idempay.Charger answering from a script, with no
//     network at all, for code that takes a Charger. Its errors behave as
//     the Client's under errors.Is, errors.As and idempay.OutcomeOf, and
//     it models idempotency: replays of settled intents and
//     idempay.ErrIntentMismatch for an intent re-used with other
//     parameters.
//   - httpmock responders (ChargeResponder, DropResponder, ...): one exact
//     answer of the contract per request, for tests of how a Client reads
//     a given answer.
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
