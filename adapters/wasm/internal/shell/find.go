package shell

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/interp"
)

// cmdFind is GNU find's expression language over the workspace: tests
// (-name, -iname, -path, -ipath, -regex, -type, -size, -mtime, -newer,
// -empty, -perm, ...), actions (-print, -print0, -printf, -exec,
// -execdir, -delete, -prune, -quit), operators (! -not -a -o , and
// parentheses) and the options -maxdepth, -mindepth and -depth. An
// expression without an action prints what it matches.
func cmdFind(c *call) int {
	var roots []string
	args := c.args
	for len(args) > 0 && !strings.HasPrefix(args[0], "-") && args[0] != "!" && args[0] != "(" && args[0] != ")" && args[0] != "," {
		roots = append(roots, args[0])
		args = args[1:]
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	f := &finder{c: c, maxDepth: -1, now: time.Now()}
	p := &findParser{f: f, args: args}
	expr, ok := p.parse()
	if !ok {
		return 1
	}
	if !p.action {
		print := func(n *findNode) bool { f.w.WriteString(n.shown + "\n"); return true }
		if expr == nil {
			expr = print
		} else {
			e := expr
			expr = func(n *findNode) bool { return e(n) && print(n) }
		}
	}
	f.expr = expr
	w := c.out()
	f.w = w
	for _, r := range roots {
		if c.stopped() || f.quit {
			break
		}
		t, err := c.target(r)
		var info fs.FileInfo
		if err == nil && t.dev != "" {
			err = fs.ErrPermission
		}
		if err == nil {
			info, err = c.sh.fs.lstat(c.ctx, t.rel)
		}
		if err != nil {
			c.errorf("'%s': %s", r, errText(err))
			f.status = 1
			continue
		}
		f.walk(&findNode{shown: r, root: r, rel: t.rel, info: info})
	}
	f.flushBatches()
	return c.flush(w, f.status)
}

// findNode is the file an expression is evaluated on.
type findNode struct {
	shown string // the path as find prints it
	root  string // the starting point it was found under
	rel   string // workspace-relative
	info  fs.FileInfo
	depth int
	prune bool // set by -prune
}

type finder struct {
	c                  *call
	w                  *bufio.Writer
	expr               func(*findNode) bool
	maxDepth, minDepth int
	depthFirst         bool
	quit               bool
	status             int
	now                time.Time
	batches            []*execBatch
}

// findParser parses the expression (GNU find's grammar: "," binds
// loosest, then -o, then -a, which juxtaposition implies).
type findParser struct {
	f      *finder
	args   []string
	i      int
	action bool // the expression has an action: no implicit -print
	// regexType is the -regextype in force: "" (emacs, GNU's default)
	// or a basic type, whose \( \) \| \{ \} are the operators, or an
	// extended one, which Go's syntax is close to.
	regexType string
}

func (p *findParser) peek() string {
	if p.i < len(p.args) {
		return p.args[p.i]
	}
	return ""
}

func (p *findParser) parse() (func(*findNode) bool, bool) {
	if len(p.args) == 0 {
		return nil, true
	}
	e, ok := p.list()
	if !ok {
		return nil, false
	}
	if p.i < len(p.args) {
		if p.args[p.i] == ")" {
			p.f.c.errorf("invalid expression; you have too many ')'")
		} else {
			p.f.c.errorf("paths must precede expression: `%s'", p.args[p.i])
		}
		return nil, false
	}
	return e, true
}

func (p *findParser) list() (func(*findNode) bool, bool) {
	l, ok := p.or()
	for ok && p.peek() == "," {
		p.i++
		var r func(*findNode) bool
		if r, ok = p.or(); ok {
			a := l
			l = func(n *findNode) bool { a(n); return !p.f.quit && r(n) }
		}
	}
	return l, ok
}

func (p *findParser) or() (func(*findNode) bool, bool) {
	l, ok := p.and()
	for ok && (p.peek() == "-o" || p.peek() == "-or") {
		p.i++
		var r func(*findNode) bool
		if r, ok = p.and(); ok {
			a := l
			l = func(n *findNode) bool { return a(n) || !p.f.quit && r(n) }
		}
	}
	return l, ok
}

func (p *findParser) and() (func(*findNode) bool, bool) {
	l, ok := p.unary()
	for ok {
		switch p.peek() {
		case "-a", "-and":
			p.i++
		case "", "-o", "-or", ")", ",":
			return l, true
		}
		var r func(*findNode) bool
		if r, ok = p.unary(); ok {
			a := l
			l = func(n *findNode) bool { return a(n) && !p.f.quit && r(n) }
		}
	}
	return l, ok
}

func (p *findParser) unary() (func(*findNode) bool, bool) {
	switch tok := p.peek(); tok {
	case "":
		p.f.c.errorf("expected an expression at the end")
		return nil, false
	case "!", "-not":
		p.i++
		e, ok := p.unary()
		if !ok {
			return nil, false
		}
		return func(n *findNode) bool { return !e(n) }, true
	case "(":
		p.i++
		if p.peek() == ")" {
			p.f.c.errorf("invalid expression; empty parentheses are not allowed.")
			return nil, false
		}
		e, ok := p.list()
		if !ok {
			return nil, false
		}
		if p.peek() != ")" {
			p.f.c.errorf("invalid expression; I was expecting to find a ')' somewhere but did not see one.")
			return nil, false
		}
		p.i++
		return e, true
	case ")", "-o", "-or", "-a", "-and", ",":
		p.f.c.errorf("invalid expression; you have used a binary operator '%s' with nothing before it.", tok)
		return nil, false
	}
	return p.primary()
}

func (p *findParser) arg(pred string) (string, bool) {
	if p.i >= len(p.args) {
		p.f.c.errorf("missing argument to `%s'", pred)
		return "", false
	}
	p.i++
	return p.args[p.i-1], true
}

// numArg parses find's [+-]N: cmp is '+' (more than), '-' (less than) or
// '=' (exactly).
func numArg(s string) (cmp byte, n int64, ok bool) {
	cmp = '='
	if s != "" && (s[0] == '+' || s[0] == '-') {
		cmp, s = s[0], s[1:]
	}
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return cmp, n, err == nil
}

func compareNum(cmp byte, have, want int64) bool {
	switch cmp {
	case '+':
		return have > want
	case '-':
		return have < want
	}
	return have == want
}

func (p *findParser) primary() (func(*findNode) bool, bool) {
	f := p.f
	c := f.c
	tok := p.args[p.i]
	p.i++
	always := func(*findNode) bool { return true }
	switch tok {
	case "-print":
		p.action = true
		return func(n *findNode) bool { f.w.WriteString(n.shown + "\n"); return true }, true
	case "-print0":
		p.action = true
		return func(n *findNode) bool { f.w.WriteString(n.shown + "\x00"); return true }, true
	case "-printf":
		format, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		p.action = true
		return func(n *findNode) bool { f.w.WriteString(f.printf(format, n)); return true }, true
	case "-fprint", "-fprint0", "-fprintf", "-fls":
		c.errorf("%s is not supported here; redirect the output of -print instead", tok)
		return nil, false
	case "-ls":
		p.action = true
		return func(n *findNode) bool {
			si := sysOf(n.info)
			fmt.Fprintf(f.w, "%9d %6d %s %3d %-8s %-8s %8d %s %s\n", si.ino, diskBytes(n.info)/1024, modeString(n.info.Mode()),
				si.nlink, sandboxUser, sandboxUser, n.info.Size(), n.info.ModTime().In(f.c.dateLocation()).Format("Jan _2 15:04"), n.shown)
			return true
		}, true
	case "-true":
		return always, true
	case "-false":
		return func(*findNode) bool { return false }, true
	case "-quit":
		p.action = true
		return func(*findNode) bool { f.quit = true; return true }, true
	case "-prune":
		return func(n *findNode) bool { n.prune = true; return true }, true
	case "-delete":
		p.action = true
		f.depthFirst = true
		return f.delete, true
	case "-ok", "-okdir":
		c.errorf("%s is not supported here (there is no terminal to ask); use -exec", tok)
		return nil, false
	case "-exec", "-execdir":
		return p.exec(tok)
	case "-depth", "-d":
		f.depthFirst = true
		return always, true
	case "-xdev", "-mount", "-noleaf", "-ignore_readdir_race", "-noignore_readdir_race", "-follow", "-nowarn", "-warn":
		return always, true
	case "-regextype":
		v, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		switch v {
		case "findutils-default", "emacs", "posix-basic", "posix-minimal-basic", "ed", "sed", "grep":
			p.regexType = ""
		case "posix-extended", "posix-egrep", "egrep", "awk", "posix-awk", "gnu-awk":
			p.regexType = "extended"
		default:
			c.errorf("Unknown regular expression type '%s'; valid types are 'findutils-default', 'emacs', 'posix-basic', 'posix-extended', 'posix-egrep', 'egrep', 'awk', 'sed', 'grep', 'ed'.", v)
			return nil, false
		}
		return always, true
	case "-maxdepth", "-mindepth":
		v, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			c.errorf("Expected a positive decimal integer argument to %s, but got `%s'", tok, v)
			return nil, false
		}
		if tok == "-maxdepth" {
			f.maxDepth = n
		} else {
			f.minDepth = n
		}
		return always, true
	case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-lname", "-ilname":
		pat, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		fold := tok[1] == 'i'
		whole := strings.Contains(tok, "path") || strings.Contains(tok, "wholename")
		if strings.HasSuffix(tok, "lname") {
			return func(*findNode) bool { return false }, true // no links
		}
		return func(n *findNode) bool {
			s := n.shown
			if !whole {
				s = findBase(n.shown)
			}
			return globMatch(pat, s, fold)
		}, true
	case "-regex", "-iregex":
		pat, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		flags := ""
		if tok == "-iregex" {
			flags = "(?i)"
		}
		src := pat
		if p.regexType == "" {
			src = basicToGo(pat)
		}
		re, err := regexp.Compile(flags + `^(?:` + src + `)$`)
		if err != nil {
			c.errorf("invalid regular expression '%s': %v", pat, err)
			return nil, false
		}
		return func(n *findNode) bool { return re.MatchString(n.shown) }, true
	case "-type", "-xtype":
		v, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		var types []byte
		for _, t := range strings.Split(v, ",") {
			if len(t) != 1 || !strings.Contains("fdlbcpsD", t) {
				c.errorf("Unknown argument to %s: %s", tok, t)
				return nil, false
			}
			types = append(types, t[0])
		}
		return func(n *findNode) bool { return bytes.IndexByte(types, findType(n.info)) >= 0 }, true
	case "-empty":
		return func(n *findNode) bool {
			switch {
			case n.info.Mode().IsRegular():
				return n.info.Size() == 0
			case n.info.IsDir():
				infos, err := c.sh.fs.readDir(c.ctx, n.rel)
				return err == nil && len(infos) == 0
			}
			return false
		}, true
	case "-size":
		v, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		unit := int64(512)
		num := v
		if num != "" {
			switch num[len(num)-1] {
			case 'c':
				unit = 1
			case 'w':
				unit = 2
			case 'b':
				unit = 512
			case 'k':
				unit = 1024
			case 'M':
				unit = 1 << 20
			case 'G':
				unit = 1 << 30
			}
			if num[len(num)-1] > '9' {
				num = num[:len(num)-1]
			}
		}
		cmp, n, ok := numArg(num)
		if !ok {
			c.errorf("invalid -size type `%s'", v)
			return nil, false
		}
		// GNU rounds the size up to whole units: -size -1M is only
		// empty files.
		return func(nd *findNode) bool {
			size := nd.info.Size()
			if nd.info.IsDir() {
				size = dirBytes
			}
			return compareNum(cmp, (size+unit-1)/unit, n)
		}, true
	case "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin":
		v, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		cmp, n, ok := numArg(v)
		if !ok {
			c.errorf("invalid argument `%s' to `%s'", v, tok)
			return nil, false
		}
		unit := 24 * time.Hour
		if strings.HasSuffix(tok, "min") {
			unit = time.Minute
		}
		which := tok[1]
		// The age in whole units, rounded down: -mtime 0 is the last
		// 24 hours, +1 more than two days ago.
		return func(nd *findNode) bool {
			t := nd.info.ModTime()
			switch which {
			case 'a':
				t = sysOf(nd.info).atime
			case 'c':
				t = sysOf(nd.info).ctime
			}
			age := f.now.Sub(t)
			units := int64(age / unit)
			if age < 0 && age%unit != 0 {
				units--
			}
			return compareNum(cmp, units, n)
		}, true
	case "-newer", "-anewer", "-cnewer", "-newermm":
		ref, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		fi, err := c.stat(ref)
		if err != nil {
			c.errorf("'%s': %s", ref, errText(err))
			return nil, false
		}
		t := fi.ModTime()
		return func(n *findNode) bool {
			mine := n.info.ModTime()
			switch tok {
			case "-anewer":
				mine = sysOf(n.info).atime
			case "-cnewer":
				mine = sysOf(n.info).ctime
			}
			return mine.After(t)
		}, true
	case "-perm":
		v, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		kind := byte('=')
		spec := v
		if spec != "" && (spec[0] == '-' || spec[0] == '/' || spec[0] == '+') {
			kind, spec = spec[0], spec[1:]
		}
		want, err := applyMode(spec, 0, false)
		if err != nil || spec == "" {
			c.errorf("invalid mode `%s'", v)
			return nil, false
		}
		bits := rawModeBits(want)
		return func(n *findNode) bool {
			have := rawMode(n.info) & 0o7777
			switch kind {
			case '-':
				return have&bits == bits
			case '/', '+':
				return bits == 0 || have&bits != 0
			}
			return have == bits
		}, true
	case "-readable", "-writable":
		return func(n *findNode) bool { return n.info.Mode().Perm()&0o600 != 0 }, true
	case "-executable":
		return func(n *findNode) bool { return n.info.Mode().Perm()&0o100 != 0 }, true
	case "-user", "-group":
		v, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		return func(*findNode) bool { return v == sandboxUser || v == strconv.Itoa(sandboxUID) }, true
	case "-uid", "-gid":
		v, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		cmp, n, ok := numArg(v)
		if !ok {
			c.errorf("invalid argument `%s' to `%s'", v, tok)
			return nil, false
		}
		return func(*findNode) bool { return compareNum(cmp, sandboxUID, n) }, true
	case "-nouser", "-nogroup":
		return func(*findNode) bool { return false }, true
	case "-links":
		v, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		cmp, n, ok := numArg(v)
		if !ok {
			c.errorf("invalid argument `%s' to `%s'", v, tok)
			return nil, false
		}
		return func(nd *findNode) bool { return compareNum(cmp, int64(sysOf(nd.info).nlink), n) }, true
	}
	c.errorf("unknown predicate `%s'", tok)
	return nil, false
}

