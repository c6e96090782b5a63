package contract_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/codeport/codeport/contract"
)

// benchProgram is Python source of about n bytes, with the newlines,
// quotes, tabs and occasional non-ASCII text that real cells carry, so
// that its JSON string has escapes throughout.
func benchProgram(n int) string {
	const lines = "import pandas as pd\n" +
		"df = pd.read_csv(\"data.csv\", sep=\"\\t\")\n" +
		"for i, row in df.iterrows():\n" +
		"\tprint(f\"{i}: {row['name']!r} — {row['value']:.3f}\")\n" +
		"# a comment with an apostrophe: it's fine\n"
	var sb strings.Builder
	for sb.Len() < n {
		sb.WriteString(lines)
	}
	return sb.String()[:n]
}

// benchBody marshals an exec request whose input is in, as a gateway
// sends it.
func benchBody(b *testing.B, tool string, in any) []byte {
	b.Helper()
	body, err := json.Marshal(map[string]any{
		"tool":            tool,
		"input":           in,
		"timeout_seconds": 30,
		"tool_use_id":     "srvtoolu_01A09q90qw90lq917835lq9",
	})
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// decodeBenchBodies are the request bodies the decode benchmarks read: an
// ordinary cell (about 1 KiB), a large program (100 KiB of code), and a
// file written through the editor (1 MiB of file_text; uploads proper are
// multipart, not JSON, and this is the largest JSON body a client sends).
func decodeBenchBodies(b *testing.B) []struct {
	name string
	body []byte
} {
	return []struct {
		name string
		body []byte
	}{
		{"exec-1KiB", benchBody(b, "code_execution", map[string]string{"code": benchProgram(900)})},
		{"exec-100KiB", benchBody(b, "code_execution", map[string]string{"code": benchProgram(100 << 10)})},
		{"create-1MiB", benchBody(b, "text_editor_code_execution", map[string]string{
			"command": "create", "path": "analysis/report.py", "file_text": benchProgram(1 << 20),
		})},
	}
}

// BenchmarkDecodeExecRequest measures what the server does with an exec
// body: decode it (duplicate keys refused) and convert it to the port's
// request.
func BenchmarkDecodeExecRequest(b *testing.B) {
	for _, tc := range decodeBenchBodies(b) {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.body)))
			b.ReportAllocs()
			for b.Loop() {
				var req contract.ExecRequest
				if err := json.Unmarshal(tc.body, &req); err != nil {
					b.Fatal(err)
				}
				if _, err := contract.ExecRequestToPort(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeDuplicateKeys measures the duplicate-key check alone, on
// the same bodies.
func BenchmarkDecodeDuplicateKeys(b *testing.B) {
	for _, tc := range decodeBenchBodies(b) {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.body)))
			b.ReportAllocs()
			for b.Loop() {
				if err := contract.CheckDuplicateKeys(tc.body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
