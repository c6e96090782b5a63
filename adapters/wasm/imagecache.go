package wasm

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/codeport/codeport/adapters/wasm/internal/cpython"
)

// The interpreter image is kept beside the compiled code, in the
// compilation cache directory: a process that finds the image of its
// runtime, driver and warm modules there maps it instead of booting
// CPython (a tenth of a second for the default runtime without warm
// modules, seconds for the scientific profile's). Processes that share a
// cache directory then share their image, its str hash secret included,
// as every session of one process always has; the directory is trusted
// as the compiled code in it is (which runs natively). An operator who
// wants a secret drawn per process turns image-cache off. `codeport
// compile` does not make the image: a container image built with it
// would publish the secret.
//
// The file: imageMagic, the key, the memory's size, its globals, the map
// of its non-zero chunks, their bytes, and the SHA-256 of all that. A
// file that does not read whole and true is not used (and is replaced).

// imageMagic begins an image file and names its format.
const imageMagic = "codeport interpreter image 1\n"

// imageKey is what an image depends on: the runtime's build, the driver,
// the mounts (whose descriptors libc keeps in memory), the warm modules
// and the format. "" when the build has no ID: then nothing is cached.
func imageKey(py cpython.Runtime, warm []string) string {
	if py.ID == "" {
		return ""
	}
	h := sha256.New()
	list, _ := json.Marshal(warm)
	fmt.Fprintf(h, "%s%s\n%d\n%s\n%q\n%s\n%d\n", imageMagic, py.Profile, len(py.ID), py.ID, guestMounts(), list, len(driverSource))
	h.Write([]byte(driverSource))
	return hex.EncodeToString(h.Sum(nil))
}

// imagePath is where the image with key is kept under the compilation
// cache dir.
func imagePath(cacheDir, key string) string {
	return filepath.Join(cacheDir, imageDirName, key+".img")
}

// imageDirName is the directory of the compilation cache the images are
// kept in.
const imageDirName = "codeport-images"

// maxImageBytes bounds the memory an image file may describe: the
// largest a WebAssembly memory is.
const maxImageBytes = 4 << 30

// imageKeepUnused is how long an image that no process has started from
// is kept, and a compiled module no process has loaded (pruneCompiled).
// An image belongs to one runtime build, profile and warm list, so every
// upgrade leaves the last build's behind (7 to 80 MB each), in a
// directory nothing else cleans; a build still in use touches its image
// at every start (touchImage).
const imageKeepUnused = 30 * 24 * time.Hour

// imageKeepTemp is how long a temporary file of a save (or of a compile)
// is kept: one older is a save that died with its process.
const imageKeepTemp = 24 * time.Hour

// touchImage records that a process started from the image with key, for
// pruneImages.
func touchImage(cacheDir, key string) error {
	now := time.Now()
	return os.Chtimes(imagePath(cacheDir, key), now, now)
}

// pruneImages removes from under cacheDir the images not started from (or
// saved) for imageKeepUnused before now, and the temporary files of saves
// older than imageKeepTemp, but never the image with key keep. It returns
// how many files it removed; a file it cannot remove is left for the next
// start, as is one another process touches meanwhile.
func pruneImages(cacheDir, keep string, now time.Time) (int, error) {
	dir := filepath.Join(cacheDir, imageDirName)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, e := range entries {
		name := e.Name()
		var keepFor time.Duration
		switch {
		case !e.Type().IsRegular() || name == keep+".img":
			continue
		case strings.HasSuffix(name, ".img"):
			keepFor = imageKeepUnused
		case strings.HasPrefix(name, "tmp-"):
			keepFor = imageKeepTemp
		default:
			continue // not ours
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) <= keepFor {
			continue
		}
		if os.Remove(filepath.Join(dir, name)) == nil {
			removed++
		}
	}
	return removed, nil
}

