package wasmpatch

import (
	"fmt"
	"strconv"
	"strings"
)

// The names Patch adds to the module's exports, for the host to look up.
const (
	// InterruptGlobal is the exported mutable i32 global checked at the top
	// of every loop: setting it to a non-zero value makes the instance trap
	// with "unreachable" at its next loop iteration.
	InterruptGlobal = "codeport_interrupt"
	// InitDataFunc is the exported function () -> () that copies the
	// module's former active data segments into memory and drops them. Call
	// it once, on an instance whose memory is not restored from an image,
	// before any other code of the module (e.g. _initialize or _start).
	InitDataFunc = "codeport_init_data"
	// GlobalExportPrefix, followed by a global's decimal index, names the
	// export of each mutable global the module did not export already.
	GlobalExportPrefix = "codeport_global."
	// InvokeExportPrefix, followed by what follows InvokeImportPrefix in
	// the import's name, names the dispatcher of each imported function
	// InvokeImportModule.InvokeImportPrefix*: "codeport_invoke.vii" for
	// env.invoke_vii. A dispatcher has the import's type, (i32 fp, T1..Tn)
	// -> R, and calls function fp of table 0 with T1..Tn through
	// call_indirect of type (T1..Tn) -> R.
	InvokeExportPrefix = "codeport_invoke."
)

// The imports that get a dispatcher: LLVM's Emscripten-style lowering of
// C++ exceptions and setjmp/longjmp (-enable-emscripten-cxx-exceptions,
// -enable-emscripten-sjlj) calls every function that may throw through an
// imported env.invoke_<sig>, whose host calls the function back (through
// the dispatcher) and catches what it throws.
const (
	InvokeImportModule = "env"
	InvokeImportPrefix = "invoke_"
)

// SafepointInterval is how many loop iterations, counted across all loops,
// pass between two calls of the safepoint: the most work a call does
// between the host setting InterruptGlobal and the trap, and between a
// stop-the-world request of the Go runtime and its being granted. Each
// safepoint costs an exit to Go, so the interval makes that cost small.
const SafepointInterval = 4096

// Stats says what Patch did.
type Stats struct {
	Functions       int // function bodies rewritten (the added InitDataFunc not included)
	Loops           int // loops that got an interrupt check
	DataSegments    int // active data segments made passive
	ExportedGlobals int // mutable globals newly exported under GlobalExportPrefix
	DroppedSections int // ".debug_*" custom sections removed
	Invokes         int // dispatchers added for env.invoke_* imports (InvokeExportPrefix)
	InputSize       int // bytes
	OutputSize      int // bytes
}

// String is the one-line summary the wasmpatch command prints.
func (s Stats) String() string {
	invokes := ""
	if s.Invokes > 0 {
		invokes = fmt.Sprintf("%d invoke dispatchers added, ", s.Invokes)
	}
	return fmt.Sprintf("%d functions, %d loops instrumented, %d data segments made passive, %d globals exported, "+
		"%d debug sections dropped, %s%d -> %d bytes",
		s.Functions, s.Loops, s.DataSegments, s.ExportedGlobals, s.DroppedSections, invokes, s.InputSize, s.OutputSize)
}

// Patch rewrites a WebAssembly module so that a host can interrupt it and
// restore it from a memory image (see the package documentation). It
// returns the new module and what was changed, or an error wrapping
// ErrMalformed, ErrUnsupported or ErrAlreadyPatched. The input is not
// modified, and the same input always gives the same output.
func Patch(in []byte) ([]byte, Stats, error) {
	m, err := parseModule(in)
	if err != nil {
		return nil, Stats{}, err
	}
	p := &patcher{m: m, stats: Stats{InputSize: len(in)}}
	out, err := p.write()
	if err != nil {
		return nil, Stats{}, err
	}
	p.stats.OutputSize = len(out)
	return out, p.stats, nil
}

