package pyvenv

import "testing"

func TestDirName(t *testing.T) {
	// sdkcheck's environments, built before this package, keep their names.
	got, err := dirName("sdkcheck", []string{"openai==3.57.0", "anthropic==2.14.0"})
	if want := "sdkcheck-venv-py%s-openai3.57.0-anthropic2.14.0"; err != nil || got != want {
		t.Errorf("dirName = %q, %v; want %q", got, err, want)
	}
	got, err = dirName("x", []string{"requests[socks,security]==2.32.3"})
	if want := "x-venv-py%s-requests_socks_security2.32.3"; err != nil || got != want {
		t.Errorf("dirName = %q, %v; want %q", got, err, want)
	}
	for _, bad := range []struct {
		name     string
		packages []string
	}{
		{"", []string{"a==1"}},
		{"a/b", []string{"a==1"}},
		{"a%b", []string{"a==1"}},
		{"x", nil},
		{"x", []string{"schemathesis"}},
		{"x", []string{"schemathesis>=4"}},
		{"x", []string{"a==1; rm -rf /"}},
		{"x", []string{"--index-url=x==1"}},
	} {
		if got, err := dirName(bad.name, bad.packages); err == nil {
			t.Errorf("dirName(%q, %q) = %q, want an error", bad.name, bad.packages, got)
		}
	}
}

// Without python3 the environment cannot be built, and outside CI that is
// a skip, not a failure.
func TestPythonWithoutPython3Skips(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("CI", "")
	var ran bool
	t.Run("build", func(t *testing.T) {
		Python(t, "pyvenv-test", "schemathesis==4.32.5")
		ran = true
	})
	if ran {
		t.Fatal("Python returned without python3 on PATH")
	}
}
