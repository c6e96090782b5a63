package protocol

import (
	"encoding/json"
	"testing"
)

// A command reaches the guest as it did when requests were JSON: bytes
// that are not valid UTF-8 as U+FFFD, one each, everything else as sent.
func TestRequestCarriesCommandAsJSONDid(t *testing.T) {
	for _, c := range []string{"", "echo hi", "a\xffb\xfe\xfd", "\xe2\x82", "é\x00\xc3 ✓", "x\xed\xa0\x80y"} {
		j, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var want string
		if err := json.Unmarshal(j, &want); err != nil {
			t.Fatal(err)
		}
		if got, ok := DecodeRequest(EncodeRequest(c)); !ok || got != want {
			t.Errorf("%q: got %q, %v; want %q", c, got, ok, want)
		}
	}
}

func TestRequestOfAnotherVersionRefused(t *testing.T) {
	req := EncodeRequest("echo hi")
	req[0]++
	for _, r := range [][]byte{nil, {2, 0}, req} {
		if _, ok := DecodeRequest(r); ok {
			t.Errorf("%q accepted", r)
		}
	}
}
