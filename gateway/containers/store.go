package containers

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/codeport/codeport/port"
)

// Id prefixes, as OpenAI's.
const (
	IDPrefix     = "cntr_"
	FileIDPrefix = "cfile_"
)

// RoutePattern matches a container id and captures, as "node", the node
// id it carries (empty without WithNodeID): a proxy in front of several
// gateway processes sends a call naming a container to that node.
const RoutePattern = `^cntr_(?:(?P<node>` + port.NodeIDPattern + `)_)?[0-9a-f]{32}$`

var routeRE = regexp.MustCompile(RoutePattern)

// NodeOf returns the node id a container id carries, "" when it carries
// none, and false when id is not a container id.
func NodeOf(id string) (string, bool) {
	m := routeRE.FindStringSubmatch(id)
	if m == nil {
		return "", false
	}
	return m[routeRE.SubexpIndex("node")], true
}

// Errors. Every refusal of bad input wraps port.ErrInvalidRequest; the
// port's own errors (port.ErrFileTooLarge, port.ErrSessionBusy,
// port.ErrAtCapacity, ...) pass through wrapped.
var (
	// ErrContainerNotFound: no such container for this caller: never made,
	// deleted, expired, ended by the backend, or another tenant's.
	ErrContainerNotFound = errors.New("container not found")
	// ErrFileNotFound: the container lists no such file, or the file has
	// gone from its workspace.
	ErrFileNotFound = errors.New("container file not found")
	// ErrClosed: the store is closed.
	ErrClosed = errors.New("container store closed")
)

// LimitError is a refusal by one of the store's limits.
type LimitError struct {
	// What is "containers" (per tenant) or "files" (per container).
	What string
	// Max is the limit.
	Max int
}

func (e *LimitError) Error() string {
	if e.What == "files" {
		return fmt.Sprintf("a container lists at most %d files", e.Max)
	}
	return fmt.Sprintf("at most %d containers may be live at once", e.Max)
}

// Limits of the store's inputs.
const (
	// MaxNameBytes bounds a container's name, and a file id.
	MaxNameBytes     = 256
	maxFileNameBytes = 255
	// MaxFileIDs bounds the file ids a container is created with
	// (WithMaxFiles may bound them lower).
	MaxFileIDs = 100
)

// Container describes a container.
type Container struct {
	ID   string
	Name string
	// Tenant owns it ("" without tenants).
	Tenant       string
	CreatedAt    time.Time
	LastActiveAt time.Time
	// Expiry is the idle time after LastActiveAt at which the container
	// ends, as in force (the port may clamp what was asked).
	Expiry time.Duration
	// EndsAt is when the container ends whatever its activity, the
	// session's lifetime; zero when the port reports none.
	EndsAt time.Time
	// MemoryLimit is the memory a program may use in it, in bytes (the
	// port's limit; 0 when unknown).
	MemoryLimit int64
}

// ExpiresAt is when the container ends if it stays idle.
func (c Container) ExpiresAt() time.Time {
	t := c.LastActiveAt.Add(c.Expiry)
	if !c.EndsAt.IsZero() && c.EndsAt.Before(t) {
		return c.EndsAt
	}
	return t
}

// File describes a file a container lists.
type File struct {
	ID          string
	ContainerID string
	// Path is where the program sees it (the port's working directory
	// joined with Name).
	Path string
	// Name is its path relative to the workspace root.
	Name      string
	Bytes     int64
	CreatedAt time.Time
	// Source is "user" for a file put in by a client, "assistant" for
	// one a call produced.
	Source string
}

// CreateParams are what a container is made with.
type CreateParams struct {
	// Name names it; "" is refused by the Containers API (OpenAI requires
	// one) but allowed here, for containers a tool call makes itself.
	Name string
	// FileIDs are files of the WithFileSource store to copy in.
	FileIDs []string
	// Expiry is its idle expiry; 0 for the store's default.
	Expiry time.Duration
}

// ListParams page a list, as OpenAI's list endpoints do.
type ListParams struct {
	// After is the id of the last item of the previous page.
	After string
	// Limit is the page's size, 1 to 100; 0 means 20.
	Limit int
	// Ascending orders by creation time, oldest first; the default is
	// newest first.
	Ascending bool
	// Name keeps only containers of that name (containers only).
	Name string
}

// Page is one page of a list.
type Page[T any] struct {
	Data    []T
	HasMore bool
}

