// Package scripted holds what the example gateways' stand-in world is
// made of, so that each example's main.go shows only the gateway: the
// client that posts a request to the scripted model endpoint, and the
// in-memory file store a client's uploads are kept in.
//
//	var out struct{ Output []json.RawMessage }
//	err := scripted.PostJSON(ctx, nil, modelURL+"/v1/responses", req, &out)
//	store := containers.New(p, containers.WithFileSource(scripted.Files{"file-1": {Name: "a.csv", Data: "x\n"}}))
package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/codeport/codeport/gateway/containers"
)

// maxResponseBytes bounds a model's answer.
const maxResponseBytes = 1 << 20

// PostJSON posts req as JSON to url with hc (http.DefaultClient when nil)
// and decodes a 200 answer into resp; any other status is an error with
// the answer's text.
func PostJSON(ctx context.Context, hc *http.Client, url string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Type", "application/json")
	if hc == nil {
		hc = http.DefaultClient
	}
	hresp, err := hc.Do(hreq)
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	defer hresp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(hresp.Body, maxResponseBytes))
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	if hresp.StatusCode != http.StatusOK {
		return fmt.Errorf("model: %s: %s", hresp.Status, strings.TrimSpace(string(b)))
	}
	if err := json.Unmarshal(b, resp); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	return nil
}

// Files is an in-memory store of the files a client uploaded to the
// gateway, by id: the containers.FileSource a container is seeded from.
type Files map[string]struct{ Name, Data string }

// OpenFile opens a stored file (every tenant's: the examples have one).
func (fs Files) OpenFile(_ context.Context, _, id string) (string, io.ReadCloser, error) {
	f, ok := fs[id]
	if !ok {
		return "", nil, fmt.Errorf("%w: %s", containers.ErrFileNotFound, id)
	}
	return f.Name, io.NopCloser(strings.NewReader(f.Data)), nil
}
