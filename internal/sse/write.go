package sse

import (
	"bytes"
	"strings"
)

// AppendEvent appends an event of type typ with data to dst in the
// canonical form:
//
//	event: typ
//	data: data
//	(an empty line)
//
// Data with line breaks (CR, LF or CRLF) takes a data line per line, which
// a reader joins with LF; the form is canonical only for data without
// them, such as JSON. typ must be non-empty and hold no line break.
func AppendEvent(dst []byte, typ string, data []byte) []byte {
	if typ == "" || strings.ContainsAny(typ, "\r\n") {
		panic("sse: AppendEvent: an event type that is empty or holds a line break")
	}
	dst = append(append(append(dst, "event: "...), typ...), '\n')
	for {
		line := data
		i := bytes.IndexAny(data, "\r\n")
		if i >= 0 {
			line = data[:i]
		}
		dst = append(append(append(dst, "data: "...), line...), '\n')
		if i < 0 {
			break
		}
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	return append(dst, '\n')
}

// AppendComment appends a comment line and an empty line to dst:
// ": text", which keeps a connection alive. text holds no line break.
func AppendComment(dst []byte, text string) []byte {
	if strings.ContainsAny(text, "\r\n") {
		panic("sse: AppendComment: a comment that holds a line break")
	}
	return append(append(append(dst, ": "...), text...), "\n\n"...)
}