// Store holds the containers of one gateway process. Its methods are safe
// for concurrent use.
type Store struct {
	p   port.CodeExecutionPort
	cfg config
	// caps is the port's capability description, kept once it has
	// answered (capabilities).
	capsMu sync.Mutex
	caps   *port.Capabilities

	mu      sync.Mutex
	byID    map[string]*entry
	tenants map[string]int // live containers per tenant, reservations included
	closed  bool

	stop chan struct{}
	done chan struct{}
}

// entry is one container.
type entry struct {
	c          Container
	session    string
	background context.Context
	files      []*File // in creation order
	uploading  int     // places held by uploads of new names under way (put)
	// names is, per file name, the uploads (put) and the removal
	// (DeleteFile) of that name under way. A removal waits until no
	// upload of its name is under way, and an upload until no removal
	// is, so that a removal never takes the bytes of a file written
	// after the one it was asked to remove.
	names map[string]*nameOps
	// changed is closed, and replaced, whenever an upload or removal
	// ends: what waits for names waits for it.
	changed chan struct{}
	// calls counts the port calls running in the session (Execute,
	// put): a container running one is not idle, however long the call
	// takes, as the port does not reclaim a busy session.
	calls    int
	byName   map[string]*File
	byFileID map[string]*File
}

// nameOps is what is under way on one file name of a container.
type nameOps struct {
	uploads  int
	removing bool
}

// awaitLocked waits until ready holds, or ctx ends. s.mu is held when it
// is called and when it returns; it is released while waiting.
func (s *Store) awaitLocked(ctx context.Context, e *entry, ready func() bool) error {
	for !ready() {
		changed := e.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
		}
		s.mu.Lock()
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
	}
	return nil
}

// opEndedLocked records that an upload or removal of name has ended
// (its count already changed), and wakes what waits for names.
func (s *Store) opEndedLocked(e *entry, name string) {
	if ops := e.names[name]; ops != nil && ops.uploads == 0 && !ops.removing {
		delete(e.names, name)
	}
	close(e.changed)
	e.changed = make(chan struct{})
}

// opsOfLocked is name's operations under way, made when there are none.
func (e *entry) opsOfLocked(name string) *nameOps {
	ops := e.names[name]
	if ops == nil {
		ops = &nameOps{}
		e.names[name] = ops
	}
	return ops
}

// expired reports whether e has ended at now: past its lifetime, or idle
// past its expiry with no call running.
func (e *entry) expired(now time.Time) bool {
	if !e.c.EndsAt.IsZero() && !now.Before(e.c.EndsAt) {
		return true
	}
	return e.calls == 0 && !now.Before(e.c.ExpiresAt())
}

// New returns a store of containers over p. Close ends it and every
// container it holds; p stays open (its owner closes it).
func New(p port.CodeExecutionPort, opts ...Option) *Store {
	cfg := newConfig(opts)
	if cfg.nodeID != "" {
		if err := port.CheckNodeID(cfg.nodeID); err != nil {
			panic(fmt.Sprintf("containers.WithNodeID: %v", err))
		}
	}
	s := &Store{
		p:       p,
		cfg:     cfg,
		byID:    map[string]*entry{},
		tenants: map[string]int{},
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go s.sweeper()
	return s
}

// Close ends every container (their sessions destroyed) and stops the
// store's background work, and waits for both. Calls after Close fail
// with ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.done
		return nil
	}
	s.closed = true
	ents := make([]*entry, 0, len(s.byID))
	for id, e := range s.byID {
		ents = append(ents, e)
		delete(s.byID, id)
	}
	clear(s.tenants)
	s.mu.Unlock()
	close(s.stop)
	<-s.done
	var errs []error
	for _, e := range ents {
		errs = append(errs, s.destroy(e))
	}
	return errors.Join(errs...)
}

// destroyTimeout bounds the destruction of an ended container's session.
const destroyTimeout = 30 * time.Second

func (s *Store) destroy(e *entry) error {
	ctx, cancel := context.WithTimeout(e.background, destroyTimeout)
	defer cancel()
	if err := s.p.DestroySession(ctx, e.session); err != nil {
		s.cfg.logger.Warn("ending a container's session failed", "container", e.c.ID, "err", err)
		return fmt.Errorf("container %s: %w", e.c.ID, err)
	}
	return nil
}

