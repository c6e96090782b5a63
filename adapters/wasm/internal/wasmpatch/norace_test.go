//go:build !race

package wasmpatch

// raceEnabled: see race_test.go.
const raceEnabled = false
