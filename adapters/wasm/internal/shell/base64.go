package shell

import (
	"bytes"
	"encoding/base32"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// cmdBase64 is base64 and base32: encode (wrapping lines at 76 columns by
// default) or decode (-d). Input is held whole, within MaxFileBytes.
func cmdBase64(c *call) int {
	long := map[string]byte{"decode": 'd', "ignore-garbage": 'i', "wrap": 'w'}
	o, files, ok := c.getopt(c.args, "di", "w", long)
	if !ok {
		fmt.Fprintf(c.stderr, "%s: Try '%s --help' for more information.\n", c.name, c.name)
		return 1
	}
	wrap := 76
	if v := o.last('w', ""); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			c.errorf("invalid wrap size: '%s'", v)
			return 1
		}
		wrap = n
	}
	if len(files) > 1 {
		c.errorf("extra operand '%s'", files[1])
		fmt.Fprintf(c.stderr, "%s: Try '%s --help' for more information.\n", c.name, c.name)
		return 1
	}
	f := "-"
	if len(files) == 1 {
		f = files[0]
	}
	r, done, err := c.openInput(f)
	if err != nil {
		return c.fail(1, f, err)
	}
	data, err := c.readAll(r)
	done()
	if err != nil {
		return c.fail(1, f, err)
	}
	b32 := c.name == "base32"
	w := c.out()
	if o.has('d') {
		alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
		if b32 {
			alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
		}
		var clean []byte
		for _, b := range data {
			switch {
			case b == '\n' || b == '\r' && o.has('i'):
			case strings.IndexByte(alphabet, b) >= 0 || b == '=':
				clean = append(clean, b)
			case o.has('i'):
			default:
				clean = append(clean, b) // invalid: the decoder reports it
			}
		}
		var out []byte
		var derr error
		if b32 {
			out, derr = base64Decode(base32.StdEncoding.WithPadding(base32.StdPadding), clean, 8)
		} else {
			out, derr = base64Decode(base64.StdEncoding, clean, 4)
		}
		if _, err := w.Write(out); err != nil {
			return c.writeFailed(err)
		}
		if st := c.flush(w, 0); st != 0 {
			return st
		}
		if derr != nil {
			c.errorf("invalid input")
			return 1
		}
		return 0
	}
	var enc string
	if b32 {
		enc = base32.StdEncoding.EncodeToString(data)
	} else {
		enc = base64.StdEncoding.EncodeToString(data)
	}
	if wrap == 0 {
		w.WriteString(enc) // no newline at all, as in GNU
		return c.flush(w, 0)
	}
	for len(enc) > 0 {
		n := min(len(enc), wrap)
		w.WriteString(enc[:n])
		w.WriteByte('\n')
		enc = enc[n:]
	}
	return c.flush(w, 0)
}

// decoder is what base64.Encoding and base32.Encoding share.
type decoder interface {
	Decode(dst, src []byte) (int, error)
	DecodedLen(n int) int
}

// base64Decode decodes as much of src as is valid (GNU writes what it
// decoded before the error); input that lacks its padding decodes, and is
// then an error, as in GNU.
func base64Decode(enc decoder, src []byte, quantum int) ([]byte, error) {
	var short error
	if rem := len(src) % quantum; rem != 0 && !bytes.Contains(src, []byte("=")) {
		src = append(src, bytes.Repeat([]byte("="), quantum-rem)...)
		short = errors.New("truncated input")
	}
	dst := make([]byte, enc.DecodedLen(len(src)))
	n, err := enc.Decode(dst, src)
	if err == nil {
		err = short
	}
	return dst[:n], err
}
