package wasmpatch

import "strings"

// SnapshotGlobals returns the names under which a module Patch rewrote
// exports its mutable globals (GlobalExportPrefix followed by the index),
// in export order. A host reads and writes them to carry an instance's
// globals into another; wazero lists exported functions and memories but
// not globals, hence this.
func SnapshotGlobals(patched []byte) ([]string, error) {
	r, err := newModuleReader(patched)
	if err != nil {
		return nil, err
	}
	for r.remaining() > 0 {
		r.where = "section list"
		id, err := r.byte("section id")
		if err != nil {
			return nil, err
		}
		size, err := r.u32("section size")
		if err != nil {
			return nil, err
		}
		body, err := r.sub(size, "section")
		if err != nil {
			return nil, err
		}
		if id != secExport {
			continue
		}
		body.where = "export section"
		var names []string
		var skipped vecSection
		err = parseVec(body, &skipped, "export", func(uint32) error {
			name, err := body.name("export name")
			if err != nil {
				return err
			}
			kind, err := body.byte("export kind")
			if err != nil {
				return err
			}
			if err := body.skipU32("export index"); err != nil {
				return err
			}
			if kind == externGlobal && strings.HasPrefix(name, GlobalExportPrefix) {
				names = append(names, name)
			}
			return nil
		})
		return names, err
	}
	return nil, nil
}

// TableWrites counts the instructions of module that can change a table
// after instantiation: table.set, table.grow, table.fill, table.copy,
// table.init and elem.drop. A host that makes an instance anew by putting
// back its memory and globals (and not its tables) relies on none.
func TableWrites(module []byte) (int, error) {
	r, err := newModuleReader(module)
	if err != nil {
		return 0, err
	}
	n := 0
	for r.remaining() > 0 {
		r.where = "section list"
		id, err := r.byte("section id")
		if err != nil {
			return 0, err
		}
		size, err := r.u32("section size")
		if err != nil {
			return 0, err
		}
		body, err := r.sub(size, "section")
		if err != nil {
			return 0, err
		}
		if id != secCode {
			continue
		}
		body.where = "code section"
		var bodies vecSection
		err = parseVec(body, &bodies, "function body", func(uint32) error {
			size, err := body.u32("function body size")
			if err != nil {
				return err
			}
			fn, err := body.sub(size, "function body")
			if err != nil {
				return err
			}
			w, err := countTableWrites(fn)
			n += w
			return err
		})
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// countTableWrites counts the table writes of one function body.
func countTableWrites(r *reader) (int, error) {
	groups, err := r.u32("local declaration count")
	if err != nil {
		return 0, err
	}
	for range groups {
		if err := r.skipU32("local count"); err != nil {
			return 0, err
		}
		if err := readValType(r, "local type"); err != nil {
			return 0, err
		}
	}
	n := 0
	for r.remaining() > 0 {
		op := r.buf[r.pos]
		if op == 0x26 { // table.set
			n++
		}
		if op == opPrefixMisc {
			sub := &reader{buf: r.buf, pos: r.pos + 1, end: r.end}
			if s, err := sub.u32("0xfc sub-opcode"); err == nil && s >= 0x0c && s <= 0x11 && s != 0x10 {
				n++ // all but table.size
			}
		}
		if err := skipInstruction(r); err != nil {
			return n, err
		}
	}
	return n, nil
}
