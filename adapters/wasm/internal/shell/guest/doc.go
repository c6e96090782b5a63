// Command guest is the bash tool's shell as a WASI program: built for
// GOOS=wasip1 GOARCH=wasm as a reactor (-buildmode=c-shared) by
// ../wasmshell/runtime/build.sh into shell.wasm, which package wasmshell
// embeds and runs under wazero over the session's mounts.
//
// The host initialises one instance (_initialize, then warm) and takes an
// image of it; every session's shell starts from that image, is set up for
// its session (setup) and serves the session's bash calls one after the
// other (run), keeping the shell's state (directory, variables, functions,
// options) between them. Between calls nothing of it runs. Everything it
// exchanges with the host
// goes through the functions the host provides in the "codeport_shell"
// module (see package wasmshell/protocol): the script being run can reach
// none of them, so it cannot forge a call's end or its status. Its
// standard output and error are the call's.
package main
