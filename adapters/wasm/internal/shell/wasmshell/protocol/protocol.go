// Package protocol is what the shell guest (../../guest) and its host
// (package wasmshell) exchange through the host module "codeport_shell":
// the messages, JSON-encoded in the guest's memory, and the numbers the host
// functions return. Both sides import it, so they cannot drift apart; the
// guest refuses a request of another Version (a stale artifact).
//
// It imports nothing beyond the standard library, so that it builds for
// wasip1 as well as for the host.
package protocol

// Module is the host module the guest imports its functions from.
const Module = "codeport_shell"

// Version is the version of the requests below.
const Version = 1

// Request is one bash call.
type Request struct {
	Version int    `json:"version"`
	Command string `json:"command"`
}

// PythonRequest is a python command line run by the shell: the host runs
// it as a program of its own, in a fresh interpreter over the same mounts.
type PythonRequest struct {
	Argv  []string `json:"argv"`
	Stdin []byte   `json:"stdin"`
	Dir   string   `json:"dir"`
	Env   []string `json:"env"`
}

// PythonResult is what the program printed and how it ended. Error, when
// set, says why it could not run at all.
type PythonResult struct {
	Stdout []byte `json:"stdout"`
	Stderr []byte `json:"stderr"`
	Code   int    `json:"code"`
	Error  string `json:"error,omitempty"`
}

// NoRequest is next_request's answer when the guest is to end.
const NoRequest = 0xFFFFFFFF

// Stop is stop_reason's answer: whether the call in progress is to stop.
type Stop uint32

const (
	StopNone      Stop = iota
	StopDeadline       // its deadline passed
	StopCancelled      // it was cancelled
)

// NoZone is zone's answer when there is no time zone of that name.
const NoZone = 0xFFFFFFFF

// MaxZoneName bounds the name zone looks up.
const MaxZoneName = 255

// chmod's answers.
const (
	ChmodOK = iota
	ChmodNotFound
	ChmodRefused
	ChmodFailed
)
