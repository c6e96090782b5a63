package wasmpatch

import (
	"fmt"
	"strings"
)

// Section ids of the binary format.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
	secTag       = 13
)

// sectionRank is the position the spec requires of each known section,
// which is not the order of their ids: DataCount (12) comes before code
// (10). Custom sections may appear anywhere and have no rank.
var sectionRank = map[byte]int{
	secType:      1,
	secImport:    2,
	secFunction:  3,
	secTable:     4,
	secMemory:    5,
	secGlobal:    6,
	secExport:    7,
	secStart:     8,
	secElement:   9,
	secDataCount: 10,
	secCode:      11,
	secData:      12,
}

var sectionNames = map[byte]string{
	secCustom:    "custom section",
	secType:      "type section",
	secImport:    "import section",
	secFunction:  "function section",
	secTable:     "table section",
	secMemory:    "memory section",
	secGlobal:    "global section",
	secExport:    "export section",
	secStart:     "start section",
	secElement:   "element section",
	secCode:      "code section",
	secData:      "data section",
	secDataCount: "data count section",
}

// Export kinds.
const (
	externFunc   = 0x00
	externTable  = 0x01
	externMemory = 0x02
	externGlobal = 0x03
	externTag    = 0x04
)

// The value and reference types the patch looks at.
const (
	valI32     = 0x7f
	valV128    = 0x7b
	refFuncref = 0x70
)

var header = []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00} // "\0asm", version 1

// section is one section of the input, by position: start is its id byte,
// payload the bytes after its size.
type section struct {
	id           byte
	start        int
	payloadStart int
	end          int
	name         string // custom sections only
}

// vecSection is a section holding a vector: its count, and where the
// encoded elements start, so that new elements can be appended to a copy
// of the old ones without re-encoding them.
type vecSection struct {
	present bool
	count   uint32
	items   int // offset of the first element
	end     int
}

// dataSegment is one segment of the data section as the rewrite needs it.
type dataSegment struct {
	active bool
	offset int32 // active only: the value of its i32.const offset
	init   []byte
	raw    []byte // passive only: the whole segment, copied unchanged
}

// v128Global is a defined mutable global of type v128.
type v128Global struct {
	index  uint32
	offset int // of its global type, for errors
}

// invokeImport is one imported function env.invoke_<sig>.
type invokeImport struct {
	name    string // the import's name, "invoke_" included
	typeIdx uint32
	offset  int // of the import entry, for errors
}

// module is what Patch learns of the input before writing anything. The
// code section is not decoded here but while it is rewritten.
type module struct {
	in       []byte
	sections []section

	types vecSection
	// typeKeys holds each type as encoded (form, params, results), by
	// index: what the patch looks types up by (patcher.typeIndex).
	typeKeys []string

	// invokes are the imported functions env.invoke_*, in import order:
	// each gets a dispatcher (see InvokeExportPrefix).
	invokes []invokeImport
	// tables counts the tables, imported and defined; table0 is the
	// element type of the first.
	tables uint32
	table0 byte

	importedFuncs   uint32
	importedGlobals uint32

	funcs   vecSection
	globals vecSection
	mutable []bool // per defined global
	// mutableV128 are the defined mutable globals of type v128, which
	// checkGlobals refuses to export.
	mutableV128 []v128Global

	exports         vecSection
	exportedGlobals map[uint32]bool

	memories uint32 // imported and defined

	dataCount    *uint32
	dataSegments []dataSegment
	code         vecSection
}

// newModuleReader checks a module's header and returns a reader at its
// first section.
func newModuleReader(in []byte) (*reader, error) {
	r := &reader{buf: in, end: len(in), where: "header"}
	magic, err := r.bytes(uint32(len(header)), "module header")
	if err != nil {
		return nil, err
	}
	if string(magic) != string(header) {
		r.pos = 0
		return nil, r.malformed("not a WebAssembly 1.0 binary (header % x)", magic)
	}
	return r, nil
}