// patcher writes the output module from a parsed one.
type patcher struct {
	m     *module
	stats Stats

	interruptGlobal uint32 // index of the added interrupt global
	budgetGlobal    uint32 // index of the added countdown global
	initFunc        uint32 // index of the added InitDataFunc
	safepointFunc   uint32 // index of the added safepoint function
	initType        uint32 // their type index, () -> ()
	exportGlobals   []uint32
	// newTypes are the types appended to the type section, encoded, in
	// the order typeIndex first needed them: () -> () if the module lacks
	// it, then the dispatchers' call_indirect types it lacks.
	newTypes []string
	// types maps each type, encoded, to its index (see typeIndex).
	types map[string]uint32
	// callTypes holds, per invoke_ import, the type index its dispatcher's
	// call_indirect names; the dispatchers are the functions after the
	// safepoint, in import order.
	callTypes []uint32
}

// typeIndex is the index of the type key (encoded as the type section
// holds it): the module's first equal type, or one appended after them.
func (p *patcher) typeIndex(key string) uint32 {
	if p.types == nil {
		p.types = make(map[string]uint32, len(p.m.typeKeys))
		for i, k := range p.m.typeKeys {
			if _, dup := p.types[k]; !dup {
				p.types[k] = uint32(i)
			}
		}
	}
	if i, ok := p.types[key]; ok {
		return i
	}
	i := p.m.types.count + uint32(len(p.newTypes))
	p.newTypes = append(p.newTypes, key)
	p.types[key] = i
	return i
}

