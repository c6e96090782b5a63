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
