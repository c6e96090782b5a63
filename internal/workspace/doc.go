// Package workspace confines a session's files to host directories and
// charges their bytes and entries to one quota per session.
//
// A session owns a workspace directory (mounted in the guest at GuestRoot,
// "/workspace", the interpreter's working directory) and a tmp directory
// (mounted at "/tmp"). Both count against one Quota. The host side reaches
// the files through a Workspace, which resolves every path inside its root,
// follows no symbolic link, and writes files atomically under the quota. The
// guest reaches them through the file systems NewSysFS returns, which charge
// the quota while the guest writes. With an entry limit (WithEntryLimit)
// the quota also counts every file and directory, and charges each
// directory DirBytes, so that neither inodes nor directory blocks escape it.
//
// ClaimDir gives a process its own directory under a sessions directory
// shared with other processes, and removes those of processes that died
// without cleaning up.
//
// Usage:
//
//	q := workspace.NewQuota(64 << 20).WithEntryLimit(10_000) // for the whole session
//	ws, err := workspace.New(filepath.Join(base, id, "workspace"), q)
//	if err != nil {
//		return err
//	}
//	tmp, err := workspace.New(filepath.Join(base, id, "tmp"), q)
//	if err != nil {
//		return err
//	}
//	defer ws.RemoveAll()
//	defer tmp.RemoveAll()
//
//	fsConfig := wazero.NewFSConfig().(sysfs.FSConfig).
//		WithSysFSMount(workspace.NewSysFS(ws.Root(), q), workspace.GuestRoot).(sysfs.FSConfig).
//		WithSysFSMount(workspace.NewSysFS(tmp.Root(), q), "/tmp")
//
//	// Host-side file access, e.g. for PutFile:
//	info, err := ws.Write("data/input.csv", body, maxFileBytes)
//	if errors.Is(err, port.ErrFileTooLarge) {
//		// over maxFileBytes, or over the session's quota
//	}
//
// Errors wrap the sentinels of package port (ErrPathEscapesWorkspace,
// ErrFileNotFound, ErrIsDirectory, ErrFileTooLarge, ErrInvalidRequest) and
// name workspace-relative paths, never host paths or file contents. The
// refusals port.ErrInvalidRequest covers also wrap this package's reason
// (ErrNotRegular, ErrNotDirectory, ErrNotUTF8, *PathTooLongError,
// *NameTooLongError), and a quota refusal is a *QuotaError (or an
// *EntryLimitError), so that no caller reads a message to learn what
// happened.
package workspace
