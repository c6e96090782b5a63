package contract_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/port"
)

// Produced files' types, sizes and inline images travel beside the result
// block, whose entries stay contract v1's; the client takes back an image
// only when its bytes are one.
func TestProducedFilesRoundTrip(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
	in := port.Result{Tool: port.ToolCodeExecution, Outcome: port.OutcomeCompleted, Files: []port.OutputFile{
		{FileID: "file_A", Filename: "chart.png", MediaType: "image/png", Size: int64(len(png)), Data: png},
		{FileID: "file_B", Filename: "t.csv", MediaType: "text/csv; charset=utf-8", Size: 4},
		{FileID: "file_C", Filename: "foreign.bin"}, // a backend that says nothing of it
	}}
	b, err := json.Marshal(contract.ResultFromPort(in))
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		ResultBlock struct {
			Content struct {
				Content []map[string]any `json:"content"`
			} `json:"content"`
		} `json:"result_block"`
		Files []map[string]any `json:"files"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, e := range raw.ResultBlock.Content.Content {
		if len(e) != 3 {
			t.Errorf("a result block entry has fields beyond contract v1's: %v", e)
		}
	}
	if len(raw.Files) != 2 || raw.Files[0]["data"] == nil || raw.Files[1]["data"] != nil {
		t.Errorf("files beside the block: %v", raw.Files)
	}
	var wire contract.ExecResponse
	if err := json.Unmarshal(b, &wire); err != nil {
		t.Fatal(err)
	}
	out := contract.ResultToPort(wire)
	if len(out.Files) != 3 || !bytes.Equal(out.Files[0].Data, png) || out.Files[0].MediaType != "image/png" ||
		out.Files[1].MediaType != "text/csv" || out.Files[1].Size != 4 || out.Files[1].Data != nil ||
		out.Files[2].MediaType != "" || out.Files[2].Data != nil {
		t.Fatalf("round trip: %+v", out.Files)
	}

	// A backend's claims are checked against the bytes and the block.
	forged := strings.NewReplacer(
		`"mime_type":"image/png","size_bytes":16`, `"mime_type":"image/png","size_bytes":99`,
	).Replace(string(b))
	for name, body := range map[string]string{
		"text passed off as an image": strings.Replace(string(b), `"data":"iVBORw0KGgoAAAANSUhEUg=="`, `"data":"aGVsbG8="`, 1),
		"a size its bytes deny":       forged,
		"details of another file":     strings.Replace(string(b), `"filename":"chart.png","mime_type"`, `"filename":"other.png","mime_type"`, 1),
		"a media type that is none":   strings.Replace(string(b), `"text/csv; charset=utf-8"`, `"text csv"`, 1),
	} {
		if body == string(b) {
			t.Fatalf("%s: the forgery did not apply to %s", name, b)
		}
		var w contract.ExecResponse
		if err := json.Unmarshal([]byte(body), &w); err != nil {
			t.Fatal(err)
		}
		got := contract.ResultToPort(w).Files
		switch name {
		case "text passed off as an image", "details of another file":
			if got[0].Data != nil {
				t.Errorf("%s: kept as an image: %+v", name, got[0])
			}
		case "a size its bytes deny":
			if got[0].Size != int64(len(png)) {
				t.Errorf("%s: size %d", name, got[0].Size)
			}
		case "a media type that is none":
			if got[1].MediaType != "" {
				t.Errorf("%s: %+v", name, got[1])
			}
		}
	}
}
