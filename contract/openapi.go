package contract

import _ "embed"

// openapiDoc is a string so that the package holds no mutable state.
//
//go:embed openapi.yaml
var openapiDoc string

// OpenAPI returns the OpenAPI 3.1 document describing what server.NewHandler
// serves: contract v1's operations with codeport's additive fields, and the
// operational routes. The handler serves the same bytes on GET /openapi.yaml.
// The caller owns the returned slice.
func OpenAPI() []byte { return []byte(openapiDoc) }
