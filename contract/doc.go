// Package contract holds code-execution contract v1's JSON wire shapes,
// their conversions to and from the port's types, the codes of its error
// bodies (ErrorCodes), and codeport's OpenAPI document of it (OpenAPI). It
// has no HTTP server: package server serves a port with these types, and
// adapters/http calls a remote backend with them.
//
// A contract v1 client uses the wire types the other way round from the
// server: ExecRequestFromPort to build a request body, ResultToPort to read
// the response, which tolerates the nulls and unknown fields other backends
// may send, and Error to read an error body, whose optional Code names the
// error for programs (port.ErrorFromCode rebuilds the port's error from it).
//
// OpenAPI returns the OpenAPI 3.1 document of what package server serves,
// which the server also serves on GET /openapi.yaml.
package contract