// sweeper ends expired containers until Close.
func (s *Store) sweeper() {
	defer close(s.done)
	t := time.NewTicker(s.cfg.sweep)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.sweep()
		}
	}
}

// sweep ends every container whose time has come.
func (s *Store) sweep() {
	now := s.cfg.now()
	var ended []*entry
	s.mu.Lock()
	for _, e := range s.byID {
		if e.expired(now) {
			s.dropLocked(e)
			ended = append(ended, e)
		}
	}
	s.mu.Unlock()
	for _, e := range ended {
		s.cfg.logger.Info("container expired", "container", e.c.ID, "tenant", e.c.Tenant)
		_ = s.destroy(e)
	}
}

func (s *Store) dropLocked(e *entry) {
	if s.byID[e.c.ID] != e {
		return
	}
	delete(s.byID, e.c.ID)
	if s.tenants[e.c.Tenant]--; s.tenants[e.c.Tenant] <= 0 {
		delete(s.tenants, e.c.Tenant)
	}
}

// capabilities is the port's capability description, asked once it has
// answered (a failure is asked again next time): the working directory
// of file paths, the memory limit a container reports, the API's checks.
func (s *Store) capabilities(ctx context.Context) (port.Capabilities, error) {
	s.capsMu.Lock()
	defer s.capsMu.Unlock()
	if s.caps == nil {
		caps, err := s.p.Describe(ctx)
		if err != nil {
			return port.Capabilities{}, err
		}
		s.caps = &caps
	}
	return *s.caps, nil
}

func (s *Store) pathOf(ctx context.Context, name string) string {
	caps, _ := s.capabilities(ctx)
	if caps.WorkingDirectory == "" {
		return name
	}
	return path.Join(caps.WorkingDirectory, name)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

func (s *Store) newID() string {
	if s.cfg.nodeID != "" {
		return IDPrefix + s.cfg.nodeID + "_" + randomHex(16)
	}
	return IDPrefix + randomHex(16)
}

// checkName refuses a container name that is not printable UTF-8 of at
// most MaxNameBytes.
func checkName(name string) error {
	if len(name) > MaxNameBytes {
		return fmt.Errorf("%w: name is longer than %d bytes", port.ErrInvalidRequest, MaxNameBytes)
	}
	if !printable(name) {
		return fmt.Errorf("%w: name must be printable UTF-8 text", port.ErrInvalidRequest)
	}
	return nil
}

func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' {
			return false
		}
	}
	return true
}

