// Package guestroot is the root directory ("/") a WebAssembly guest sees
// around its mounts: the mount points and their parents as directories,
// /dev/null as a working null device, and nothing else.
//
// Without a root, a WASI guest's libc finds no preopened directory for a
// path outside the mounts and fails with ENOTCAPABLE, which CPython raises
// as PermissionError("Capabilities insufficient"): Path("/nonexistent").exists()
// raised instead of answering False, os.path.exists("/") was False,
// os.makedirs("/workspace", exist_ok=True) failed, and os.devnull could
// not be opened. With this root those behave as on a Linux machine where
// the program's user owns only its home and /tmp: a missing name is
// ENOENT, a change to the root is EACCES.
//
// It holds no host file and reaches none: it is the same tree in memory
// for every instance.
//
//	root := guestroot.New("/workspace", "/tmp", "/usr/local/lib")
//	fsCfg := wazero.NewFSConfig().(sysfs.FSConfig).
//		WithSysFSMount(work, "/workspace").(sysfs.FSConfig).
//		WithSysFSMount(tmp, "/tmp").(sysfs.FSConfig).
//		WithSysFSMount(root, "/")
package guestroot
