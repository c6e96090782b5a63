package shell

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"strings"
)

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
