//go:build wasip1

package main

// The messages of the guest's protocol with package wasmshell, JSON-encoded.
// The two sides are built from one source tree and embedded together;
// protocolVersion still guards against a stale artifact.

const protocolVersion = 1

// request is one bash call.
type request struct {
	Version int    `json:"version"`
	Command string `json:"command"`
}

// pythonRequest is a python command line run by the shell: the host runs
// it as a program of its own, in a fresh interpreter over the same mounts.
type pythonRequest struct {
	Argv  []string `json:"argv"`
	Stdin []byte   `json:"stdin"`
	Dir   string   `json:"dir"`
	Env   []string `json:"env"`
}

// pythonResult is what the program printed and how it ended. Error, when
// set, says why it could not run at all.
type pythonResult struct {
	Stdout []byte `json:"stdout"`
	Stderr []byte `json:"stderr"`
	Code   int    `json:"code"`
	Error  string `json:"error,omitempty"`
}

// chmod's answers.
const (
	chmodOK = iota
	chmodNotFound
	chmodRefused
	chmodFailed
)
