//go:build race

package wasmpatch

// raceEnabled says the race detector is on. wazero's interpreter reads
// globals in Go, so setting InterruptGlobal while it runs is a data race
// the detector reports; the compiler's machine code is not instrumented.
const raceEnabled = true
