// Package compat runs CPython's own test suite inside sessions of any
// port, one test module a session, and sets what did not pass against an
// expectations file: the differences known to remain, each with why (as
// the shell's known.txt does for GNU's tools). A difference the file does
// not list is a regression, or a fix to record; an entry that no longer
// differs is a fix to take out of the file.
//
// The suite is Lib/test of the runtime's own pinned source (make compat
// fetches it with the runtime's build script, by package name, checked by
// sha256); a session gets the top of Lib/test (test.support and the
// shared helpers and data) and the module's own package, under
// /workspace/test, and runs the module with unittest as regrtest does
// without -u: tests that need a resource such as the network skip.
//
//	suite, err := compat.Open(cpythonSource + "/Lib/test")
//	if err != nil { ... }
//	r, err := suite.RunModule(ctx, p, "test_os", 10*time.Minute)
//	unexpected, fixed := compat.Compare([]compat.Result{r}, expectations)
//
// Slices of numpy's and pandas' own suites run the same way in sessions of
// the scientific profile, a test file a session, with pytest: the test
// files come from numpy's and pandas' wheels of the versions the runtime
// is built from, and pytest and what the tests import (hypothesis) from
// wheels uploaded to the session, all pinned by sha256 in
// compat/wheels.sh. A pytest node id
// (numpy/lib/tests/test_format.py::test_version_2_0) is a difference's id.
//
//	wheels, err := compat.OpenWheels(dir) // the directory wheels.sh prints
//	if err != nil { ... }
//	defer wheels.Close()
//	r, err := wheels.RunFile(ctx, scientificPort, "numpy/lib/tests/test_format.py", 10*time.Minute)
//
// make compat runs the modules of Modules against the in-process runtime,
// and the files of Slices against its scientific profile
// (compat/cmd/compat); make test runs a quick slice of each.
package compat
