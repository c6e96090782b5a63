package shell

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"strconv"
	"strings"
)

func init() {
	for name := range sumAlgos {
		commands[name] = cmdSum
	}
	commands["base64"] = cmdBase64
	commands["base32"] = cmdBase64
}

// sumAlgo is one of the checksum commands: its hash and the name --tag
// prints.
type sumAlgo struct {
	tag  string
	new  func() hash.Hash
	size int // digest bytes
}

// sumAlgos is read-only after init.
var sumAlgos = map[string]sumAlgo{
	"md5sum":    {"MD5", md5.New, md5.Size},
	"sha1sum":   {"SHA1", sha1.New, sha1.Size},
	"sha224sum": {"SHA224", sha256.New224, sha256.Size224},
	"sha256sum": {"SHA256", sha256.New, sha256.Size},
	"sha384sum": {"SHA384", sha512.New384, sha512.Size384},
	"sha512sum": {"SHA512", sha512.New, sha512.Size},
}

// cmdSum is md5sum, sha1sum, ... sha512sum. The files are hashed as they
// are read, so their size does not matter.
func cmdSum(c *call) int {
	algo := sumAlgos[c.name]
	long := map[string]byte{
		"check": 'c', "tag": 'T', "binary": 'b', "text": 't', "quiet": 'q',
		"status": 'S', "warn": 'w', "strict": 's', "zero": 'z', "ignore-missing": 'I',
		"untagged": 0,
	}
	o, files, ok := c.getopt(c.args, "cbtwzTqSsI", "", long)
	if !ok {
		fmt.Fprintf(c.stderr, "%s: Try '%s --help' for more information.\n", c.name, c.name)
		return 1
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	if o.has('c') {
		if o.has('T') {
			c.errorf("the --tag option is meaningless when verifying checksums")
			fmt.Fprintf(c.stderr, "%s: Try '%s --help' for more information.\n", c.name, c.name)
			return 1
		}
		return c.sumCheck(algo, files, o)
	}
	for _, f := range []byte{'q', 'S', 's', 'w', 'I'} {
		if o.has(f) {
			names := map[byte]string{'q': "--quiet", 'S': "--status", 's': "--strict", 'w': "--warn", 'I': "--ignore-missing"}
			c.errorf("the %s option is meaningful only when verifying checksums", names[f])
			fmt.Fprintf(c.stderr, "%s: Try '%s --help' for more information.\n", c.name, c.name)
			return 1
		}
	}
	w := c.out()
	status := 0
	for _, f := range files {
		if c.stopped() {
			return 1
		}
		sum, err := c.sumFile(algo, f)
		if err != nil {
			c.fail(1, f, err)
			status = 1
			continue
		}
		name, escaped := sumEscape(f, o.has('z'))
		prefix := ""
		if escaped {
			prefix = "\\"
		}
		end := "\n"
		if o.has('z') {
			end = "\x00"
		}
		var err2 error
		if o.has('T') {
			_, err2 = fmt.Fprintf(w, "%s%s (%s) = %s%s", prefix, algo.tag, name, sum, end)
		} else {
			mode := " "
			if o.has('b') && !o.has('t') {
				mode = "*"
			}
			_, err2 = fmt.Fprintf(w, "%s%s %s%s%s", prefix, sum, mode, name, end)
		}
		if err2 != nil {
			return c.writeFailed(err2)
		}
	}
	return c.flush(w, status)
}

// sumEscape escapes a file name as GNU does for a checksum line: a
// backslash or newline in it makes the line start with a backslash.
func sumEscape(name string, zero bool) (string, bool) {
	if zero || !strings.ContainsAny(name, "\\\n\r") {
		return name, false
	}
	r := strings.NewReplacer("\\", "\\\\", "\n", "\\n", "\r", "\\r")
	return r.Replace(name), true
}

func sumUnescape(name string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		if name[i] != '\\' {
			b.WriteByte(name[i])
			continue
		}
		i++
		if i >= len(name) {
			return "", false
		}
		switch name[i] {
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		default:
			return "", false
		}
	}
	return b.String(), true
}

