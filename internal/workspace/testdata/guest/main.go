// Command guest is a WASI program for TestGuestThroughWazero: it writes
// files in the mounts the test gives it and prints what happened.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

func main() {
	report("write a.txt", os.WriteFile("/workspace/a.txt", []byte(strings.Repeat("a", 50)), 0o644))

	f, err := os.OpenFile("/workspace/b.txt", os.O_CREATE|os.O_WRONLY, 0o644)
	report("open b.txt", err)
	total := 0
	for {
		n, err := f.Write([]byte(strings.Repeat("b", 30)))
		total += n
		if err != nil {
			fmt.Printf("b.txt took %d bytes\n", total)
			report("write b.txt", err)
			break
		}
	}
	report("truncate b.txt", f.Truncate(10))
	report("close b.txt", f.Close())

	report("symlink", os.Symlink("/etc/passwd", "/workspace/link"))
	report("link", os.Link("/workspace/a.txt", "/workspace/hard"))
	report("write /tmp/t.txt", os.WriteFile("/tmp/t.txt", []byte(strings.Repeat("t", 20)), 0o644))
	report("rename b.txt over a.txt", os.Rename("/workspace/b.txt", "/workspace/a.txt"))
	report("rewrite a.txt", os.WriteFile("/workspace/a.txt", []byte("xyz"), 0o644))
	report("remove /tmp/t.txt", os.Remove("/tmp/t.txt"))

	g, err := os.OpenFile("/workspace/app.log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	report("open app.log", err)
	n, err := g.Write([]byte(strings.Repeat("l", 200)))
	fmt.Printf("app.log took %d bytes\n", n)
	report("append app.log", err)
	report("close app.log", g.Close())
}

func report(what string, err error) {
	switch {
	case err == nil:
		fmt.Printf("%s: ok\n", what)
	case errors.Is(err, syscall.EIO):
		fmt.Printf("%s: EIO\n", what)
	case errors.Is(err, syscall.EPERM):
		fmt.Printf("%s: EPERM\n", what)
	default:
		fmt.Printf("%s: %v\n", what, err)
	}
}
