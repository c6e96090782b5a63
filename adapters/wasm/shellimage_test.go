package wasm

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/experimental"

	"github.com/codeport/codeport/port"
)

// testShellImage is a shell image of four wasm pages, the first 220,000
// bytes of them text, closed when the test ends; the test is skipped where
// images are not mapped copy-on-write.
func testShellImage(t *testing.T) (shellImage, []byte) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("copy-on-write images need Linux")
	}
	image := bytes.Repeat([]byte("shell data "), 20000)
	image = append(image, make([]byte, 4*wasmPage-len(image))...)
	img, err := newShellImage(image)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(img.Close)
	return img.(shellImage), image
}

// mapShellImage is a memory of pages wasm pages that maps img, as a
// shell's does, freed when the test ends, and its allocator.
func mapShellImage(t *testing.T, img shellImage, pages uint64) (experimental.MemoryAllocator, []byte) {
	t.Helper()
	alloc, mapped := img.Allocation()
	mem := alloc.Allocate(4*wasmPage, 64*wasmPage)
	t.Cleanup(mem.Free)
	buf := mem.Reallocate(pages * wasmPage)
	if !mapped() {
		t.Fatal("the memory does not map the image")
	}
	return alloc, buf
}

// On Linux a shell's memory maps the image: it reads as the image, and
// what the shell writes stays its own.
func TestShellMemoryMapsTheImage(t *testing.T) {
	img, image := testShellImage(t)
	var mems [][]byte
	for range 2 {
		_, buf := mapShellImage(t, img, 6)
		if !bytes.Equal(buf[:len(image)], image) || !bytes.Equal(buf[len(image):], make([]byte, len(buf)-len(image))) {
			t.Fatal("the memory does not read as the image then zeros")
		}
		mems = append(mems, buf)
	}
	copy(mems[0], "written")
	if !bytes.HasPrefix(mems[1], []byte("shell data")) {
		t.Fatal("one memory's write shows in another")
	}
}

// The shell image learns the pages a shell wrote (LearnHot, which the
// shell engine calls with its probe shell's memory): every later mapping
// has them copied at once, reading as the image still, and the others
// still shared.
func TestShellImageLearnsHotPages(t *testing.T) {
	img, image := testShellImage(t)
	probe, buf := mapShellImage(t, img, 4)
	const hot = 3 // a page the probe writes
	buf[hot*imageChunk+1] = 'X'
	if err := img.LearnHot(probe); err != nil {
		t.Fatal(err)
	}
	alloc, buf2 := mapShellImage(t, img, 4)
	written, err := alloc.(*allocation).writtenPages()
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range written {
		if w != (i == hot) {
			t.Fatalf("page %d of a new mapping copied: %v, want %v", i, w, i == hot)
		}
	}
	if !bytes.Equal(buf2[:len(image)], image) {
		t.Fatal("a new mapping does not read as the image")
	}
	heap := experimental.MemoryAllocatorFunc(func(capBytes, maxBytes uint64) experimental.LinearMemory { return nil })
	if err := img.LearnHot(heap); err == nil {
		t.Error("LearnHot took a memory that is no mapping of the image")
	}
}

// Every session's shell starts from the same image: what one session's
// shell did (variables, exported ones, its directory, functions, traps,
// aliases, options, files in its /tmp) is nowhere in another's, whether that
// one started before or after, and their $RANDOM differ.
func TestBashSessionsShareNothingThroughTheImage(t *testing.T) {
	a := newTestAdapter(t, noPool)
	first, before := newSession(t, a), newSession(t, a)
	bash(t, a, before, "true", 0)
	setup := "x=1; export E=2; cd /tmp; f() { echo f; }; trap 'echo trapped' ERR; alias ll='ls -l'; set -o pipefail; shopt -s nullglob; echo secret > /tmp/secret"
	if res := bash(t, a, first, setup, 0); res.ReturnCode != 0 {
		t.Fatalf("setup: %+v", res)
	}
	after := newSession(t, a)
	const check = "echo \"x=${x-unset} E=${E-unset} $PWD\"; f 2>/dev/null || echo nofunc; trap; alias; set -o | grep pipefail; shopt nullglob; ls /tmp"
	var want string
	for i, id := range []string{before, after} {
		res := bash(t, a, id, check, 0)
		if i == 0 {
			want = res.Stdout
		}
		if !strings.HasPrefix(res.Stdout, "x=unset E=unset /workspace\nnofunc\n") || strings.Contains(res.Stdout, "trap") ||
			strings.Contains(res.Stdout, "secret") || strings.Contains(res.Stdout, "ll=") || !strings.Contains(res.Stdout, "pipefail") ||
			strings.Contains(res.Stdout, "pipefail\ton") || strings.Contains(res.Stdout, "nullglob\ton") ||
			res.Stdout != want {
			t.Errorf("session %d sees: %q (stderr %q)", i, res.Stdout, res.Stderr)
		}
	}
	// The check sees the state where it is.
	if res := bash(t, a, first, check, 0); !strings.HasPrefix(res.Stdout, "x=1 E=2 /tmp\nf\n") || !strings.Contains(res.Stdout, "trapped") ||
		!strings.Contains(res.Stdout, "ll=") || !strings.Contains(res.Stdout, "secret") {
		t.Errorf("the first session's own state: %q", res.Stdout)
	}
	randoms := map[string]bool{}
	for _, id := range []string{first, before, after} {
		randoms[bash(t, a, id, "echo $RANDOM $RANDOM $RANDOM; (echo $RANDOM)", 0).Stdout] = true
	}
	if len(randoms) != 3 {
		t.Errorf("$RANDOM is the same in two sessions: %v", randoms)
	}
}

// A command that ignores its deadline ends its shell by force; the
// session's next command, and another session's first, run in shells
// fresh from the image.
func TestBashAfterAShellEndedByForce(t *testing.T) {
	a := newTestAdapter(t, noPool)
	id := newSession(t, a)
	bash(t, a, id, "x=kept", 0)
	// An arithmetic loop runs no command, so it never polls the host's
	// stop: the host ends the guest after its grace period.
	res := bash(t, a, id, "for ((;;)); do x=1; done", time.Second)
	if res.Outcome != port.OutcomeTimedOut || !res.StateLost {
		t.Fatalf("busy loop: %+v", res)
	}
	if res := bash(t, a, id, "echo ${x-gone} | tr a-z A-Z", 0); res.Stdout != "GONE\n" || res.ReturnCode != 0 {
		t.Fatalf("the same session after: %+v", res)
	}
	if res := bash(t, a, newSession(t, a), "echo ${x-fresh}; pwd", 0); res.Stdout != "fresh\n/workspace\n" || res.ReturnCode != 0 {
		t.Fatalf("another session after: %+v", res)
	}
}
