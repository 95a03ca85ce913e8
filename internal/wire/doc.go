// Package wire holds what the form-encoded provider adapters
// (provider/stripe, provider/omise) do the same way: the charge POST with
// its idempotency key, the form's optional fields and metadata, the check
// of a header value such as an API version, the quoted start of an
// answer that could not be read, and the construction-time checks of
// credentials and base URL that the adapters' CheckConfig share.
//
// Each adapter keeps its own parameter names, limits and error messages;
// only steps whose logic is identical live here.
package wire