// parseModule checks the header and the order of sections, and decodes
// every section but custom ones, whose content is opaque. Function bodies
// are only delimited here: they are decoded while being rewritten.
func parseModule(in []byte) (*module, error) {
	m := &module{in: in, exportedGlobals: map[uint32]bool{}}
	r, err := newModuleReader(in)
	if err != nil {
		return nil, err
	}

	lastRank := 0
	for r.remaining() > 0 {
		s := section{start: r.pos}
		r.where = "section list"
		if s.id, err = r.byte("section id"); err != nil {
			return nil, err
		}
		name, known := sectionNames[s.id]
		if !known {
			r.pos--
			if s.id == secTag {
				return nil, r.errorf(ErrUnsupported, "tag section (exception handling) is not supported")
			}
			return nil, r.malformed("unknown section id %d", s.id)
		}
		size, err := r.u32(name + " size")
		if err != nil {
			return nil, err
		}
		body, err := r.sub(size, name)
		if err != nil {
			return nil, err
		}
		s.payloadStart, s.end = body.pos, body.end
		body.where = name
		if s.id == secCustom {
			if s.name, err = body.name("custom section name"); err != nil {
				return nil, err
			}
		} else {
			rank := sectionRank[s.id]
			if rank <= lastRank {
				body.pos = s.start
				return nil, body.malformed("%s is out of order or repeated", name)
			}
			lastRank = rank
			if err := m.parseSection(s.id, body); err != nil {
				return nil, err
			}
		}
		m.sections = append(m.sections, s)
	}

	if m.funcs.count != m.code.count {
		return nil, (&reader{buf: in, pos: len(in), where: "module"}).malformed(
			"function section declares %d functions but code section has %d bodies", m.funcs.count, m.code.count)
	}
	if m.dataCount != nil && *m.dataCount != uint32(len(m.dataSegments)) {
		return nil, (&reader{buf: in, pos: len(in), where: "module"}).malformed(
			"data count section says %d segments but data section has %d", *m.dataCount, len(m.dataSegments))
	}
	if err := m.checkInvokes(); err != nil {
		return nil, err
	}
	if err := m.checkGlobals(); err != nil {
		return nil, err
	}
	return m, nil
}

// checkGlobals refuses a mutable v128 global that Patch would export
// under GlobalExportPrefix: a host saves and restores such globals as 64
// bits (wazero's api.MutableGlobal reads the low half of a v128 and sets
// the high half to zero), so a restored instance would get half its value
// back and run on. clang does not make v128 globals of C code. A v128
// global that is immutable, imported or exported already is left alone,
// as globals of other types are.
func (m *module) checkGlobals() error {
	for _, g := range m.mutableV128 {
		if !m.exportedGlobals[g.index] {
			return &formatError{kind: ErrUnsupported, where: "global section", offset: g.offset,
				msg: fmt.Sprintf("global %d is a mutable v128, which the host cannot save and restore "+
					"through its %s%d export (it carries globals as 64 bits)", g.index, GlobalExportPrefix, g.index)}
		}
	}
	return nil
}

