// Package wire holds what the form-encoded provider adapters
// (provider/stripe, provider/omise) do the same way: the charge POST with
// its idempotency key, the form's optional fields and metadata, the check
// of a header value such as an API version, and the quoted start of an
// answer that could not be read.
//
// Each adapter keeps its own parameter names, limits and error messages;
// only steps whose logic is identical live here.
package wire
