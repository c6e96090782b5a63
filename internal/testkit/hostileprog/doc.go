// Package hostileprog holds Python programs that run their own code in
// the wasm adapter's host steps around a session snapshot: the driver's
// 'Z' request (kind 90: the host is about to save the session, before a
// snapshot or a hibernation) and its 'R' request (kind 82: the session
// was restored, by a restore or a wake), which a program finds in the
// driver's frame as handle(kind, payload). The adapter's tests and the
// soak (bench/cmd/soak) arm sessions with them, so that both attack the
// same way.
//
//	code := "x = 41\n" + hostileprog.SpinInTrace("", hostileprog.KindSnapshot)
package hostileprog