func (m *module) parseSection(id byte, r *reader) error {
	switch id {
	case secType:
		return m.parseTypes(r)
	case secImport:
		return m.parseImports(r)
	case secFunction:
		return parseVec(r, &m.funcs, "function", func(uint32) error { return r.skipU32("type index") })
	case secGlobal:
		return parseVec(r, &m.globals, "global", func(i uint32) error {
			at := r.pos
			if err := readValType(r, "global type"); err != nil {
				return err
			}
			mut, err := readMutability(r)
			if err != nil {
				return err
			}
			m.mutable = append(m.mutable, mut)
			if mut && r.buf[at] == valV128 {
				m.mutableV128 = append(m.mutableV128, v128Global{index: m.importedGlobals + i, offset: at})
			}
			_, err = skipConstExpr(r)
			return err
		})
	case secExport:
		return m.parseExports(r)
	case secDataCount:
		n, err := r.u32("data count")
		if err != nil {
			return err
		}
		m.dataCount = &n
		return r.done("data count section")
	case secCode:
		// Bodies are decoded when rewritten; delimit them now so that the
		// count and sizes are known to be sound before anything is written.
		return parseVec(r, &m.code, "function body", func(uint32) error {
			size, err := r.u32("function body size")
			if err != nil {
				return err
			}
			_, err = r.sub(size, "function body")
			return err
		})
	case secData:
		return m.parseData(r)
	}
	// The table, memory, start and element sections are copied unchanged:
	// they are decoded only to refuse a malformed module.
	var skipped vecSection
	switch id {
	case secTable:
		return parseVec(r, &skipped, "table", func(uint32) error {
			if err := m.readTableType(r); err != nil {
				return err
			}
			return readLimits(r)
		})
	case secMemory:
		return parseVec(r, &skipped, "memory", func(uint32) error {
			m.memories++
			return readLimits(r)
		})
	case secStart:
		if err := r.skipU32("start function index"); err != nil {
			return err
		}
		return r.done("start section")
	case secElement:
		return parseVec(r, &skipped, "element segment", func(i uint32) error { return readElementSegment(r, i) })
	}
	return nil
}

