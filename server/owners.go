package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// The owners file (TenantsConfig.OwnersFile) is a journal: one JSON object
// per line, each a change of ownership, applied in order:
//
//	{"session":"4f0c…","tenant":"acme","created":"2026-…","idle":600000000000,"lifetime":3600000000000}
//	{"session":"4f0c…","gone":true}
//
// A line is appended with one write(2) on a file opened O_APPEND, so a
// crash of the process loses no line it wrote and leaves at most the last
// one cut short; a line that does not parse is skipped and logged, which
// fails closed (a session without a valid record belongs to nobody). The
// file is rewritten whole, to a temporary file renamed over it, at start
// and when it holds many more lines than live sessions. It is not synced
// per line: an operating-system crash can lose the last records, and with
// them the ownership of the sessions they record, never grant one.

// ownerRecord is one line of the owners file.
type ownerRecord struct {
	Session  string        `json:"session"`
	Tenant   string        `json:"tenant,omitempty"`
	Created  time.Time     `json:"created,omitzero"`
	Idle     time.Duration `json:"idle,omitempty"`
	Lifetime time.Duration `json:"lifetime,omitempty"`
	Gone     bool          `json:"gone,omitempty"`
}

// maxOwnerLine bounds a line of the owners file: a record holds an id of
// at most port.MaxIDBytes and a tenant name.
const maxOwnerLine = 4096

type journal struct {
	path   string
	f      *os.File
	logger *slog.Logger
	// lines counts the lines in the file.
	lines int
}

// openJournal reads the owners file (a missing one is empty) and opens it
// for appending. records are the live owners it holds.
func openJournal(path string, logger *slog.Logger) (*journal, map[string]ownerRecord, error) {
	records := map[string]ownerRecord{}
	f, err := os.Open(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, nil, err
	default:
		err := readJournal(f, records, logger)
		f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	j := &journal{path: path, logger: logger}
	return j, records, nil
}

func readJournal(r io.Reader, records map[string]ownerRecord, logger *slog.Logger) error {
	br := bufio.NewReaderSize(r, maxOwnerLine)
	for n := 1; ; n++ {
		line, isPrefix, err := br.ReadLine()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if isPrefix {
			// Over the bound: not a line this package wrote. Skip it whole.
			for isPrefix && err == nil {
				_, isPrefix, err = br.ReadLine()
			}
			logger.Warn("owners file: line too long; skipped", "line", n)
			continue
		}
		var rec ownerRecord
		if err := json.Unmarshal(line, &rec); err != nil || rec.Session == "" || (!rec.Gone && rec.Tenant == "") {
			logger.Warn("owners file: line unreadable; skipped", "line", n)
			continue
		}
		if rec.Gone {
			delete(records, rec.Session)
		} else {
			records[rec.Session] = rec
		}
	}
}

func (j *journal) append(rec ownerRecord) error {
	if j.f == nil {
		return errors.New("not open")
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return err
	}
	j.lines++
	return nil
}

// rewrite replaces the file with the live records, atomically, and opens
// the new file for appending.
func (j *journal) rewrite(live []ownerRecord) error {
	tmp, err := os.CreateTemp(filepath.Dir(j.path), filepath.Base(j.path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	bw := bufio.NewWriter(tmp)
	for _, rec := range live {
		b, err := json.Marshal(rec)
		if err != nil {
			tmp.Close()
			return err
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), j.path); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(j.path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	f, err := os.OpenFile(j.path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	if j.f != nil {
		j.f.Close()
	}
	j.f, j.lines = f, len(live)
	return nil
}

func (j *journal) close() error {
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}