func (p *patcher) write() ([]byte, error) {
	m := p.m
	// Everything is appended, so no existing index changes: the new global
	// and function come after all imported and defined ones.
	p.interruptGlobal = m.importedGlobals + uint32(len(m.mutable))
	p.budgetGlobal = p.interruptGlobal + 1
	p.initFunc = m.importedFuncs + m.funcs.count
	p.safepointFunc = p.initFunc + 1
	p.initType = p.typeIndex(emptyFuncType)
	for _, inv := range m.invokes {
		params, results := splitFuncType(m.typeKeys[inv.typeIdx])
		p.callTypes = append(p.callTypes, p.typeIndex(string(encodeFuncType(params[1:], results))))
	}
	for i, mut := range m.mutable {
		if idx := m.importedGlobals + uint32(i); mut && !m.exportedGlobals[idx] {
			p.exportGlobals = append(p.exportGlobals, idx)
		}
	}

	// Sections the output must have, whether or not the input did, in the
	// order the spec requires.
	required := []byte{secType, secFunction, secGlobal, secExport, secDataCount, secCode}
	if m.memories == 0 {
		// The safepoint's memory.grow needs a memory: a module without
		// one gets one of no pages, which nothing else can use.
		required = []byte{secType, secFunction, secMemory, secGlobal, secExport, secDataCount, secCode}
	}
	have := map[byte]bool{}
	for _, s := range m.sections {
		have[s.id] = true
	}
	var missing []byte
	for _, id := range required {
		if !have[id] {
			missing = append(missing, id)
		}
	}

	// A missing section goes right before the first section that must
	// follow it, or after the last known section, ahead of trailing custom
	// sections such as "name".
	lastKnown := -1
	for i, s := range m.sections {
		if s.id != secCustom {
			lastKnown = i
		}
	}
	out := make([]byte, 0, len(m.in)+len(m.in)/8+1024)
	out = append(out, header...)
	addMissing := func(beforeRank int) (err error) {
		for len(missing) > 0 && sectionRank[missing[0]] < beforeRank && err == nil {
			out, err = p.appendSection(out, missing[0], nil)
			missing = missing[1:]
		}
		return err
	}
	const afterAll = 1 << 30
	if lastKnown < 0 {
		if err := addMissing(afterAll); err != nil {
			return nil, err
		}
	}
	for i := range m.sections {
		s := &m.sections[i]
		if s.id != secCustom {
			if err := addMissing(sectionRank[s.id]); err != nil {
				return nil, err
			}
		}
		var err error
		if out, err = p.appendSection(out, s.id, s); err != nil {
			return nil, err
		}
		if i == lastKnown {
			if err := addMissing(afterAll); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// appendSection writes one section: s from the input, changed as the patch
// requires, or a new one of the given id when s is nil.
func (p *patcher) appendSection(out []byte, id byte, s *section) ([]byte, error) {
	m := p.m
	var payload []byte
	switch id {
	case secCustom:
		// DWARF describes code offsets that moved when loops grew.
		if strings.HasPrefix(s.name, ".debug_") {
			p.stats.DroppedSections++
			return out, nil
		}
		return append(out, m.in[s.start:s.end]...), nil
	case secType:
		if len(p.newTypes) == 0 {
			return append(out, m.in[s.start:s.end]...), nil
		}
		payload = p.appendVec(nil, m.types, uint32(len(p.newTypes)))
		for _, t := range p.newTypes {
			payload = append(payload, t...)
		}
	case secFunction:
		payload = p.appendVec(nil, m.funcs, uint32(2+len(m.invokes)))
		payload = appendU32(payload, p.initType)
		payload = appendU32(payload, p.initType)
		for _, inv := range m.invokes {
			payload = appendU32(payload, inv.typeIdx) // the import's own type
		}
	case secGlobal:
		payload = p.appendVec(nil, m.globals, 2)
		// The interrupt: mutable i32, initialised to 0.
		payload = append(payload, 0x7f, 0x01, opI32Const, 0x00, opEnd)
		// The countdown: mutable i32, initialised to the interval.
		payload = append(payload, 0x7f, 0x01, opI32Const)
		payload = appendS32(payload, SafepointInterval)
		payload = append(payload, opEnd)
	case secExport:
		payload = p.appendVec(nil, m.exports, uint32(2+len(p.exportGlobals)+len(m.invokes)))
		payload = appendExport(payload, InterruptGlobal, externGlobal, p.interruptGlobal)
		payload = appendExport(payload, InitDataFunc, externFunc, p.initFunc)
		for _, idx := range p.exportGlobals {
			payload = appendExport(payload, GlobalExportPrefix+strconv.FormatUint(uint64(idx), 10), externGlobal, idx)
		}
		p.stats.ExportedGlobals = len(p.exportGlobals)
		for i, inv := range m.invokes {
			payload = appendExport(payload, InvokeExportPrefix+strings.TrimPrefix(inv.name, InvokeImportPrefix),
				externFunc, p.safepointFunc+1+uint32(i))
		}
		p.stats.Invokes = len(m.invokes)
	case secMemory:
		if s != nil {
			return append(out, m.in[s.start:s.end]...), nil
		}
		payload = []byte{1, 0x01, 0, 0} // one memory: min 0, max 0 pages
	case secDataCount:
		if s != nil {
			return append(out, m.in[s.start:s.end]...), nil
		}
		payload = appendU32(nil, uint32(len(m.dataSegments)))
	case secCode:
		var err error
		if payload, err = p.code(); err != nil {
			return nil, err
		}
	case secData:
		payload = p.data()
	default:
		return append(out, m.in[s.start:s.end]...), nil
	}
	out = append(out, id)
	out = appendU32(out, uint32(len(payload)))
	return append(out, payload...), nil
}

// appendVec writes a vector's count, grown by extra, and copies its
// existing elements as they were encoded.
func (p *patcher) appendVec(out []byte, v vecSection, extra uint32) []byte {
	out = appendU32(out, v.count+extra)
	if v.present {
		out = append(out, p.m.in[v.items:v.end]...)
	}
	return out
}

func appendExport(out []byte, name string, kind byte, idx uint32) []byte {
	out = appendName(out, name)
	out = append(out, kind)
	return appendU32(out, idx)
}

// code rewrites every function body and appends the body of InitDataFunc.
func (p *patcher) code() ([]byte, error) {
	m := p.m
	check := loopCheck(p.budgetGlobal, p.safepointFunc)
	// Bodies grow by a few bytes per loop; the guess only saves copying.
	size := m.code.end - m.code.items
	payload := make([]byte, 0, size+size/8+64)
	payload = appendU32(payload, m.code.count+uint32(2+len(m.invokes)))
	r := &reader{buf: m.in, pos: m.code.items, end: m.code.end}
	var body []byte
	for i := uint32(0); i < m.code.count; i++ {
		r.where = "code section, function " + strconv.FormatUint(uint64(m.importedFuncs+i), 10)
		size, err := r.u32("function body size")
		if err != nil {
			return nil, err
		}
		br, err := r.sub(size, "function body")
		if err != nil {
			return nil, err
		}
		var loops int
		if body, loops, err = rewriteBody(br, body[:0], check); err != nil {
			return nil, err
		}
		payload = appendU32(payload, uint32(len(body)))
		payload = append(payload, body...)
		p.stats.Functions++
		p.stats.Loops += loops
	}
	init := p.initDataBody()
	payload = appendU32(payload, uint32(len(init)))
	payload = append(payload, init...)
	sp := safepointBody(p.budgetGlobal, p.interruptGlobal)
	payload = appendU32(payload, uint32(len(sp)))
	payload = append(payload, sp...)
	for i, inv := range m.invokes {
		params, _ := splitFuncType(m.typeKeys[inv.typeIdx])
		d := dispatcherBody(uint32(len(params)), p.callTypes[i])
		payload = appendU32(payload, uint32(len(d)))
		payload = append(payload, d...)
	}
	return payload, nil
}

// emptyFuncType is the type () -> (), encoded.
const emptyFuncType = "\x60\x00\x00"

func encodeFuncType(params, results string) []byte {
	b := appendU32([]byte{0x60}, uint32(len(params)))
	b = append(b, params...)
	b = appendU32(b, uint32(len(results)))
	return append(b, results...)
}

// dispatcherBody is the body of an invoke_ dispatcher of params
// parameters (the function pointer first), which calls through table 0
// with type callType:
//
//	local.get 1
//	...
//	local.get params-1
//	local.get 0
//	call_indirect callType 0
//
// The results of the callee are the dispatcher's.
func dispatcherBody(params, callType uint32) []byte {
	b := []byte{0x00} // no locals
	for i := uint32(1); i < params; i++ {
		b = appendU32(append(b, opLocalGet), i)
	}
	b = append(b, opLocalGet, 0, opCallIndirect)
	b = appendU32(b, callType)
	return append(b, 0x00, opEnd) // table 0
}

// initDataBody is InitDataFunc: what instantiation did for the active
// segments, in the same order, so that a later segment still overwrites
// an earlier one it overlaps.
func (p *patcher) initDataBody() []byte {
	b := []byte{0x00} // no locals
	for i, seg := range p.m.dataSegments {
		if !seg.active {
			continue
		}
		b = append(b, opI32Const)
		b = appendS32(b, seg.offset) // destination
		b = append(b, opI32Const, 0) // source offset in the segment
		b = append(b, opI32Const)
		b = appendS32(b, int32(uint32(len(seg.init)))) // length, as an i32 bit pattern
		b = append(b, opPrefixMisc, miscMemoryInit)
		b = appendU32(b, uint32(i))
		b = append(b, 0x00) // memory 0
		// Frees the segment: its bytes are never needed again.
		b = append(b, opPrefixMisc, miscDataDrop)
		b = appendU32(b, uint32(i))
	}
	return append(b, opEnd)
}

// data rewrites the data section with every active segment made passive,
// in place, so that segment indices do not change.
func (p *patcher) data() []byte {
	segs := p.m.dataSegments
	size := 8
	for _, s := range segs {
		size += len(s.init) + 8
	}
	payload := make([]byte, 0, size)
	payload = appendU32(payload, uint32(len(segs)))
	for _, seg := range segs {
		if !seg.active {
			payload = append(payload, seg.raw...)
			continue
		}
		payload = append(payload, 0x01) // passive
		payload = appendU32(payload, uint32(len(seg.init)))
		payload = append(payload, seg.init...)
		p.stats.DataSegments++
	}
	return payload
}