// saveImage writes img, whose key is key, under cacheDir: to a temporary
// file renamed into place, so that a reader sees a whole file or none.
func saveImage(cacheDir, key string, img *image) error {
	path := imagePath(cacheDir, key)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after a rename, nothing to remove
	h := sha256.New()
	w := bufio.NewWriterSize(io.MultiWriter(f, h), 1<<20)
	var hdr bytes.Buffer
	hdr.WriteString(imageMagic)
	hdr.WriteString(key)
	binary.Write(&hdr, binary.LittleEndian, uint64(img.size))
	binary.Write(&hdr, binary.LittleEndian, uint32(len(img.globals)))
	for _, g := range img.globals {
		binary.Write(&hdr, binary.LittleEndian, uint16(len(g.name)))
		hdr.WriteString(g.name)
		binary.Write(&hdr, binary.LittleEndian, g.value)
	}
	binary.Write(&hdr, binary.LittleEndian, uint32(len(img.chunks)))
	bitmap := make([]byte, (len(img.chunks)+7)/8)
	for i, nz := range img.chunks {
		if nz {
			bitmap[i/8] |= 1 << (i % 8)
		}
	}
	hdr.Write(bitmap)
	if _, err := w.Write(hdr.Bytes()); err != nil {
		f.Close()
		return err
	}
	buf := make([]byte, imageChunk)
	for i, nz := range img.chunks {
		if !nz {
			continue
		}
		b, err := img.chunk(i, buf)
		if err == nil {
			_, err = w.Write(b)
		}
		if err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(h.Sum(nil)); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// loadImage reads the image with key from under cacheDir into a
// sharedImage. A missing file is fs.ErrNotExist; any other error means
// the file is not to be trusted.
func loadImage(cacheDir, key string) (*image, error) {
	f, err := os.Open(imagePath(cacheDir, key))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	br := bufio.NewReaderSize(f, 1<<20)
	r := io.TeeReader(br, h) // what is read is hashed; the trailer is read from br
	head := make([]byte, len(imageMagic)+len(key))
	if _, err := io.ReadFull(r, head); err != nil {
		return nil, fmt.Errorf("image header: %w", err)
	}
	if string(head) != imageMagic+key {
		return nil, errors.New("not this build's image")
	}
	var size uint64
	var nGlobals uint32
	if err := binary.Read(r, binary.LittleEndian, &size); err != nil {
		return nil, err
	}
	if size == 0 || size > maxImageBytes || size%wasmPage != 0 {
		return nil, fmt.Errorf("an image of %d bytes", size)
	}
	if err := binary.Read(r, binary.LittleEndian, &nGlobals); err != nil {
		return nil, err
	}
	if nGlobals > 1<<16 {
		return nil, fmt.Errorf("%d globals", nGlobals)
	}
	img := &image{size: int(size), globals: make([]globalValue, nGlobals)}
	for i := range img.globals {
		var n uint16
		if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
			return nil, err
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(r, name); err != nil {
			return nil, err
		}
		img.globals[i].name = string(name)
		if err := binary.Read(r, binary.LittleEndian, &img.globals[i].value); err != nil {
			return nil, err
		}
	}
	var nChunks uint32
	if err := binary.Read(r, binary.LittleEndian, &nChunks); err != nil {
		return nil, err
	}
	if uint64(nChunks) != (size+imageChunk-1)/imageChunk {
		return nil, fmt.Errorf("%d chunks for %d bytes", nChunks, size)
	}
	bitmap := make([]byte, (nChunks+7)/8)
	if _, err := io.ReadFull(r, bitmap); err != nil {
		return nil, err
	}
	img.chunks = make([]bool, nChunks)
	for i := range img.chunks {
		img.chunks[i] = bitmap[i/8]&(1<<(i%8)) != 0
	}
	shared, err := buildSharedImage(interpreterImageName, img.size, img.chunks, func(_ int, run []byte) error {
		_, err := io.ReadFull(r, run)
		return err
	})
	if err != nil {
		return nil, err
	}
	sum := h.Sum(nil)
	trailer := make([]byte, len(sum))
	_, err = io.ReadFull(br, trailer)
	switch {
	case err != nil:
		err = fmt.Errorf("image trailer: %w", err)
	case !bytes.Equal(trailer, sum):
		err = errors.New("the image's checksum does not match")
	default:
		if _, end := br.ReadByte(); end != io.EOF {
			err = errors.New("bytes after the image")
		}
	}
	if err != nil {
		shared.close()
		return nil, err
	}
	img.shared = shared
	return img, nil
}
