package wasm

import "time"

// The deadline of the driver's restored step (requestRestored, driver.py's
// restored): the interpreter's first run after a restore, in which the
// program's open files are closed. With none open it returns at once;
// with one, it walks every object the garbage collector tracks. Measured
// on the 2-core development machine: 0.2 ms for a session with no open
// file; 0.7 to 0.93 s for one holding an open file and 3 million tracked
// objects (about 200 MB of its 256 MiB memory limit), 0.4 to 0.55 s for 2
// million. That is under 5 ms per MiB of memory. The deadline is four
// times that per MiB of the memory limit, plus a base for starting the
// step: 7 s at the default 256 MiB, not the 30 s a crafted snapshot
// spinning in the step used to cost per restore.
const (
	restoredStepBase   = 2 * time.Second
	restoredStepPerMiB = 20 * time.Millisecond
)

// restoredStepTimeout is the deadline of the restored step of an
// interpreter under memoryLimit bytes (0: unknown, the default's).
func restoredStepTimeout(memoryLimit int64) time.Duration {
	if memoryLimit <= 0 {
		memoryLimit = 256 << 20
	}
	return restoredStepBase + time.Duration(memoryLimit>>20)*restoredStepPerMiB
}