// basicToGo rewrites a GNU basic (emacs) regular expression for Go's
// regexp: there \( \) \| \{ \} are the operators and the bare characters
// literals; bracket expressions are kept as they are.
func basicToGo(pat string) string {
	var b strings.Builder
	for i := 0; i < len(pat); i++ {
		ch := pat[i]
		switch {
		case ch == '[':
			j := i + 1
			if j < len(pat) && pat[j] == '^' {
				j++
			}
			if j < len(pat) && pat[j] == ']' {
				j++
			}
			for j < len(pat) && pat[j] != ']' {
				if strings.HasPrefix(pat[j:], "[:") {
					if end := strings.Index(pat[j+2:], ":]"); end >= 0 {
						j += end + 4
						continue
					}
				}
				j++
			}
			if j >= len(pat) {
				b.WriteString(`\[`)
				continue
			}
			b.WriteString(pat[i : j+1])
			i = j
		case ch == '\\' && i+1 < len(pat) && strings.IndexByte("()|{}", pat[i+1]) >= 0:
			b.WriteByte(pat[i+1])
			i++
		case ch == '\\' && i+1 < len(pat):
			b.WriteString(pat[i : i+2])
			i++
		case strings.IndexByte("()|{}", ch) >= 0:
			b.WriteByte('\\')
			b.WriteByte(ch)
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

// rawModeBits is the st_mode permission bits (with setuid, setgid,
// sticky) of a mode from applyMode.
func rawModeBits(m fs.FileMode) uint32 {
	r := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		r |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		r |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		r |= 0o1000
	}
	return r
}

// findType is find's letter for the kind of fi (-type, %y).
func findType(fi fs.FileInfo) byte {
	if k := kindOf(fi.Mode()); k.letter != '-' {
		return k.letter
	}
	return 'f'
}

// findBase is the last component of a path as find's -name sees it.
func findBase(p string) string {
	t := strings.TrimRight(p, "/")
	if t == "" {
		return p[:min(len(p), 1)]
	}
	return t[strings.LastIndexByte(t, '/')+1:]
}

// globMatch matches s against the shell pattern pat as fnmatch(3) without
// FNM_PATHNAME does for find: '*' and '?' match '/' too.
func globMatch(pat, s string, fold bool) bool {
	if fold {
		pat, s = strings.ToLower(pat), strings.ToLower(s)
	}
	// Backtracking over the last '*' only is enough: a later '*' can
	// always absorb what an earlier one would.
	px, sx := 0, 0
	starP, starS := -1, 0
	for sx < len(s) {
		if px < len(pat) {
			switch pat[px] {
			case '*':
				starP, starS = px, sx
				px++
				continue
			case '?':
				_, w := utf8.DecodeRuneInString(s[sx:])
				px, sx = px+1, sx+w
				continue
			case '[':
				r, w := utf8.DecodeRuneInString(s[sx:])
				if ok, n := matchClass(pat[px:], r); n > 0 {
					if ok {
						px, sx = px+n, sx+w
						continue
					}
				} else if s[sx] == '[' {
					px, sx = px+1, sx+1
					continue
				}
			case '\\':
				if px+1 < len(pat) && pat[px+1] == s[sx] {
					px, sx = px+2, sx+1
					continue
				}
			default:
				if pat[px] == s[sx] {
					px, sx = px+1, sx+1
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		starS++
		_, w := utf8.DecodeRuneInString(s[starS-1:])
		starS += w - 1
		px, sx = starP+1, starS
	}
	for px < len(pat) && pat[px] == '*' {
		px++
	}
	return px == len(pat)
}

// matchClass matches r against the bracket expression at the start of
// pat; n is its length, 0 if it is not one (an unclosed '[').
func matchClass(pat string, r rune) (ok bool, n int) {
	i := 1
	negate := false
	if i < len(pat) && (pat[i] == '!' || pat[i] == '^') {
		negate = true
		i++
	}
	first := true
	for i < len(pat) {
		if pat[i] == ']' && !first {
			return ok != negate, i + 1
		}
		first = false
		if strings.HasPrefix(pat[i:], "[:") {
			if end := strings.Index(pat[i+2:], ":]"); end >= 0 {
				if classMatch(pat[i+2:i+2+end], r) {
					ok = true
				}
				i += end + 4
				continue
			}
		}
		lo, w := utf8.DecodeRuneInString(pat[i:])
		if lo == '\\' && i+w < len(pat) {
			i += w
			lo, w = utf8.DecodeRuneInString(pat[i:])
		}
		i += w
		hi := lo
		if i+1 < len(pat) && pat[i] == '-' && pat[i+1] != ']' {
			hi, w = utf8.DecodeRuneInString(pat[i+1:])
			i += 1 + w
		}
		if lo <= r && r <= hi {
			ok = true
		}
	}
	return false, 0
}

func classMatch(class string, r rune) bool {
	switch class {
	case "alpha":
		return unicode.IsLetter(r)
	case "digit":
		return r >= '0' && r <= '9'
	case "alnum":
		return unicode.IsLetter(r) || unicode.IsDigit(r)
	case "upper":
		return unicode.IsUpper(r)
	case "lower":
		return unicode.IsLower(r)
	case "space":
		return unicode.IsSpace(r)
	case "punct":
		return unicode.IsPunct(r) || unicode.IsSymbol(r)
	case "xdigit":
		return strings.ContainsRune("0123456789abcdefABCDEF", r)
	}
	return false
}

func (f *finder) delete(n *findNode) bool {
	c := f.c
	if n.rel == "." || n.shown == "." {
		return true // GNU find does not delete the starting point "."
	}
	if err := c.sh.fs.remove(c.ctx, n.rel); err != nil {
		c.errorf("cannot delete '%s': %s", n.shown, errText(err))
		f.status = 1
		return false
	}
	return true
}

// execBatch collects the files of one "-exec ... {} +".
type execBatch struct {
	argv  []string // the command, without the trailing {}
	dir   string   // for -execdir: the directory the batch runs in
	files []string
	size  int
}

// execMax bounds the arguments of one "-exec ... +" run, as ARG_MAX does.
const execMax = 128 << 10

func (p *findParser) exec(tok string) (func(*findNode) bool, bool) {
	f := p.f
	var argv []string
	plus := false
	for {
		if p.i >= len(p.args) {
			f.c.errorf("missing argument to `%s'", tok)
			return nil, false
		}
		a := p.args[p.i]
		p.i++
		if a == ";" {
			break
		}
		if a == "+" && len(argv) > 0 && argv[len(argv)-1] == "{}" {
			argv = argv[:len(argv)-1]
			plus = true
			break
		}
		argv = append(argv, a)
	}
	if len(argv) == 0 {
		f.c.errorf("missing argument to `%s'", tok)
		return nil, false
	}
	p.action = true
	dirMode := tok == "-execdir"
	if plus {
		batches := map[string]*execBatch{}
		return func(n *findNode) bool {
			name, dir := n.shown, ""
			if dirMode {
				name, dir = "./"+findBase(n.shown), f.parentDir(n)
			}
			b := batches[dir]
			if b == nil || b.size+len(name)+1 > execMax {
				if b != nil {
					f.runBatch(b)
				}
				b = &execBatch{argv: argv, dir: dir}
				batches[dir] = b
				f.batches = append(f.batches, b)
			}
			b.files = append(b.files, name)
			b.size += len(name) + 1
			return true
		}, true
	}
	return func(n *findNode) bool {
		name, dir := n.shown, ""
		if dirMode {
			name, dir = "./"+findBase(n.shown), f.parentDir(n)
		}
		cmd := make([]string, len(argv))
		for i, a := range argv {
			cmd[i] = strings.ReplaceAll(a, "{}", name)
		}
		return f.run(dir, cmd) == 0
	}, true
}

// parentDir is the guest directory holding n, for -execdir.
func (f *finder) parentDir(n *findNode) string {
	if n.rel == "." {
		return guestRoot
	}
	return path.Join(guestRoot, path.Dir(n.rel))
}

func (f *finder) runBatch(b *execBatch) {
	if len(b.files) == 0 || f.c.stopped() {
		return
	}
	cmd := append(append([]string(nil), b.argv...), b.files...)
	b.files, b.size = nil, 0
	if f.run(b.dir, cmd) != 0 {
		f.status = 1
	}
}

func (f *finder) flushBatches() {
	for _, b := range f.batches {
		f.runBatch(b)
	}
}

// run runs a command of -exec as the shell would run it, through the
// same table (as env does), with find's output: a builtin of the
// interpreter (test, [, ...) runs in a child shell.
func (f *finder) run(dir string, argv []string) int {
	c := f.c
	if c.stopped() {
		return 1
	}
	// find -exec find -exec ... recurses once per level.
	if c.sh.guard.tooDeep() {
		c.sh.refuse(c.name)
		return 1
	}
	sub := *c
	sub.bufs = nil // the caller's buffers stay the caller's (see releaseBufs)
	sub.name, sub.args, sub.stdout = argv[0], argv[1:], f.w
	if dir != "" {
		sub.dir = dir
	}
	if _, ok := commands[sub.name]; ok || strings.Contains(sub.name, "/") {
		return sub.run()
	}
	if interp.IsBuiltin(sub.name) {
		return sub.runShell(`"$@"`, sub.name, nil, argv)
	}
	// GNU find reports it; only a failed "-exec ... +" fails find.
	c.errorf("'%s': No such file or directory", sub.name)
	return 127
}

// printf expands the directives of -printf for n.
func (f *finder) printf(format string, n *findNode) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		ch := format[i]
		switch {
		case ch == '\\' && i+1 < len(format):
			if format[i+1] == 'c' {
				return b.String()
			}
			i += printfEscape(&b, format[i+1:], false)
			continue
		case ch != '%':
			b.WriteByte(ch)
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("-+ #0", format[j]) >= 0 {
			j++
		}
		for j < len(format) && (format[j] >= '0' && format[j] <= '9' || format[j] == '.') {
			j++
		}
		if j >= len(format) {
			b.WriteString(format[i:])
			break
		}
		spec := format[i+1 : j]
		d := format[j]
		i = j
		str := func(s string) { fmt.Fprintf(&b, "%"+spec+"s", s) }
		num := func(v int64) { fmt.Fprintf(&b, "%"+spec+"d", v) }
		si := sysOf(n.info)
		switch d {
		case '%':
			b.WriteByte('%')
		case 'p':
			str(n.shown)
		case 'f':
			str(findBase(n.shown))
		case 'P':
			str(strings.TrimPrefix(strings.TrimPrefix(n.shown, n.root), "/"))
		case 'H':
			str(n.root)
		case 'h':
			k := strings.LastIndexByte(strings.TrimRight(n.shown, "/"), '/')
			if k < 0 {
				str(".")
			} else {
				str(n.shown[:k])
			}
		case 'd':
			num(int64(n.depth))
		case 's':
			if n.info.IsDir() {
				num(dirBytes)
			} else {
				num(n.info.Size())
			}
		case 'k':
			num(diskBytes(n.info) / 1024)
		case 'b':
			num(diskBytes(n.info) / 512)
		case 'm':
			fmt.Fprintf(&b, "%"+spec+"o", rawMode(n.info)&0o7777)
		case 'M':
			str(modeString(n.info.Mode()))
		case 'y', 'Y':
			str(string(findType(n.info)))
		case 'u', 'g':
			str(sandboxUser)
		case 'U', 'G':
			num(sandboxUID)
		case 'n':
			num(int64(si.nlink))
		case 'i':
			num(int64(si.ino))
		case 'l':
			str("")
		case 'a', 'c', 't':
			t := n.info.ModTime()
			switch d {
			case 'a':
				t = si.atime
			case 'c':
				t = si.ctime
			}
			t = t.In(f.c.dateLocation())
			str(fmt.Sprintf("%s.%09d0 %d", t.Format("Mon Jan _2 15:04:05"), t.Nanosecond(), t.Year()))
		case 'A', 'C', 'T':
			t := n.info.ModTime()
			switch d {
			case 'A':
				t = si.atime
			case 'C':
				t = si.ctime
			}
			t = t.In(f.c.dateLocation())
			if i+1 >= len(format) {
				b.WriteString(format[i-len(spec)-1:])
				continue
			}
			i++
			str(findTime(t, format[i]))
		default:
			// GNU find prints an unknown directive as it is.
			b.WriteString(format[j-len(spec)-1 : j+1])
		}
	}
	return b.String()
}

// findTime formats one %T (%A, %C) field of -printf, as strftime would.
func findTime(t time.Time, k byte) string {
	switch k {
	case '@':
		return fmt.Sprintf("%d.%010d", t.Unix(), t.Nanosecond()*10)
	case 'Y':
		return t.Format("2006")
	case 'm':
		return t.Format("01")
	case 'd':
		return t.Format("02")
	case 'H':
		return t.Format("15")
	case 'M':
		return t.Format("04")
	case 'S':
		return fmt.Sprintf("%02d.%010d", t.Second(), t.Nanosecond()*10)
	case 'T':
		return fmt.Sprintf("%s.%010d", t.Format("15:04:05"), t.Nanosecond()*10)
	case '+':
		return fmt.Sprintf("%s+%s.%010d", t.Format("2006-01-02"), t.Format("15:04:05"), t.Nanosecond()*10)
	case 'F':
		return t.Format("2006-01-02")
	case 'D':
		return t.Format("01/02/06")
	case 'y':
		return t.Format("06")
	case 'b', 'h':
		return t.Format("Jan")
	case 'B':
		return t.Format("January")
	case 'a':
		return t.Format("Mon")
	case 'A':
		return t.Format("Monday")
	case 'e':
		return t.Format("_2")
	case 'j':
		return fmt.Sprintf("%03d", t.YearDay())
	case 'k':
		return fmt.Sprintf("%2d", t.Hour())
	case 'I':
		return t.Format("03")
	case 'p':
		return t.Format("PM")
	case 'Z':
		return t.Format("MST")
	case 'z':
		return t.Format("-0700")
	case 's':
		return strconv.FormatInt(t.Unix(), 10)
	case 'r':
		return t.Format("03:04:05 PM")
	case 'c':
		return t.Format("Mon Jan _2 15:04:05 2006")
	case 'x':
		return t.Format("01/02/06")
	case 'X':
		return t.Format("15:04:05")
	}
	return "%T" + string(k)
}

// walk evaluates the expression on n and what is below it, children in
// name order; with -depth (or -delete) a directory after its contents.
func (f *finder) walk(n *findNode) {
	c := f.c
	if c.ctx.Err() != nil || f.quit {
		return
	}
	visit := n.depth >= f.minDepth
	if visit && !f.depthFirst {
		f.expr(n)
	}
	if n.info.IsDir() && !n.prune && (f.maxDepth < 0 || n.depth < f.maxDepth) && !f.quit {
		infos, err := c.sh.fs.readDir(c.ctx, n.rel)
		if err != nil {
			c.errorf("'%s': %s", n.shown, errText(err))
			f.status = 1
		}
		for _, sub := range infos {
			if c.stopped() || f.quit {
				break
			}
			f.walk(&findNode{
				shown: strings.TrimSuffix(n.shown, "/") + "/" + sub.Name(),
				root:  n.root,
				rel:   joinRel(n.rel, sub.Name()),
				info:  sub,
				depth: n.depth + 1,
			})
		}
	}
	if visit && f.depthFirst && !f.quit && c.ctx.Err() == nil {
		f.expr(n)
	}
}
