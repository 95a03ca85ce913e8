// Package idempaytest helps consumers of idempay test their own code, in
// the way net/http/httptest helps with HTTP. It has no globals and no init,
// and every helper can be used from parallel tests.
//
// Three levels of fake, from the most real to the most direct:
//
//   - Server: a provider on a loopback port speaking the own-API contract
//     (idempay.OwnAPI), with real idempotency, scripted and random faults
//     (Fault), declines (DeclineToken), refunds, captures and cancels, and
//     the books of the money it moved (CheckMoney). NewClient wires an
//     idempay.Client to it with an in-memory store and FastRetry, and when
//     the test ends closes the client and fails the test if anything was
//     charged twice. The fakes of Stripe, Omise and 2C2P are in
//     idempaytest/stripetest, idempaytest/omisetest and
//     idempaytest/twoc2ptest; idempaytest/clients wires a client to each.
//
//   - FakeCharger: an idempay.Charger for code that takes one, with no
//     network. It is a real idempay.Client over an in-process provider
//     that answers from a script, one step per call that sends:
//
//     fake.OnIntent("order-1").Unknown().Succeed()
//
//     Its rules are the Client's, because the Client answers.
//
//   - httpmock responders (ChargeResponder, PendingResponder,
//     DropResponder, ...): one exact answer of the contract per request,
//     registered on an httpmock.MockTransport given to the client through
//     idempay.Config.HTTPClient. Do not use httpmock.Activate: it replaces
//     http.DefaultTransport, which every test of the process shares.
//
// Code under test should switch on all four outcomes, read with
// idempay.OutcomeOf: succeeded (a nil error and the charge), pending (the
// charge, State idempay.StatePending with its AuthorizeURL, and an error
// matching idempay.ErrPending), failed (definitely no money moved) and
// unknown (money may have moved: charge again with the same request).
//
// For webhook handlers, SignStripeWebhook and SignOmiseWebhook return the
// headers a provider would send with a body, signed with your test secret.
package idempaytest
