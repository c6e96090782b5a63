package wasmpatch

import "strconv"

// Segment is an active data segment: bytes that instantiation writes into
// memory 0 at Offset.
type Segment struct {
	Offset uint32
	Bytes  []byte // a slice of the module given to SplitData
}

// SplitData returns module without its data section, and the active data
// segments that section held, in order, so that a host can lay the data
// out once, in a memory image that every instance maps, rather than have
// each instantiation write it (and, with wazero, keep a slice header per
// segment: the Go toolchain emits up to 100,000 segments, 2.4 MB per
// instance). An instance of the result starts with zeroed memory; the
// host must put the segments (or an image of an instance) there before the
// module's code runs.
//
// Like Patch, it exports every mutable global defined and not exported
// already, as GlobalExportPrefix followed by its index, and returns those
// names in index order: an image of an instance that has run is its memory
// and these. A module with such globals but no export section is refused.
//
// A module whose code could refer to its segments (a data count section,
// which memory.init and data.drop require) or that has passive segments is
// refused with ErrUnsupported: without the data section it would be
// invalid. Every other section is copied byte for byte.
func SplitData(module []byte) (code []byte, data []Segment, globals []string, err error) {
	m, err := parseModule(module)
	if err != nil {
		return nil, nil, nil, err
	}
	r := &reader{buf: module, pos: 0, where: "module"}
	if m.dataCount != nil {
		return nil, nil, nil, r.errorf(ErrUnsupported, "a data count section: the code may use memory.init or data.drop, which need the data section")
	}
	for i, seg := range m.dataSegments {
		if !seg.active || seg.offset < 0 {
			return nil, nil, nil, r.errorf(ErrUnsupported, "data segment %d is passive or at a negative offset", i)
		}
		data = append(data, Segment{Offset: uint32(seg.offset), Bytes: seg.init})
	}
	var exports []byte
	for i, mut := range m.mutable {
		if idx := m.importedGlobals + uint32(i); mut && !m.exportedGlobals[idx] {
			name := GlobalExportPrefix + strconv.FormatUint(uint64(idx), 10)
			globals = append(globals, name)
			exports = appendExport(exports, name, externGlobal, idx)
		}
	}
	if len(globals) > 0 && !m.exports.present {
		return nil, nil, nil, r.errorf(ErrUnsupported, "mutable globals to export but no export section")
	}
	code = append(make([]byte, 0, len(module)+len(exports)+8), header...)
	for _, s := range m.sections {
		switch {
		case s.id == secData:
		case s.id == secExport && len(globals) > 0:
			payload := appendU32(nil, m.exports.count+uint32(len(globals)))
			payload = append(payload, module[m.exports.items:m.exports.end]...)
			payload = append(payload, exports...)
			code = append(code, secExport)
			code = appendU32(code, uint32(len(payload)))
			code = append(code, payload...)
		default:
			code = append(code, module[s.start:s.end]...)
		}
	}
	return code, data, globals, nil
}