// readElementSegment decodes one of the eight forms of element segment the
// flags select: bit 0 passive or declarative, bit 1 explicit table index
// (if active) or declarative (if not), bit 2 elements as expressions
// rather than function indices.
func readElementSegment(r *reader, i uint32) error {
	at := r.pos
	flags, err := r.u32("element segment flags")
	if err != nil {
		return err
	}
	if flags > 7 {
		r.pos = at
		return r.malformed("element segment %d has unknown flags %d", i, flags)
	}
	active := flags&1 == 0
	if active && flags&2 != 0 {
		if err := r.skipU32("element segment table index"); err != nil {
			return err
		}
	}
	if active {
		if _, err := skipConstExpr(r); err != nil {
			return err
		}
	}
	exprs := flags&4 != 0
	// Forms 0 and 4 imply funcref; the others name the element kind (0x00,
	// funcref) or the reference type.
	if flags&3 != 0 {
		if exprs {
			if err := readRefType(r, "element type"); err != nil {
				return err
			}
		} else if kind, err := r.byte("element kind"); err != nil {
			return err
		} else if kind != 0x00 {
			r.pos--
			return r.malformed("invalid element kind %#x", kind)
		}
	}
	n, err := r.u32("element count")
	if err != nil {
		return err
	}
	for j := uint32(0); j < n; j++ {
		if exprs {
			_, err = skipConstExpr(r)
		} else {
			err = r.skipU32("function index")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// parseVec decodes a section made of one vector, calling each for every
// element, and records where the elements are.
func parseVec(r *reader, v *vecSection, what string, each func(i uint32) error) error {
	n, err := r.u32(what + " count")
	if err != nil {
		return err
	}
	v.present, v.count, v.items, v.end = true, n, r.pos, r.end
	for i := uint32(0); i < n; i++ {
		if err := each(i); err != nil {
			return err
		}
	}
	return r.done(r.where)
}

func (m *module) parseTypes(r *reader) error {
	return parseVec(r, &m.types, "type", func(i uint32) error {
		at := r.pos
		form, err := r.byte("type form")
		if err != nil {
			return err
		}
		if form != 0x60 {
			r.pos = at
			return r.errorf(ErrUnsupported, "type %d has form %#x, not a function type (GC types are not supported)", i, form)
		}
		for range 2 { // params, results
			n, err := r.u32("type arity")
			if err != nil {
				return err
			}
			for j := uint32(0); j < n; j++ {
				if err := readValType(r, "value type"); err != nil {
					return err
				}
			}
		}
		m.typeKeys = append(m.typeKeys, string(r.buf[at:r.pos]))
		return nil
	})
}

// readTableType reads a table's element type, and records it if the table
// is the module's first.
func (m *module) readTableType(r *reader) error {
	at := r.pos
	if err := readRefType(r, "table element type"); err != nil {
		return err
	}
	if m.tables == 0 {
		m.table0 = r.buf[at]
	}
	m.tables++
	return nil
}

// checkInvokes refuses env.invoke_ imports that cannot get a dispatcher:
// one whose first parameter, the function pointer, is not an i32, one
// with more than one result, a name imported twice, and any at all in a
// module whose table 0 is missing or holds no functions.
func (m *module) checkInvokes() error {
	seen := map[string]bool{}
	for _, inv := range m.invokes {
		fail := func(kind error, format string, args ...any) error {
			return &formatError{kind: kind, where: "import section", offset: inv.offset,
				msg: "import " + InvokeImportModule + "." + inv.name + ": " + fmt.Sprintf(format, args...)}
		}
		if inv.typeIdx >= uint32(len(m.typeKeys)) {
			return fail(ErrMalformed, "type index %d is out of range (%d types)", inv.typeIdx, len(m.typeKeys))
		}
		params, results := splitFuncType(m.typeKeys[inv.typeIdx])
		switch {
		case len(params) == 0 || params[0] != valI32:
			return fail(ErrUnsupported, "the first parameter (the function pointer) is not an i32")
		case len(results) > 1:
			return fail(ErrUnsupported, "%d results; a dispatcher returns at most one", len(results))
		case seen[inv.name]:
			return fail(ErrUnsupported, "imported twice")
		case m.tables == 0:
			return fail(ErrUnsupported, "the module has no table for its dispatcher to call through")
		case m.table0 != refFuncref:
			return fail(ErrUnsupported, "table 0 holds %#x, not funcref, so no dispatcher can call through it", m.table0)
		}
		seen[inv.name] = true
	}
	return nil
}

// splitFuncType decodes a type as typeKeys holds it, which parseTypes
// checked: the form 0x60, then vec(params), then vec(results).
func splitFuncType(key string) (params, results string) {
	r := &reader{buf: []byte(key), pos: 1, end: len(key)}
	n, _ := r.u32("")
	params = key[r.pos : r.pos+int(n)]
	r.pos += int(n)
	n, _ = r.u32("")
	return params, key[r.pos : r.pos+int(n)]
}

func (m *module) parseImports(r *reader) error {
	var imports vecSection
	return parseVec(r, &imports, "import", func(uint32) error {
		entry := r.pos
		modName, err := r.name("import module name")
		if err != nil {
			return err
		}
		name, err := r.name("import name")
		if err != nil {
			return err
		}
		at := r.pos
		kind, err := r.byte("import kind")
		if err != nil {
			return err
		}
		switch kind {
		case externFunc:
			m.importedFuncs++
			typeIdx, err := r.u32("type index")
			if err == nil && modName == InvokeImportModule && strings.HasPrefix(name, InvokeImportPrefix) {
				m.invokes = append(m.invokes, invokeImport{name: name, typeIdx: typeIdx, offset: entry})
			}
			return err
		case externTable:
			if err := m.readTableType(r); err != nil {
				return err
			}
			return readLimits(r)
		case externMemory:
			m.memories++
			return readLimits(r)
		case externGlobal:
			m.importedGlobals++
			if err := readValType(r, "global type"); err != nil {
				return err
			}
			_, err := readMutability(r)
			return err
		case externTag:
			r.pos = at
			return r.errorf(ErrUnsupported, "tag import (exception handling) is not supported")
		}
		r.pos = at
		return r.malformed("unknown import kind %#x", kind)
	})
}

func readLimits(r *reader) error {
	at := r.pos
	flags, err := r.byte("limits flags")
	if err != nil {
		return err
	}
	// 0: min; 1: min, max; 2 and 3: the same for shared memory (threads).
	// Larger flags are memory64 or custom page sizes.
	if flags > 3 {
		r.pos = at
		return r.errorf(ErrUnsupported, "limits flags %#x (memory64 or custom page sizes) are not supported", flags)
	}
	if err := r.skipU32("limits minimum"); err != nil {
		return err
	}
	if flags&1 != 0 {
		return r.skipU32("limits maximum")
	}
	return nil
}

func readMutability(r *reader) (bool, error) {
	b, err := r.byte("global mutability")
	if err != nil {
		return false, err
	}
	if b > 1 {
		r.pos--
		return false, r.malformed("invalid global mutability %#x", b)
	}
	return b == 1, nil
}

func (m *module) parseExports(r *reader) error {
	return parseVec(r, &m.exports, "export", func(uint32) error {
		at := r.pos
		name, err := r.name("export name")
		if err != nil {
			return err
		}
		switch {
		case name == InterruptGlobal:
			return &formatError{kind: ErrAlreadyPatched, where: r.where, offset: at,
				msg: "the module already exports " + InterruptGlobal}
		case name == InitDataFunc || strings.HasPrefix(name, GlobalExportPrefix) || strings.HasPrefix(name, InvokeExportPrefix):
			return &formatError{kind: ErrUnsupported, where: r.where, offset: at,
				msg: "export name " + name + " is reserved for the names this patch adds"}
		}
		kindAt := r.pos
		kind, err := r.byte("export kind")
		if err != nil {
			return err
		}
		if kind > externGlobal {
			r.pos = kindAt
			if kind == externTag {
				return r.errorf(ErrUnsupported, "tag export (exception handling) is not supported")
			}
			return r.malformed("unknown export kind %#x", kind)
		}
		idx, err := r.u32("export index")
		if err != nil {
			return err
		}
		if kind == externGlobal {
			m.exportedGlobals[idx] = true
		}
		return nil
	})
}

func (m *module) parseData(r *reader) error {
	var data vecSection
	return parseVec(r, &data, "data segment", func(i uint32) error {
		at := r.pos
		flags, err := r.u32("data segment flags")
		if err != nil {
			return err
		}
		var seg dataSegment
		switch flags {
		case 0: // active, memory 0
			seg.active = true
		case 1: // passive
		case 2: // active, explicit memory index
			seg.active = true
			mem, err := r.u32("data segment memory index")
			if err != nil {
				return err
			}
			if mem != 0 {
				r.pos = at
				return r.errorf(ErrUnsupported, "data segment %d is for memory %d; only memory 0 is supported", i, mem)
			}
		default:
			r.pos = at
			return r.malformed("data segment %d has unknown flags %d", i, flags)
		}
		if seg.active {
			exprAt := r.pos
			ops, err := skipConstExpr(r)
			if err != nil {
				return err
			}
			if len(ops) != 1 || ops[0] != opI32Const {
				r.pos = exprAt
				return r.errorf(ErrUnsupported, "data segment %d: offset is not a single i32.const but %s; "+
					"only constant offsets can be moved into %s", i, describeOps(ops), InitDataFunc)
			}
			// Decode the offset again now that its form is known.
			off := &reader{buf: r.buf, pos: exprAt + 1, end: r.end}
			v, err := off.signed(32, "data segment offset")
			if err != nil {
				return err
			}
			seg.offset = int32(v)
		}
		n, err := r.u32("data segment size")
		if err != nil {
			return err
		}
		if seg.init, err = r.bytes(n, "data segment contents"); err != nil {
			return err
		}
		if !seg.active {
			seg.raw = r.buf[at:r.pos]
		}
		m.dataSegments = append(m.dataSegments, seg)
		return nil
	})
}

// describeOps names the instructions of a constant expression for an
// error message, e.g. "global.get i32.const i32.add".
func describeOps(ops []byte) string {
	if len(ops) == 0 {
		return "an empty expression"
	}
	names := make([]string, len(ops))
	for i, op := range ops {
		names[i] = constOpcodes[op]
	}
	return strings.Join(names, " ")
}
