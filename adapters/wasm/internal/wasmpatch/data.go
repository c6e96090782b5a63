package wasmpatch

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
// module's code runs. Patch the result, if at all, after: Patch would make
// the segments passive, and keep them.
//
// A module whose code could refer to its segments (a data count section,
// which memory.init and data.drop require) or that has passive segments is
// refused with ErrUnsupported: without the data section it would be
// invalid. Every other section is copied byte for byte.
func SplitData(module []byte) (code []byte, data []Segment, err error) {
	m, err := parseModule(module)
	if err != nil {
		return nil, nil, err
	}
	r := &reader{buf: module, pos: 0, where: "module"}
	if m.dataCount != nil {
		return nil, nil, r.errorf(ErrUnsupported, "a data count section: the code may use memory.init or data.drop, which need the data section")
	}
	for i, seg := range m.dataSegments {
		if !seg.active || seg.offset < 0 {
			return nil, nil, r.errorf(ErrUnsupported, "data segment %d is passive or at a negative offset", i)
		}
		data = append(data, Segment{Offset: uint32(seg.offset), Bytes: seg.init})
	}
	code = append(make([]byte, 0, len(module)), header...)
	for _, s := range m.sections {
		if s.id != secData {
			code = append(code, module[s.start:s.end]...)
		}
	}
	return code, data, nil
}
