package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// call sends a request to a served codeport with an optional bearer
// token and returns the status and body.
func call(t *testing.T, s served, method, path, token, contentType, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestServeContainersAPI: with containers-api, serve answers OpenAI's
// Containers API behind the same token as the contract, whose routes are
// as before; the guard's refusals there are in OpenAI's shape. Without
// it, /v1/containers is the contract's 404.
func TestServeContainersAPI(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	const token = "a-token-of-the-operator-0123456789"
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "--auth-token-file", tokenFile, "--containers-api=true", "--max-containers", "1", "--container-expiry", "5m")

	status, body := call(t, s, http.MethodGet, "/v1/containers", "", "", "")
	var refusal struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    string  `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &refusal); status != http.StatusUnauthorized || err != nil || refusal.Error.Message == "" || refusal.Error.Code != "unauthorized" {
		t.Errorf("no token: %d %s", status, body)
	}
	status, body = call(t, s, http.MethodPost, "/v1/containers", token, "application/json", `{"name":"one"}`)
	var c map[string]any
	if err := json.Unmarshal(body, &c); status != http.StatusOK || err != nil || c["object"] != "container" {
		t.Fatalf("create: %d %s", status, body)
	}
	if ea, _ := c["expires_after"].(map[string]any); ea["minutes"] != float64(5) {
		t.Errorf("container-expiry not applied: %v", c["expires_after"])
	}
	status, body = call(t, s, http.MethodPost, "/v1/containers", token, "application/json", `{"name":"two"}`)
	if status != http.StatusBadRequest || !strings.Contains(string(body), "container_limit_reached") {
		t.Errorf("max-containers not applied: %d %s", status, body)
	}
	// The contract's routes answer as they did.
	if status, body := call(t, s, http.MethodGet, "/capabilities", token, "", ""); status != http.StatusOK {
		t.Errorf("capabilities: %d %s", status, body)
	}
	if status, body := call(t, s, http.MethodGet, "/capabilities", "", "", ""); status != http.StatusUnauthorized || !strings.Contains(string(body), `"detail"`) {
		t.Errorf("capabilities without a token: %d %s", status, body)
	}
	if status, body := call(t, s, http.MethodGet, "/v1/other", token, "", ""); status != http.StatusNotFound || !strings.Contains(string(body), `"detail"`) {
		t.Errorf("another path: %d %s", status, body)
	}
	// Stopping serve ends the container's session before the port.
	if code := s.stop(); code != 0 {
		t.Errorf("serve exited %d; log:\n%s", code, s.log)
	}

	off := startServe(t, "--auth-token-file", tokenFile)
	status, body = call(t, off, http.MethodPost, "/v1/containers", token, "application/json", `{"name":"one"}`)
	if status != http.StatusNotFound || !strings.Contains(string(body), "route_not_found") {
		t.Errorf("without containers-api: %d %s", status, body)
	}
}
