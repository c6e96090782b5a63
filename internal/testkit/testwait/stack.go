package testwait

import (
	"bytes"
	"runtime"
)

// InStack reports whether the stack of a goroutine of the test binary
// holds every one of calls (as runtime.Stack names them, such as
// "(*Store).awaitLocked"): that the code under test has reached a wait,
// which it need not expose for the test's sake.
//
//	testwait.For(t, "the upload to wait", func() bool { return testwait.InStack("(*Store).awaitLocked", "(*Store).put") })
func InStack(calls ...string) bool {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for g := range bytes.SplitSeq(buf, []byte("\n\n")) {
		all := true
		for _, c := range calls {
			all = all && bytes.Contains(g, []byte(c))
		}
		if all {
			return true
		}
	}
	return false
}
