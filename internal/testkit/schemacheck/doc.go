// Package schemacheck holds only a test: it fuzzes a live codeport server
// with schemathesis, a property-based API tester driven by an OpenAPI
// document, to find where the server and contract/openapi.yaml disagree.
//
// package server's own tests validate the responses to requests someone
// thought of; schemathesis makes up well over a thousand more from the
// document itself, valid and invalid, and so finds both a server that
// answers what the document does not allow and a document that allows
// what the server refuses. Clients and `codeport conformance` trust the
// document, so either kind of disagreement is a defect, and the test fails
// until it is fixed.
//
// The test serves server.NewHandler over the real in-process adapter
// (wasmtest.New, with a cap of 4 sessions and 2-second timeouts) on
// loopback, behind a bearer token, and runs the schemathesis CLI against
// the document the server itself serves on /openapi.yaml: every phase
// (examples, coverage, fuzzing, and stateful sequences along the links
// schemathesis infers from created sessions), with a fixed seed, 50 cases
// per operation and phase, and one worker. These checks must hold for
// every response (the list is the test's checks variable):
//
//   - not_a_server_error: no 5xx, whatever the request
//   - status_code_conformance: every status is one the operation documents
//   - content_type_conformance: every Content-Type is documented
//   - response_headers_conformance: documented required headers are sent
//     and match their schemas (Retry-After, WWW-Authenticate, ...)
//   - response_schema_conformance: every body matches its schema
//   - negative_data_rejection: a request the document forbids is refused
//   - positive_data_acceptance: a request the document allows is accepted,
//     or refused only for the server's state (401, 403, 404, 409, 429)
//   - missing_required_header (no operation has one today),
//     unsupported_method, allow_header_conformance: a method a route does
//     not serve gets 405 with a correct Allow
//   - use_after_free, ensure_resource_availability: a created session can
//     be used at once, and a released one is gone
//
// ignored_auth cannot apply: the document makes the bearer token optional,
// as a deployment need not configure one (package server's tests check
// the 401s). object_level_authorization needs two identities.
//
// testdata/schemathesis.toml lets positive_data_acceptance accept the 400
// of the file operations, which the document reserves for a path that
// names a directory where a file was expected or the other way round: a
// refusal because of what the workspace holds, like a 404, not of the
// request's shape.
//
// The hooks in testdata/schemacheck_hooks.py release all but the newest
// three of the sessions schemathesis creates (so the cap is never reached
// and 503 at_capacity never stands in for another answer), aim some valid
// downloads and listings at a file that exists (so that a download's 200
// and a listing of a file are checked too), and drop three kinds of false
// positive, each explained there and counted in the test's log: requests
// the document's prose rules out but its schema cannot (an editor command
// short of a field it needs), and multipart bodies schemathesis cannot
// encode as it means to. Afterwards the test releases
// every session that was handed out and checks that none is alive; the
// server and then the adapter are closed when the test ends.
//
// The run takes about 20 to 40 seconds on 2 cores under -race. Run it alone
// with
//
//	go test -count=1 -v ./internal/testkit/schemacheck
//
// schemathesis is installed by pip into a virtual environment cached under
// the user cache directory (internal/testkit/pyvenv), so only the first run needs
// the network. Without python3, its venv module or pip the test is
// skipped with the reason, except under CI=true, where it fails; -short
// skips it too.
package schemacheck
