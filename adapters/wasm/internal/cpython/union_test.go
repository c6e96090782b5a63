package cpython

import (
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"
)

func TestUnion(t *testing.T) {
	a := fstest.MapFS{"x.zip": {Data: []byte("a")}, "d/one": {Data: []byte("1")}}
	b := fstest.MapFS{"x.zip": {Data: []byte("b")}, "y.zip": {Data: []byte("y")}, "d/two": {Data: []byte("2")}}
	u := Union(a, b)
	if err := fstest.TestFS(u, "x.zip", "y.zip", "d/one", "d/two"); err != nil {
		t.Fatal(err)
	}
	if got, _ := fs.ReadFile(u, "x.zip"); string(got) != "a" {
		t.Errorf("x.zip reads %q: the first layer must win", got)
	}
	if _, err := u.Open("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if _, err := u.Open("../x.zip"); err == nil {
		t.Error("an invalid path opened")
	}
}
