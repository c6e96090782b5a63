package hostileprog

import (
	"fmt"
	"strconv"
	"strings"
)

// The driver's request kinds for the host steps.
const (
	KindSnapshot = 90 // 'Z'
	KindRestored = 82 // 'R'
)

// SpinInFlush replaces sys.stdout with a stream whose flush spins when
// the driver calls it from a host step (sys._getframe(2) is the driver's
// handle: the stream's flush, the driver's flush, handle). The driver no
// longer flushes the program's streams in a host step, so it is harmless
// now: it shows that it stays so.
const SpinInFlush = "import sys\n" +
	"class SpinningOut:\n" +
	"    def write(self, s):\n" +
	"        return sys.__stdout__.write(s)\n" +
	"    def flush(self):\n" +
	"        if sys._getframe(2).f_locals.get('kind') in (90, 82):\n" +
	"            while True:\n" +
	"                pass\n" +
	"sys.stdout = SpinningOut()\n"

// SpinInTrace installs a trace function, which CPython calls as the
// driver's handle starts, before any line of the driver runs: the
// program's code in a host step that the driver cannot avoid. It spins
// when handle serves one of kinds (both host steps when none is given);
// with marker set, it first creates that file (a path in the session),
// for a test to wait on.
func SpinInTrace(marker string, kinds ...int) string {
	if len(kinds) == 0 {
		kinds = []int{KindSnapshot, KindRestored}
	}
	set := make([]string, len(kinds))
	for i, k := range kinds {
		set[i] = strconv.Itoa(k)
	}
	var b strings.Builder
	b.WriteString("import sys\n")
	b.WriteString("def _spin(frame, event, arg):\n")
	fmt.Fprintf(&b, "    if event == 'call' and frame.f_locals.get('kind') in (%s,):\n", strings.Join(set, ", "))
	if marker != "" {
		fmt.Fprintf(&b, "        open(%q, 'w').close()\n", marker)
	}
	b.WriteString("        while True:\n")
	b.WriteString("            pass\n")
	b.WriteString("sys.settrace(_spin)\n")
	return b.String()
}
