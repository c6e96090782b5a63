// Command guest is the bash tool's shell as a WASI program: built for
// GOOS=wasip1 GOARCH=wasm by ../wasmshell/runtime/build.sh into shell.wasm,
// which package wasmshell embeds and runs under wazero over the session's
// mounts.
//
// It is entered once per session and serves that session's bash calls one
// after the other, keeping the shell's state (directory, variables,
// functions, options) between them. Everything it exchanges with the host
// goes through the functions the host provides in the "codeport_shell"
// module (see package wasmshell/protocol): the script being run can reach
// none of them, so it cannot forge a call's end or its status. Its
// standard output and error are the call's.
package main
