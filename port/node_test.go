package port_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/codeport/codeport/conformance"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/port/porttest"
)

// TestNodeIDConformance runs the suite against a Port with a node id: the
// prefix must be invisible to everything a client does with the ids it was
// given.
func TestNodeIDConformance(t *testing.T) {
	d := porttest.NewDriver(porttest.WithMaxSessions(4))
	p := port.New(d, port.WithNodeID("node-a"))
	t.Cleanup(func() { _ = p.Close() })
	conformance.Run(t, func(*testing.T) conformance.Target {
		return conformance.Target{Port: p, Stall: func(id string) (<-chan struct{}, func()) {
			// The driver knows the session by its own id.
			return d.Stall(strings.TrimPrefix(id, "node-a."))
		}}
	})
}

func TestNodeIDs(t *testing.T) {
	ctx := context.Background()
	d := porttest.NewDriver()
	p := port.New(d, port.WithNodeID("codeport-1"))
	t.Cleanup(func() { _ = p.Close() })

	s, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if node, ok := port.NodeOf(s.ID); !ok || node != "codeport-1" {
		t.Fatalf("NodeOf(%q) = %q, %v", s.ID, node, ok)
	}
	inner := strings.TrimPrefix(s.ID, "codeport-1.")
	if got := d.Sessions(); !slices.Equal(got, []string{inner}) {
		t.Fatalf("the driver holds %q; want the id without the node, %q", got, inner)
	}
	if _, err := p.PutFile(ctx, s.ID, "a.txt", strings.NewReader("x")); err != nil {
		t.Fatalf("PutFile with the node's own id: %v", err)
	}

	// Every session call refuses an id naming another node, without
	// reaching the driver, even when the rest of the id is a live session.
	other := "codeport-2." + inner
	calls := map[string]func(id string) error{
		"Execute": func(id string) error {
			_, err := p.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &port.EditorInput{Command: "view", Path: "a.txt"}})
			return err
		},
		"DestroySession": func(id string) error { return p.DestroySession(ctx, id) },
		"ListFiles": func(id string) error {
			_, err := p.ListFiles(ctx, id, "")
			return err
		},
		"GetFile": func(id string) error {
			_, _, err := p.GetFile(ctx, id, "a.txt")
			return err
		},
		"GetOutputFile": func(id string) error {
			_, _, err := p.GetOutputFile(ctx, id, "f1")
			return err
		},
		"PutFile": func(id string) error {
			_, err := p.PutFile(ctx, id, "b.txt", strings.NewReader("y"))
			return err
		},
		"SnapshotSession": func(id string) error {
			return p.SnapshotSession(ctx, id, &bytes.Buffer{}, port.SnapshotOptions{})
		},
	}
	for name, call := range calls {
		err := call(other)
		var on *port.OtherNodeError
		if !errors.As(err, &on) || !errors.Is(err, port.ErrSessionNotFound) || on.Node != "codeport-2" || on.This != "codeport-1" {
			t.Errorf("%s(%q) = %v; want an OtherNodeError naming codeport-2 that is ErrSessionNotFound", name, other, err)
		}
		if port.ErrorCode(err) != "session_not_found" {
			t.Errorf("%s: code %q; want session_not_found", name, port.ErrorCode(err))
		}
		// The bare driver id is no id of this node's: a client cannot
		// reach the session by leaving the node out.
		for _, bad := range []string{inner, "." + inner, "Codeport-1." + inner, "codeport-1."} {
			err := call(bad)
			if name == "DestroySession" {
				if err != nil {
					t.Errorf("DestroySession(%q) = %v; an id naming no session is destroyed already", bad, err)
				}
				continue
			}
			if !errors.Is(err, port.ErrSessionNotFound) {
				t.Errorf("%s(%q) = %v; want ErrSessionNotFound", name, bad, err)
			}
		}
	}
	if got := d.Sessions(); !slices.Equal(got, []string{inner}) {
		t.Fatalf("after the refused calls the driver holds %q; want %q still", got, inner)
	}
	if err := p.DestroySession(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if got := d.Sessions(); len(got) != 0 {
		t.Fatalf("destroyed by its id, the session is still in the driver: %q", got)
	}
}

