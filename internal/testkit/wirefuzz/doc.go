// Package wirefuzz holds the fuzz targets of the wire layer: decoding
// contract v1 request bodies (FuzzDecodeRequest), the HTTP handler of
// package server on any request (FuzzHandler), and multipart uploads
// (FuzzUpload). It has no code of its own.
//
// They live apart from the packages they test because go test -fuzz
// instruments every package the test binary links. Beside server's other
// tests, which run the wasm adapter, worker processes and tracing, that
// was the whole module graph: 535 packages, about a minute of compiling on
// two cores before the first input. Here it is what the handler itself
// reaches, over port/porttest, whose sessions, workspace and editor are
// real and whose code execution echoes.
//
// Their seed corpora run with every go test; make fuzz runs each for its
// budget, and an input that fails is kept in testdata/fuzz:
//
//	go test -run '^$' -fuzz '^FuzzHandler$' -fuzztime 30s ./internal/testkit/wirefuzz
package wirefuzz
