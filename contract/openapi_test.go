package contract_test

import (
	"slices"
	"testing"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/internal/openapispec"
)

// TestOpenAPIDocument checks that the embedded document is valid OpenAPI
// 3.1 and that it documents exactly the error codes the wire may carry, in
// ErrorCodes' order: a code added on one side only fails here.
func TestOpenAPIDocument(t *testing.T) {
	s, err := openapispec.Load()
	if err != nil {
		t.Fatal(err)
	}
	if s.Doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q", s.Doc.OpenAPI)
	}
	errSchema := s.Doc.Components.Schemas["Error"]
	if errSchema == nil || errSchema.Value == nil {
		t.Fatal("no Error schema")
	}
	if slices.Contains(errSchema.Value.Required, "code") {
		t.Error("code is required; it must stay optional for other backends")
	}
	code := errSchema.Value.Properties["code"]
	if code == nil || code.Value == nil {
		t.Fatal("Error has no code property")
	}
	var enum []string
	for _, v := range code.Value.Enum {
		s, ok := v.(string)
		if !ok {
			t.Fatalf("enum value %v is not a string", v)
		}
		enum = append(enum, s)
	}
	if want := contract.ErrorCodes(); !slices.Equal(enum, want) {
		t.Errorf("Error.code enum\n%v\nwant contract.ErrorCodes()\n%v", enum, want)
	}
}

func TestOpenAPICopies(t *testing.T) {
	doc := contract.OpenAPI()
	doc[0] = '!'
	if contract.OpenAPI()[0] == '!' {
		t.Error("OpenAPI() hands out the package's own bytes")
	}
}