func TestCheckNodeID(t *testing.T) {
	for _, ok := range []string{"a", "codeport-0", "n1", strings.Repeat("a", 63), "0"} {
		if err := port.CheckNodeID(ok); err != nil {
			t.Errorf("CheckNodeID(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-a", "a-", "A", "a.b", "a_b", "a/b", strings.Repeat("a", 64), "é", "a b", "a\x00"} {
		if err := port.CheckNodeID(bad); !errors.Is(err, port.ErrInvalidRequest) {
			t.Errorf("CheckNodeID(%q) = %v; want ErrInvalidRequest", bad, err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("New accepted the node id \"a.b\"")
		}
	}()
	port.New(porttest.NewDriver(), port.WithNodeID("a.b"))
}

func TestCheckMovedID(t *testing.T) {
	const u = "0b7c3f1e-2a4d-4c6b-9e8f-112233445566"
	for _, ok := range []string{u, "a." + u, "codeport-12." + u} {
		if err := port.CheckMovedID(ok); err != nil {
			t.Errorf("CheckMovedID(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "0", strings.ToUpper(u), "a.b." + u, "../" + u, u + "/x", "A." + u, "-a." + u, "." + u, u + "\n"} {
		if err := port.CheckMovedID(bad); !errors.Is(err, port.ErrInvalidRequest) {
			t.Errorf("CheckMovedID(%q) = %v; want ErrInvalidRequest", bad, err)
		}
	}
	// A driver that cannot restore under an id says so before any byte
	// of the snapshot is read.
	p := port.New(porttest.NewDriver(), port.WithSnapshotKey(bytes.Repeat([]byte("k"), 32)))
	t.Cleanup(func() { _ = p.Close() })
	if _, err := p.RestoreSession(context.Background(), strings.NewReader("x"), port.SnapshotOptions{SessionID: u}); !errors.Is(err, port.ErrUnsupported) {
		t.Errorf("restore under an id on a driver without snapshots: %v", err)
	}
	if _, err := p.SessionIDs(context.Background()); !errors.Is(err, port.ErrUnsupported) {
		t.Errorf("SessionIDs on a driver that cannot list: %v", err)
	}
}

// An id has one spelling. A session moved to node b as "a.<uuid>" answers
// to that id only, not also to "b.a.<uuid>"; a restore keeps an id only in
// the spelling its node answers to (no "z.<uuid>" on a node without a
// node id), and only the id of the session its snapshot was taken of.
func TestMovedIDHasOneSpelling(t *testing.T) {
	ctx := context.Background()
	key := bytes.Repeat([]byte("k"), port.MinSnapshotKeyBytes)
	a := wasmtest.New(t, nil, port.WithNodeID("a"), port.WithSnapshotKey(key))
	b := wasmtest.New(t, nil, port.WithNodeID("b"), port.WithSnapshotKey(key))
	// The same driver as b, served without a node id.
	plain := port.New(b.Driver(), port.WithSnapshotKey(key))

	snapshotOf := func(p *port.Port, code string) (string, []byte) {
		t.Helper()
		s, err := p.CreateSession(ctx, port.CreateSessionRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code}); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := p.SnapshotSession(ctx, s.ID, &buf, port.SnapshotOptions{Release: true}); err != nil {
			t.Fatal(err)
		}
		return s.ID, buf.Bytes()
	}
	run := func(p *port.Port, id string) (string, error) {
		res, err := p.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(x)"})
		return res.Stdout, err
	}

	moved, snap := snapshotOf(a, "x = 1")
	if _, err := b.RestoreSession(ctx, bytes.NewReader(snap), port.SnapshotOptions{SessionID: moved}); err != nil {
		t.Fatal(err)
	}
	if out, err := run(b, moved); err != nil || out != "1\n" {
		t.Fatalf("the moved session by its id: %q %v", out, err)
	}
	alias := "b." + moved
	if out, err := run(b, alias); !errors.Is(err, port.ErrSessionNotFound) {
		t.Errorf("Execute(%q) = %q, %v; want ErrSessionNotFound: the session answers to %q only", alias, out, err, moved)
	}
	if _, err := b.ListFiles(ctx, alias, ""); !errors.Is(err, port.ErrSessionNotFound) {
		t.Errorf("ListFiles(%q) = %v; want ErrSessionNotFound", alias, err)
	}
	if err := b.SnapshotSession(ctx, alias, io.Discard, port.SnapshotOptions{}); !errors.Is(err, port.ErrSessionNotFound) {
		t.Errorf("SnapshotSession(%q) = %v; want ErrSessionNotFound", alias, err)
	}
	if err := b.DestroySession(ctx, alias); err != nil {
		t.Errorf("DestroySession(%q) = %v; an id naming no session is destroyed already", alias, err)
	}
	if out, err := run(b, moved); err != nil || out != "1\n" {
		t.Fatalf("after a destroy by the alias, the session: %q %v", out, err)
	}

	// Without a node id, an id naming a node is not kept: no call of
	// this node's clients would ever name it. Refused before reading.
	other, snap2 := snapshotOf(a, "x = 2")
	body := &source{prefix: snap2}
	if _, err := plain.RestoreSession(ctx, body, port.SnapshotOptions{SessionID: other}); !errors.Is(err, port.ErrInvalidRequest) || body.read.Load() != 0 {
		t.Errorf("a node without a node id keeping %q: %v after reading %d bytes; want ErrInvalidRequest before reading", other, err, body.read.Load())
	}
	// Nor the same uuid bare: the snapshot is of "a.<uuid>".
	bare := strings.TrimPrefix(other, "a.")
	if _, err := plain.RestoreSession(ctx, bytes.NewReader(snap2), port.SnapshotOptions{SessionID: bare}); !errors.Is(err, port.ErrInvalidSnapshot) {
		t.Errorf("keeping %q with a snapshot of %q: %v; want ErrInvalidSnapshot", bare, other, err)
	}
	// With a node id, a bare id is not kept either.
	if _, err := b.RestoreSession(ctx, bytes.NewReader(snap2), port.SnapshotOptions{SessionID: bare}); !errors.Is(err, port.ErrInvalidRequest) {
		t.Errorf("node b keeping the bare %q: %v; want ErrInvalidRequest", bare, err)
	}
}

// A restore keeps only the id of the session its snapshot is of: any
// other is ErrInvalidSnapshot, whether a session has that id or not, so a
// restore tells nothing of other sessions. A session restored twice under
// its id is told so.
func TestRestoreKeepsOnlyItsSessionsID(t *testing.T) {
	ctx := context.Background()
	key := bytes.Repeat([]byte("k"), port.MinSnapshotKeyBytes)
	a := wasmtest.New(t, nil, port.WithNodeID("a"), port.WithSnapshotKey(key))
	b := wasmtest.New(t, nil, port.WithNodeID("b"), port.WithSnapshotKey(key))

	mine, err := a.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var snap bytes.Buffer
	if err := a.SnapshotSession(ctx, mine.ID, &snap, port.SnapshotOptions{Tenant: "t"}); err != nil {
		t.Fatal(err)
	}
	// Another's session, live on b, and an id no session has.
	live, err := b.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	free := "b.0b7c3f1e-2a4d-4c6b-9e8f-112233445566"
	var answers []string
	for _, id := range []string{live.ID, free} {
		_, err := b.RestoreSession(ctx, bytes.NewReader(snap.Bytes()), port.SnapshotOptions{Tenant: "t", SessionID: id})
		if !errors.Is(err, port.ErrInvalidSnapshot) {
			t.Errorf("keeping %q with another session's snapshot: %v; want ErrInvalidSnapshot", id, err)
			continue
		}
		answers = append(answers, strings.ReplaceAll(err.Error(), id, "ID"))
	}
	if len(answers) == 2 && answers[0] != answers[1] {
		t.Errorf("a live id and a free one are told apart:\n%s\n%s", answers[0], answers[1])
	}
	// Its own id, where the session is still live: said clearly.
	if _, err := a.RestoreSession(ctx, bytes.NewReader(snap.Bytes()), port.SnapshotOptions{Tenant: "t", SessionID: mine.ID}); !errors.Is(err, port.ErrInvalidRequest) {
		t.Errorf("restoring a session under its id where it is live: %v; want ErrInvalidRequest", err)
	}
	// Moved: it keeps its id.
	r, err := b.RestoreSession(ctx, bytes.NewReader(snap.Bytes()), port.SnapshotOptions{Tenant: "t", SessionID: mine.ID})
	if err != nil || r.ID != mine.ID {
		t.Fatalf("moving %q to b: %+v %v", mine.ID, r, err)
	}
}