// sumFile hashes one operand, streaming.
func (c *call) sumFile(algo sumAlgo, f string) (string, error) {
	r, done, err := c.openInput(f)
	if err != nil {
		return "", err
	}
	defer done()
	h := algo.new()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sumCheck is -c: it reads lines "HASH  NAME" or "TAG (NAME) = HASH" and
// checks each named file.
func (c *call) sumCheck(algo sumAlgo, lists []string, o opts) int {
	quiet, statusOnly, strict, warn, ignoreMissing := o.has('q'), o.has('S'), o.has('s'), o.has('w'), o.has('I')
	w := c.out()
	status := 0
	for _, list := range lists {
		r, done, err := c.openInput(list)
		if err != nil {
			c.fail(1, list, err)
			status = 1
			continue
		}
		shown := list
		if list == "-" {
			shown = "standard input"
		}
		lr := c.lines(r)
		var bad, failed, unreadable, okLines, lineNo int
		for !c.stopped() {
			line, _, err := lr.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				c.fail(1, list, err)
				status = 1
				break
			}
			lineNo++
			s := strings.TrimSuffix(string(line), "\r")
			if strings.HasPrefix(strings.TrimLeft(s, " \t"), "#") {
				continue
			}
			want, name, ok := sumParseLine(s, algo)
			if !ok {
				bad++
				if warn {
					c.errorf("%s: %d: improperly formatted %s checksum line", shown, lineNo, algo.tag)
				}
				continue
			}
			okLines++
			got, err := c.sumFile(algo, name)
			if err != nil {
				if ignoreMissing && sumMissing(err) {
					continue
				}
				c.fail(1, name, err)
				unreadable++
				if !statusOnly {
					fmt.Fprintf(w, "%s: FAILED open or read\n", name)
				}
				continue
			}
			if !strings.EqualFold(got, want) {
				failed++
				if !statusOnly {
					fmt.Fprintf(w, "%s: FAILED\n", name)
				}
				continue
			}
			if !quiet && !statusOnly {
				fmt.Fprintf(w, "%s: OK\n", name)
			}
		}
		done()
		if st := c.flush(w, 0); st != 0 {
			return st
		}
		switch {
		case okLines == 0:
			c.errorf("%s: no properly formatted checksum lines found", sumQuote(shown))
			status = 1
			continue
		}
		if !statusOnly {
			if bad > 0 {
				c.errorf("WARNING: %d line%s improperly formatted", bad, sumPlural(bad, " is", "s are"))
			}
			if unreadable > 0 {
				c.errorf("WARNING: %d listed file%s could not be read", unreadable, sumPlural(unreadable, "", "s"))
			}
			if failed > 0 {
				c.errorf("WARNING: %d computed checksum%s did NOT match", failed, sumPlural(failed, "", "s"))
			}
		}
		if failed > 0 || unreadable > 0 || strict && bad > 0 {
			status = 1
		}
	}
	return c.flush(w, status)
}

// sumMissing reports a missing file, whatever layer reported it.
func sumMissing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errText(err) == "No such file or directory"
}

// sumQuote quotes a file name with characters a shell would treat
// specially, as GNU's messages do.
func sumQuote(name string) string {
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/+,:@%^=", r)) {
			return "'" + strings.ReplaceAll(name, "'", `'\''`) + "'"
		}
	}
	return name
}

func sumPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// sumParseLine parses a checksum line of either format.
func sumParseLine(s string, algo sumAlgo) (sum, name string, ok bool) {
	escaped := strings.HasPrefix(s, "\\")
	if escaped {
		s = s[1:]
	}
	// BSD style: "SHA256 (name) = hex".
	if rest, found := strings.CutPrefix(s, algo.tag+" ("); found {
		i := strings.LastIndex(rest, ") = ")
		if i < 0 {
			return "", "", false
		}
		name, sum = rest[:i], rest[i+4:]
	} else {
		n := 2 * algo.size
		if len(s) < n+2 || s[n] != ' ' || s[n+1] != ' ' && s[n+1] != '*' {
			return "", "", false
		}
		sum, name = s[:n], s[n+2:]
	}
	if len(sum) != 2*algo.size {
		return "", "", false
	}
	if _, err := hex.DecodeString(sum); err != nil {
		return "", "", false
	}
	if escaped {
		var ok bool
		if name, ok = sumUnescape(name); !ok {
			return "", "", false
		}
	}
	return sum, name, name != ""
}

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
