package port

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// referenceSeal computes format 2's seal of data from its definition in
// one pass over whole segments: what segmentSeal must give however the
// stream is cut into writes.
func referenceSeal(t *testing.T, key, salt, data []byte) []byte {
	t.Helper()
	kdf := hmac.New(sha256.New, key)
	kdf.Write([]byte("codeport snapshot seal v2: segment key\x00"))
	kdf.Write(salt)
	block, err := aes.NewCipher(kdf.Sum(nil))
	if err != nil {
		t.Fatal(err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	outer := hmac.New(sha256.New, key)
	outer.Write([]byte("codeport snapshot seal v2: tags\x00"))
	outer.Write(salt)
	for i := 0; ; i++ {
		seg := data[min(len(data), i*sealSegmentBytes):min(len(data), (i+1)*sealSegmentBytes)]
		var nonce [12]byte
		binary.BigEndian.PutUint64(nonce[4:], uint64(i))
		outer.Write(gcm.Seal(nil, nonce[:], nil, seg))
		if len(seg) < sealSegmentBytes {
			break
		}
	}
	outer.Write(binary.BigEndian.AppendUint64(nil, uint64(len(data))))
	return outer.Sum(nil)
}

func sealOf(t *testing.T, key, salt, data []byte, cut func(rest int) int) []byte {
	t.Helper()
	s, err := newSegmentSeal(key, salt)
	if err != nil {
		t.Fatal(err)
	}
	for rest := data; len(rest) > 0; {
		k := min(len(rest), cut(len(rest)))
		if n, err := s.Write(rest[:k]); n != k || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
		rest = rest[k:]
	}
	return s.Sum(nil)
}

// However a stream is cut into writes (a byte at a time near segment
// boundaries, whole segments and more at once), the seal is the one its
// definition gives, at lengths around the segments' edges.
func TestSegmentSealIsItsDefinitionHoweverCut(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	key, salt, data := sealFixture(rng, 3*sealSegmentBytes+5)
	cuts := map[string]func(int) int{
		"one write":     func(rest int) int { return rest },
		"small writes":  func(int) int { return rng.IntN(80) },
		"large writes":  func(int) int { return rng.IntN(3 * sealSegmentBytes / 2) },
		"segment-sized": func(int) int { return sealSegmentBytes },
		"off by one":    func(int) int { return sealSegmentBytes - 1 },
	}
	for _, size := range []int{0, 1, sealSegmentBytes - 1, sealSegmentBytes, sealSegmentBytes + 1, 2 * sealSegmentBytes, len(data)} {
		want := referenceSeal(t, key, salt, data[:size])
		for name, cut := range cuts {
			if got := sealOf(t, key, salt, data[:size], cut); !bytes.Equal(got, want) {
				t.Errorf("size %d, %s: the seal differs from its definition", size, name)
			}
		}
	}
}

// The seal changes with every byte, with where the stream ends, with the
// salt and with the key; segments exchanged change it too.
func TestSegmentSealBindsEverything(t *testing.T) {
	key, salt, data := sealFixture(rand.New(rand.NewPCG(5, 6)), 2*sealSegmentBytes+100)
	one := func(int) int { return 1 << 20 }
	base := sealOf(t, key, salt, data, one)
	swapped := append(append(bytes.Clone(data[sealSegmentBytes:2*sealSegmentBytes]), data[:sealSegmentBytes]...), data[2*sealSegmentBytes:]...)
	otherSalt := bytes.Clone(salt)
	otherSalt[0] ^= 1
	otherKey := bytes.Clone(key)
	otherKey[31] ^= 1
	variants := map[string][]byte{
		"a byte flipped in the last segment": sealOf(t, key, salt, flipped(data, len(data)-1), one),
		"a byte flipped in the first":        sealOf(t, key, salt, flipped(data, 0), one),
		"a byte more":                        sealOf(t, key, salt, append(bytes.Clone(data), 0), one),
		"a byte less":                        sealOf(t, key, salt, data[:len(data)-1], one),
		"segments exchanged":                 sealOf(t, key, salt, swapped, one),
		"another salt":                       sealOf(t, key, otherSalt, data, one),
		"another key":                        sealOf(t, otherKey, salt, data, one),
	}
	for name, got := range variants {
		if bytes.Equal(got, base) {
			t.Errorf("%s: the seal did not change", name)
		}
	}
	if _, err := newSegmentSeal(key, salt[:sealSaltBytes-1]); err == nil {
		t.Error("a short salt was accepted")
	}
}

// sealFixture is a key, a salt and n bytes of rng's to seal.
func sealFixture(rng *rand.Rand, n int) (key, salt, data []byte) {
	data = make([]byte, n)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	return bytes.Repeat([]byte{9}, 32), bytes.Repeat([]byte{5}, sealSaltBytes), data
}

func flipped(b []byte, at int) []byte {
	c := bytes.Clone(b)
	c[at] ^= 0x80
	return c
}

// BenchmarkSeal: the bytes a seal checks per second, format 2's against
// format 1's, in the 256 KiB reads a restore hands it.
func BenchmarkSeal(b *testing.B) {
	buf := make([]byte, sealSegmentBytes+sealTrailer)
	key := bytes.Repeat([]byte{9}, 32)
	for _, magic := range []string{snapshotMagicV1, snapshotMagic} {
		b.Run(magic[len(magic)-3:len(magic)-1], func(b *testing.B) {
			s, err := newSealer(key, magic, make([]byte, sealSaltBytes))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				s.Write(buf)
			}
		})
	}
}