// CheckFileName refuses a file name a client may not give a file put into
// a container: empty, ".", "..", with a slash or backslash, not printable
// UTF-8, or over 255 bytes. Files go to the workspace root under that
// name.
func CheckFileName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return fmt.Errorf("%w: file name %q is not a file name", port.ErrInvalidRequest, name)
	case len(name) > maxFileNameBytes:
		return fmt.Errorf("%w: file name is longer than %d bytes", port.ErrInvalidRequest, maxFileNameBytes)
	case strings.ContainsAny(name, `/\`):
		return fmt.Errorf("%w: file name %q may not contain a slash", port.ErrInvalidRequest, short(name))
	case !printable(name):
		return fmt.Errorf("%w: file name must be printable UTF-8 text", port.ErrInvalidRequest)
	}
	return nil
}

// CheckFileID refuses what cannot be a file id of the gateway's file
// store (CreateParams.FileIDs, AddFile): empty, longer than MaxNameBytes,
// or not printable UTF-8. The error wraps port.ErrInvalidRequest.
func CheckFileID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: the file id is empty", port.ErrInvalidRequest)
	case len(id) > MaxNameBytes:
		return fmt.Errorf("%w: the file id is longer than %d bytes", port.ErrInvalidRequest, MaxNameBytes)
	case !printable(id):
		return fmt.Errorf("%w: the file id must be printable text", port.ErrInvalidRequest)
	}
	return nil
}

func short(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return strings.ToValidUTF8(s, "?")
}

// Create makes a container for the caller's tenant: a session of the
// port, with the files of p.FileIDs copied in. Nothing is left behind
// when it fails.
func (s *Store) Create(ctx context.Context, p CreateParams) (Container, error) {
	if err := checkName(p.Name); err != nil {
		return Container{}, err
	}
	if p.Expiry < 0 {
		return Container{}, fmt.Errorf("%w: expiry must be positive", port.ErrInvalidRequest)
	}
	if len(p.FileIDs) > 0 && s.cfg.source == nil {
		return Container{}, fmt.Errorf("%w: file ids cannot be read: this gateway has no file store", port.ErrInvalidRequest)
	}
	if len(p.FileIDs) > min(MaxFileIDs, s.cfg.maxFiles) {
		return Container{}, fmt.Errorf("%w: at most %d file ids may be given", port.ErrInvalidRequest, min(MaxFileIDs, s.cfg.maxFiles))
	}
	for i, id := range p.FileIDs {
		if err := CheckFileID(id); err != nil {
			return Container{}, fmt.Errorf("file_ids[%d]: %w", i, err)
		}
		if slices.Contains(p.FileIDs[:i], id) {
			return Container{}, fmt.Errorf("%w: file_ids[%d] repeats %q", port.ErrInvalidRequest, i, short(id))
		}
	}
	tenant := s.cfg.tenantOf(ctx)
	// Reserve the tenant's slot before the session is made, so that
	// concurrent creations cannot pass the limit together.
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return Container{}, ErrClosed
	case s.tenants[tenant] >= s.cfg.maxContainers:
		s.mu.Unlock()
		return Container{}, &LimitError{What: "containers", Max: s.cfg.maxContainers}
	}
	s.tenants[tenant]++
	s.mu.Unlock()
	release := func() {
		s.mu.Lock()
		if s.tenants[tenant]--; s.tenants[tenant] <= 0 {
			delete(s.tenants, tenant)
		}
		s.mu.Unlock()
	}

	expiry := cmp.Or(p.Expiry, s.cfg.expiry)
	sess, err := s.p.CreateSession(ctx, port.CreateSessionRequest{IdleTimeout: expiry})
	if err != nil {
		release()
		return Container{}, err
	}
	now := s.cfg.now()
	e := &entry{
		c: Container{
			ID:           s.newID(),
			Name:         p.Name,
			Tenant:       tenant,
			CreatedAt:    now,
			LastActiveAt: now,
			Expiry:       expiry,
		},
		session:    sess.ID,
		background: s.cfg.background(ctx),
		byName:     map[string]*File{},
		byFileID:   map[string]*File{},
		names:      map[string]*nameOps{},
		changed:    make(chan struct{}),
	}
	if sess.IdleTimeout > 0 && sess.IdleTimeout < expiry {
		e.c.Expiry = sess.IdleTimeout
	}
	if sess.MaxLifetime > 0 {
		e.c.EndsAt = now.Add(sess.MaxLifetime)
	}
	if caps, err := s.capabilities(ctx); err == nil {
		e.c.MemoryLimit = caps.Limits.MemoryBytes
	}
	for _, id := range p.FileIDs {
		if _, err := s.copyIn(ctx, e, id); err != nil {
			_ = s.destroy(e)
			release()
			return Container{}, err
		}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = s.destroy(e)
		return Container{}, ErrClosed
	}
	s.byID[e.c.ID] = e
	c := e.c
	s.mu.Unlock()
	return c, nil
}

// lookup returns the caller's live container id, touching its activity
// when touch is set. An expired one is ended on the way.
func (s *Store) lookup(ctx context.Context, id string, touch bool) (*entry, error) {
	tenant := s.cfg.tenantOf(ctx)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	e := s.byID[id]
	if e == nil || e.c.Tenant != tenant {
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: %q", ErrContainerNotFound, short(id))
	}
	now := s.cfg.now()
	if e.expired(now) {
		s.dropLocked(e)
		s.mu.Unlock()
		_ = s.destroy(e)
		return nil, fmt.Errorf("%w: %q has expired", ErrContainerNotFound, short(id))
	}
	if touch {
		e.c.LastActiveAt = now
	}
	s.mu.Unlock()
	return e, nil
}

// begin counts a port call on e's session, which keeps e from expiring
// until endLocked; it fails as lookup does when e has ended since it was
// looked up.
func (s *Store) begin(e *entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID[e.c.ID] != e {
		return fmt.Errorf("%w: %q", ErrContainerNotFound, short(e.c.ID))
	}
	e.calls++
	return nil
}

// endLocked ends a call begin counted: the container's idle time starts
// now.
func (s *Store) endLocked(e *entry) {
	e.calls--
	e.c.LastActiveAt = s.cfg.now()
}

// gone handles an error of the port about e's session: a session the
// backend no longer has means the container has ended.
func (s *Store) gone(e *entry, err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.goneLocked(e, err)
}

func (s *Store) goneLocked(e *entry, err error) error {
	if !errors.Is(err, port.ErrSessionNotFound) {
		return err
	}
	s.dropLocked(e)
	return fmt.Errorf("%w: %q has ended: %v", ErrContainerNotFound, e.c.ID, err)
}

// Get describes the caller's container id.
func (s *Store) Get(ctx context.Context, id string) (Container, error) {
	e, err := s.lookup(ctx, id, false)
	if err != nil {
		return Container{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return e.c, nil
}

// List pages through the caller's containers by creation time.
func (s *Store) List(ctx context.Context, p ListParams) (Page[Container], error) {
	limit, err := pageLimit(p.Limit)
	if err != nil {
		return Page[Container]{}, err
	}
	tenant := s.cfg.tenantOf(ctx)
	now := s.cfg.now()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return Page[Container]{}, ErrClosed
	}
	var all []Container
	for _, e := range s.byID {
		if e.c.Tenant == tenant && !e.expired(now) && (p.Name == "" || e.c.Name == p.Name) {
			all = append(all, e.c)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(all, func(a, b Container) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	data, more, err := page(all, p, limit, func(c Container) string { return c.ID })
	return Page[Container]{Data: data, HasMore: more}, err
}

func pageLimit(n int) (int, error) {
	switch {
	case n == 0:
		return 20, nil
	case n < 1 || n > 100:
		return 0, fmt.Errorf("%w: limit must be from 1 to 100", port.ErrInvalidRequest)
	}
	return n, nil
}

// page cuts one page out of items sorted oldest first.
func page[T any](items []T, p ListParams, limit int, id func(T) string) ([]T, bool, error) {
	if !p.Ascending {
		slices.Reverse(items)
	}
	if p.After != "" {
		i := slices.IndexFunc(items, func(t T) bool { return id(t) == p.After })
		if i < 0 {
			return nil, false, fmt.Errorf("%w: after names no item of this list: %q", port.ErrInvalidRequest, short(p.After))
		}
		items = items[i+1:]
	}
	if len(items) > limit {
		return items[:limit], true, nil
	}
	return items, false, nil
}

// Delete ends the caller's container id: its session is destroyed, with
// its files.
func (s *Store) Delete(ctx context.Context, id string) error {
	e, err := s.lookup(ctx, id, false)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.byID[id] != e {
		s.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrContainerNotFound, short(id))
	}
	s.dropLocked(e)
	s.mu.Unlock()
	return s.destroy(e)
}

// Execute runs one tool call in the caller's container id and returns
// what the port returned, with the container's record of each file the
// call produced (in the order of res.Files; a produced file that the
// container could not list, past WithMaxFiles, is left out). The
// container's activity is touched as the call starts and as it ends.
func (s *Store) Execute(ctx context.Context, id string, req port.ExecuteRequest) (port.Result, []File, error) {
	e, err := s.lookup(ctx, id, true)
	if err != nil {
		return port.Result{}, nil, err
	}
	if err := s.begin(e); err != nil {
		return port.Result{}, nil, err
	}
	res, err := s.p.Execute(ctx, e.session, req)
	s.mu.Lock()
	s.endLocked(e)
	s.mu.Unlock()
	if err != nil {
		return res, nil, s.gone(e, err)
	}
	if res.Outcome == port.OutcomeSessionLost {
		// What hosted the session died with its files: the container has
		// ended, and says so to the next call that names it.
		s.mu.Lock()
		s.dropLocked(e)
		s.mu.Unlock()
		return res, nil, nil
	}
	now := s.cfg.now()
	workPath := make([]string, len(res.Files))
	for i, f := range res.Files {
		workPath[i] = s.pathOf(ctx, f.Filename)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var files []File
	for i, f := range res.Files {
		rec := e.byName[f.Filename]
		if rec == nil {
			// Uploads under way hold their places (put): a produced
			// file does not take one.
			if len(e.files)+e.uploading >= s.cfg.maxFiles {
				continue
			}
			rec = &File{ID: FileIDPrefix + randomHex(16), ContainerID: e.c.ID, Name: f.Filename, Path: workPath[i], Source: "assistant", CreatedAt: now}
			s.addLocked(e, rec)
		}
		rec.Bytes = f.Size
		if f.Data != nil {
			rec.Bytes = int64(len(f.Data))
		}
		files = append(files, *rec)
	}
	return res, files, nil
}

func (s *Store) addLocked(e *entry, f *File) {
	e.files = append(e.files, f)
	e.byName[f.Name] = f
	e.byFileID[f.ID] = f
}

func (s *Store) removeLocked(e *entry, f *File) {
	e.files = slices.DeleteFunc(e.files, func(g *File) bool { return g == f })
	delete(e.byName, f.Name)
	delete(e.byFileID, f.ID)
}

// Upload puts r into the caller's container id as the file name, at the
// workspace root (CheckFileName), replacing a file of that name (which
// gets a new id). The port's limits apply (port.ErrFileTooLarge, the
// workspace's quota).
func (s *Store) Upload(ctx context.Context, id, name string, r io.Reader) (File, error) {
	if err := CheckFileName(name); err != nil {
		return File{}, err
	}
	e, err := s.lookup(ctx, id, true)
	if err != nil {
		return File{}, err
	}
	return s.put(ctx, e, name, r)
}

// AddFile copies the gateway's file fileID (WithFileSource) into the
// caller's container id, under the name the file store gives it.
func (s *Store) AddFile(ctx context.Context, id, fileID string) (File, error) {
	if s.cfg.source == nil {
		return File{}, fmt.Errorf("%w: file ids cannot be read: this gateway has no file store", port.ErrInvalidRequest)
	}
	e, err := s.lookup(ctx, id, true)
	if err != nil {
		return File{}, err
	}
	return s.copyIn(ctx, e, fileID)
}

func (s *Store) copyIn(ctx context.Context, e *entry, fileID string) (File, error) {
	name, rc, err := s.cfg.source.OpenFile(ctx, e.c.Tenant, fileID)
	if err != nil {
		return File{}, fmt.Errorf("file %q: %w", short(fileID), err)
	}
	defer rc.Close()
	name = path.Base(strings.ReplaceAll(name, `\`, "/"))
	if err := CheckFileName(name); err != nil {
		return File{}, fmt.Errorf("file %q: %w", short(fileID), err)
	}
	return s.put(ctx, e, name, rc)
}

func (s *Store) put(ctx context.Context, e *entry, name string, r io.Reader) (File, error) {
	s.mu.Lock()
	// A removal of the name under way ends first: it would take these
	// bytes.
	if err := s.awaitLocked(ctx, e, func() bool { return e.names[name] == nil || !e.names[name].removing }); err != nil {
		s.mu.Unlock()
		return File{}, err
	}
	// A new name takes its place in the count before the bytes are
	// written, so that uploads at the same moment cannot pass the limit
	// together. A replacement keeps its file's place: the file is not
	// removed while the replacement is under way.
	isNew := e.byName[name] == nil
	if isNew {
		if len(e.files)+e.uploading >= s.cfg.maxFiles {
			s.mu.Unlock()
			return File{}, &LimitError{What: "files", Max: s.cfg.maxFiles}
		}
		e.uploading++
	}
	e.opsOfLocked(name).uploads++
	// Counted without begin's check: put also fills a container that
	// Create has not listed yet.
	e.calls++
	s.mu.Unlock()
	info, err := s.p.PutFile(ctx, e.session, name, r)
	where := s.pathOf(ctx, name)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endLocked(e)
	if isNew {
		e.uploading--
	}
	e.names[name].uploads--
	s.opEndedLocked(e, name)
	if err != nil {
		return File{}, s.goneLocked(e, err)
	}
	now := s.cfg.now()
	f := &File{ID: FileIDPrefix + randomHex(16), ContainerID: e.c.ID, Name: name, Path: where, Bytes: info.Size, CreatedAt: now, Source: "user"}
	if old := e.byName[name]; old != nil {
		s.removeLocked(e, old)
	}
	s.addLocked(e, f)
	return *f, nil
}

// Files pages through the files the caller's container id lists.
func (s *Store) Files(ctx context.Context, id string, p ListParams) (Page[File], error) {
	limit, err := pageLimit(p.Limit)
	if err != nil {
		return Page[File]{}, err
	}
	e, err := s.lookup(ctx, id, false)
	if err != nil {
		return Page[File]{}, err
	}
	s.mu.Lock()
	all := make([]File, len(e.files))
	for i, f := range e.files {
		all[i] = *f
	}
	s.mu.Unlock()
	data, more, err := page(all, p, limit, func(f File) string { return f.ID })
	return Page[File]{Data: data, HasMore: more}, err
}

// File describes the file fileID of the caller's container id.
func (s *Store) File(ctx context.Context, id, fileID string) (File, error) {
	_, f, err := s.fileOf(ctx, id, fileID, false)
	return f, err
}

// fileOf is the caller's container id and its file fileID, found in one
// look, the container's activity touched when touch is set.
func (s *Store) fileOf(ctx context.Context, id, fileID string, touch bool) (*entry, File, error) {
	e, err := s.lookup(ctx, id, touch)
	if err != nil {
		return nil, File{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f := e.byFileID[fileID]
	if f == nil {
		return nil, File{}, fmt.Errorf("%w: %q", ErrFileNotFound, short(fileID))
	}
	return e, *f, nil
}

// Content opens the file fileID of the caller's container id, as it is in
// the workspace now. The caller closes the reader.
func (s *Store) Content(ctx context.Context, id, fileID string) (io.ReadCloser, File, error) {
	e, f, err := s.fileOf(ctx, id, fileID, true)
	if err != nil {
		return nil, File{}, err
	}
	rc, info, err := s.p.GetFile(ctx, e.session, f.Name)
	if err != nil {
		if errors.Is(err, port.ErrFileNotFound) || errors.Is(err, port.ErrIsDirectory) {
			return nil, File{}, fmt.Errorf("%w: %q is no longer in the container: %v", ErrFileNotFound, short(fileID), err)
		}
		return nil, File{}, s.gone(e, err)
	}
	f.Bytes = info.Size
	return rc, f, nil
}

// DeleteFile removes the file fileID from the caller's container id: from
// its list and from its workspace. The removal runs as a code_execution
// call (the port has no other way to remove a file), which displays
// nothing and leaves no name behind; it names the file by its absolute
// path, byte for byte, so that neither a directory the program changed to
// nor a name that is not UTF-8 can make it remove another file. It waits
// for uploads of the file's name under way (and they for it): a
// replacement that succeeds has replaced the file, which is then not
// found (ErrFileNotFound), and an upload's bytes are never removed.
func (s *Store) DeleteFile(ctx context.Context, id, fileID string) error {
	e, _, err := s.fileOf(ctx, id, fileID, true)
	if err != nil {
		return err
	}
	s.mu.Lock()
	// Uploads of the file's name under way end first: the removal would
	// take their bytes. One that succeeded has replaced the file, which
	// is then no longer there to remove.
	var f *File
	err = s.awaitLocked(ctx, e, func() bool {
		f = e.byFileID[fileID]
		return f == nil || e.names[f.Name] == nil
	})
	if err == nil && f == nil {
		err = fmt.Errorf("%w: %q", ErrFileNotFound, short(fileID))
	}
	if err == nil && s.byID[e.c.ID] != e {
		err = fmt.Errorf("%w: %q", ErrContainerNotFound, short(e.c.ID))
	}
	if err != nil {
		s.mu.Unlock()
		return err
	}
	name, where := f.Name, f.Path
	e.opsOfLocked(name).removing = true
	e.calls++
	s.mu.Unlock()
	off := false
	res, err := s.p.Execute(ctx, e.session, port.ExecuteRequest{
		Tool:          port.ToolCodeExecution,
		Code:          fmt.Sprintf("__import__('os').remove(bytes.fromhex('%x'))", where),
		DisplayValues: &off,
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endLocked(e)
	e.names[name].removing = false
	s.opEndedLocked(e, name)
	if err != nil {
		return s.goneLocked(e, err)
	}
	if res.Outcome != port.OutcomeCompleted && !strings.Contains(res.Stderr, "FileNotFoundError") {
		return fmt.Errorf("%w: removing %q from the container failed (%s)", port.ErrRuntimeFailure, short(fileID), res.Outcome)
	}
	// Nothing of the name was uploaded meanwhile, and a call's produced
	// file of the name keeps its record: it is still this file's.
	s.removeLocked(e, e.byFileID[fileID])
	return nil
}

// hasSource reports whether file ids can be read (WithFileSource).
func (s *Store) hasSource() bool { return s.cfg.source != nil }
