package port

import (
	"bytes"
	"crypto/sha256"
	"math/rand/v2"
	"testing"
)

// However a stream is cut into writes, sealTail hashes exactly the bytes
// before its last 32 and holds those 32.
func TestSealTailHoldsBackTheLast32Bytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, 31, 32, 33, 64, 65, 1000, 70000} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		for trial := range 20 {
			s := &sealTail{h: sha256.New()}
			for rest := data; len(rest) > 0; {
				k := min(len(rest), rng.IntN(80)) // writes of 0 to 79 bytes
				if trial == 0 {
					k = len(rest) // one write
				}
				if n, err := s.Write(rest[:k]); n != k || err != nil {
					t.Fatalf("Write: %d, %v", n, err)
				}
				rest = rest[k:]
			}
			cut := max(size-sha256.Size, 0)
			want := sha256.Sum256(data[:cut])
			if !bytes.Equal(s.h.Sum(nil), want[:]) || !bytes.Equal(s.held(), data[cut:]) {
				t.Fatalf("size %d, trial %d: hashed or held the wrong bytes", size, trial)
			}
		}
	}
}
