// Package conformance is one suite of code-execution contract v1's
// semantics that every port.CodeExecutionPort must pass, whatever answers
// behind it: the in-process wasm adapter, httpadapter over `codeport serve`,
// or httpadapter over another team's backend.
//
// The checks are plain data (Checks), so the same suite runs from go test
// (Run, each check a subtest) and from the command line (`codeport
// conformance`, through RunChecks). Each check creates and destroys its own
// sessions, runs within CheckTimeout, and checks behaviour rather than
// wording: any error message, any traceback layout, any listing format.
// Tool kinds a backend does not offer (per Describe) are skipped with the
// reason "backend does not offer <kind>"; a kind it lists must pass.
//
// Checks whose subject is not the interpreter (sessions, files, errors, the
// editor) use code_execution where it is offered, and then test it too:
// that state persists in the interpreter, that a session's globals do not
// leak into another. Where it is not offered they run through the editor
// and the file operations instead, and the busy check makes a call last
// with Target.Stall, so that a backend without Python (port/porttest's
// fake) is still held to them rather than skipped.
//
// An adapter's test runs the suite like this:
//
//	func TestConformance(t *testing.T) {
//		a := newAdapter(t) // the adapter under test, closed by t.Cleanup
//		conformance.Run(t, func(t *testing.T) conformance.Target {
//			return conformance.Target{Port: a, MaxSessions: 4}
//		})
//	}
//
// and a program like this:
//
//	results := conformance.RunChecks(ctx, conformance.Target{Port: p}, nil)
//	for _, r := range results {
//		fmt.Println(r.Status, r.Name, r.Message)
//	}
//
// Code that sees only a check's context (an http.RoundTripper under an
// adapter, say) can fail that check with the package-level Errorf.
package conformance
