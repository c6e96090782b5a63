//go:build !linux

package wasm

// adviseHugePages does nothing: huge pages are advised on Linux only.
func adviseHugePages([]byte) {}
