// Package protocol is what the shell guest (../../guest) and its host
// (package wasmshell) exchange through the host module "codeport_shell":
// the messages in the guest's memory (a request in the few bytes of
// EncodeRequest, python's JSON-encoded), and the numbers the host
// functions return. Both sides import it, so they cannot drift apart; the
// guest refuses a request of another Version (a stale artifact).
//
// It imports nothing beyond the standard library, so that it builds for
// wasip1 as well as for the host.
package protocol

import (
	"encoding/binary"
	"unicode/utf8"
)

// Module is the host module the guest imports its functions from.
const Module = "codeport_shell"

// Version is the version of the requests below.
const Version = 2

// EncodeRequest returns the request of one bash call: Version in 4 bytes
// (little-endian), then the command, in which each byte that is not part
// of valid UTF-8 is U+FFFD (as when requests were JSON). Decoding JSON
// took a tenth of an `echo hi` in the guest.
func EncodeRequest(command string) []byte {
	req := binary.LittleEndian.AppendUint32(make([]byte, 0, 4+len(command)), Version)
	if utf8.ValidString(command) {
		return append(req, command...)
	}
	for i := 0; i < len(command); {
		r, n := utf8.DecodeRuneInString(command[i:])
		if r == utf8.RuneError && n == 1 {
			req = utf8.AppendRune(req, utf8.RuneError)
		} else {
			req = append(req, command[i:i+n]...)
		}
		i += n
	}
	return req
}

// DecodeRequest returns the command of a request; ok is false for a
// request of another Version or none.
func DecodeRequest(req []byte) (command string, ok bool) {
	if len(req) < 4 || binary.LittleEndian.Uint32(req) != Version {
		return "", false
	}
	return string(req[4:]), true
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
