// Package openapispec loads codeport's OpenAPI document (contract.OpenAPI)
// for validation, once for the CLI's conformance command and the tests of
// contract and package server alike.
//
//	spec, err := openapispec.Load()
//	route, params, err := spec.Router.FindRoute(req)
package openapispec

import (
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/codeport/codeport/contract"
)

// Spec is the loaded, validated document and a router over its paths.
type Spec struct {
	Doc    *openapi3.T
	Router routers.Router
}

// Load parses and validates contract/openapi.yaml and builds its router.
func Load() (*Spec, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(contract.OpenAPI())
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	return &Spec{Doc: doc, Router: router}, nil
}
