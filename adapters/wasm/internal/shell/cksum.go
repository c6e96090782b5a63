package shell

import (
	"errors"
	"fmt"
	"io"
)

// cksum prints the POSIX CRC-32 of each file (its bytes, then its length),
// its size and its name.
func cmdCksum(c *call) int {
	o, files, ok := c.getopt(c.args, "", "a", map[string]byte{"algorithm": 'a', "untagged": 0, "tag": 0})
	if !ok {
		return 1
	}
	if a := o.last('a', "crc"); a != "crc" {
		c.errorf("--algorithm=%s is not supported here; use %ssum", a, a)
		return 1
	}
	var table [256]uint32
	for i := range table {
		crc := uint32(i) << 24
		for range 8 {
			if crc&0x80000000 != 0 {
				crc = crc<<1 ^ 0x04C11DB7
			} else {
				crc <<= 1
			}
		}
		table[i] = crc
	}
	named := len(files) > 0
	if !named {
		files = []string{"-"}
	}
	w := c.out()
	status := 0
	buf, release := c.readBuf()
	defer release()
	for _, f := range files {
		if c.stopped() {
			return 1
		}
		r, done, err := c.openInput(f)
		if err != nil {
			status = c.fail(1, f, err)
			continue
		}
		var crc uint32
		var size uint64
		for {
			n, err := r.Read(buf)
			for _, b := range buf[:n] {
				crc = crc<<8 ^ table[byte(crc>>24)^b]
			}
			size += uint64(n)
			if err != nil {
				if !errors.Is(err, io.EOF) {
					status = c.fail(1, f, err)
				}
				break
			}
		}
		done()
		for l := size; l > 0; l >>= 8 {
			crc = crc<<8 ^ table[byte(crc>>24)^byte(l)]
		}
		crc = ^crc
		if named {
			fmt.Fprintf(w, "%d %d %s\n", crc, size, f)
		} else {
			fmt.Fprintf(w, "%d %d\n", crc, size)
		}
	}
	return c.flush(w, status)
}
