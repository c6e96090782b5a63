package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/adapters/subprocess"
	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/binding"
	"github.com/codeport/codeport/gateway/containers"
	"github.com/codeport/codeport/port"
	httpserver "github.com/codeport/codeport/server"
)

const manifestDir = "kubernetes"

// What we measured (docs/runtime.md, docs/scientific.md; statefulset.yaml
// shows the arithmetic): the serve process with the compiled default
// runtime, its interpreter image and a warm pool of two is 276 MiB
// resident; an idle session adds 4-6 MiB with the default profile and
// 9.2 MiB with the scientific one. The bounds below round both up.
const (
	processBytes     = 320 << 20
	idleSessionBytes = 12 << 20
	// A workspace entry takes a file-system block beyond what
	// workspace-limit counts of it.
	entryBlockBytes = 4 << 10
	// codeport's upload cap is the file limit plus this much framing
	// (cmd/codeport: server.WithMaxUploadBytes(fb+64<<10)).
	uploadFramingBytes = 64 << 10
	// The longest cold start we accept before liveness may kill a pod:
	// the scientific profile compiles in 19 s on two idle cores.
	minStartupBudget = 120 * time.Second
)

// manifests is every object of kubernetes/, by kind and name.
type manifests struct {
	files        []string
	namespaces   map[string]*corev1.Namespace
	configMaps   map[string]*corev1.ConfigMap
	services     map[string]*corev1.Service
	statefulSets map[string]*appsv1.StatefulSet
	deployments  map[string]*appsv1.Deployment
	pdbs         map[string]*policyv1.PodDisruptionBudget
}

// decoder decodes as the API server does, strictly: a field the type does
// not have, a field given twice, or a field in the wrong case is an error.
func decoder() runtime.Decoder {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, policyv1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
}

// decodeAll decodes every document of a multi-document YAML stream. A
// document of comments alone is skipped; any other must be an object of a
// registered kind.
func decodeAll(dec runtime.Decoder, r io.Reader) ([]runtime.Object, error) {
	yr := k8syaml.NewYAMLReader(bufio.NewReader(r))
	var out []runtime.Object
	for i := 0; ; i++ {
		doc, err := yr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		j, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if string(bytes.TrimSpace(j)) == "null" {
			continue
		}
		obj, _, err := dec.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		out = append(out, obj)
	}
}

func load(t *testing.T) *manifests {
	t.Helper()
	m := &manifests{
		namespaces: map[string]*corev1.Namespace{}, configMaps: map[string]*corev1.ConfigMap{},
		services: map[string]*corev1.Service{}, statefulSets: map[string]*appsv1.StatefulSet{},
		deployments: map[string]*appsv1.Deployment{}, pdbs: map[string]*policyv1.PodDisruptionBudget{},
	}
	paths, err := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := decoder()
	for _, p := range paths {
		name := filepath.Base(p)
		if name == "kustomization.yaml" {
			continue // not an API object: TestKustomizationListsEveryManifest
		}
		m.files = append(m.files, name)
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := decodeAll(dec, f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, o := range objs {
			meta, err := metaOf(o)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			switch o := o.(type) {
			case *corev1.Namespace:
				addOnce(t, name, m.namespaces, meta.GetName(), o)
			case *corev1.ConfigMap:
				addOnce(t, name, m.configMaps, meta.GetName(), o)
			case *corev1.Service:
				addOnce(t, name, m.services, meta.GetName(), o)
			case *appsv1.StatefulSet:
				addOnce(t, name, m.statefulSets, meta.GetName(), o)
			case *appsv1.Deployment:
				addOnce(t, name, m.deployments, meta.GetName(), o)
			case *policyv1.PodDisruptionBudget:
				addOnce(t, name, m.pdbs, meta.GetName(), o)
			default:
				t.Fatalf("%s: unexpected kind %T", name, o)
			}
		}
	}
	return m
}

func metaOf(o runtime.Object) (metav1.Object, error) {
	mo, ok := o.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", o)
	}
	return mo, nil
}

// The names that wire the manifests together.
const (
	namespace       = "codeport"
	nodeService     = "codeport"
	nodeSet         = "codeport"
	nodeConfig      = "codeport-config"
	nodeConfigKey   = "codeport.yaml"
	nodeContainer   = "codeport"
	routerName      = "codeport-router"
	routerConfigKey = "nginx.conf"
	routerContainer = "nginx"
	portName        = "http"
	clusterDomain   = "svc.cluster.local"
)

// one returns the object named name or fails.
func one[T any](t *testing.T, objs map[string]T, kind, name string) T {
	t.Helper()
	o, ok := objs[name]
	if !ok {
		t.Fatalf("no %s %q among the manifests", kind, name)
	}
	return o
}

func container(t *testing.T, spec *corev1.PodSpec, name string) *corev1.Container {
	t.Helper()
	for i := range spec.Containers {
		if spec.Containers[i].Name == name {
			return &spec.Containers[i]
		}
	}
	t.Fatalf("no container %q", name)
	return nil
}

// namedPort is the container port called name.
func namedPort(t *testing.T, c *corev1.Container, name string) int32 {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	t.Fatalf("container %q has no port %q", c.Name, name)
	return 0
}

func selects(t *testing.T, sel *metav1.LabelSelector, podLabels map[string]string) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatal(err)
	}
	if s.Empty() {
		t.Fatal("an empty selector selects every pod")
	}
	return s.Matches(labels.Set(podLabels))
}

func serviceSelects(svc *corev1.Service, podLabels map[string]string) bool {
	return len(svc.Spec.Selector) > 0 && labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(podLabels))
}

// The decoder refuses what the API server would: a misspelt field, a
// field in the wrong case, a field given twice, an unknown kind. Without
// this the other tests could pass over a manifest the cluster rejects.
func TestDecoderIsStrict(t *testing.T) {
	dec := decoder()
	good := "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  clusterIP: None\n"
	if _, err := decodeAll(dec, strings.NewReader("# a comment\n---\n"+good)); err != nil {
		t.Fatalf("a valid Service: %v", err)
	}
	for name, doc := range map[string]string{
		"unknown field":   good + "  clusterIp: None\n",
		"wrong case":      strings.Replace(good, "clusterIP", "ClusterIP", 1),
		"duplicate field": good + "  clusterIP: 10.0.0.1\n",
		"unknown kind":    "apiVersion: v1\nkind: Sevrice\nmetadata:\n  name: s\n",
		"nested unknown":  "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: s\nspec:\n  template:\n    spec:\n      containers:\n        - name: c\n          securityContext:\n            readOnlyRootFileSystem: true\n",
	} {
		if _, err := decodeAll(dec, strings.NewReader(doc)); err == nil {
			t.Errorf("%s: decoded without an error", name)
		}
	}
}

func TestKustomizationListsEveryManifest(t *testing.T) {
	m := load(t)
	b, err := os.ReadFile(filepath.Join(manifestDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Resources  []string `json:"resources"`
		Images     []struct {
			Name    string `json:"name"`
			NewName string `json:"newName,omitempty"`
			NewTag  string `json:"newTag,omitempty"`
		} `json:"images"`
	}
	if err := yaml.UnmarshalStrict(b, &k); err != nil {
		t.Fatal(err)
	}
	if k.Kind != "Kustomization" {
		t.Errorf("kind %q", k.Kind)
	}
	got := slices.Sorted(slices.Values(k.Resources))
	if !slices.Equal(got, m.files) || len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Errorf("resources %v, want each of %v once", k.Resources, m.files)
	}
	image := container(t, &one(t, m.statefulSets, "StatefulSet", nodeSet).Spec.Template.Spec, nodeContainer).Image
	if len(k.Images) != 1 || !strings.HasPrefix(image, k.Images[0].Name+":") {
		t.Errorf("images %+v do not name the node image %q", k.Images, image)
	}
}

func TestEverythingIsInTheNamespace(t *testing.T) {
	m := load(t)
	ns := one(t, m.namespaces, "Namespace", namespace)
	// The pods meet the restricted standard, so the namespace enforces it.
	if got := ns.Labels["pod-security.kubernetes.io/enforce"]; got != "restricted" {
		t.Errorf("namespace enforces %q, want restricted", got)
	}
	var objs []metav1.Object
	for _, o := range m.configMaps {
		objs = append(objs, o)
	}
	for _, o := range m.services {
		objs = append(objs, o)
	}
	for _, o := range m.statefulSets {
		objs = append(objs, o)
	}
	for _, o := range m.deployments {
		objs = append(objs, o)
	}
	for _, o := range m.pdbs {
		objs = append(objs, o)
	}
	for _, o := range objs {
		if o.GetNamespace() != namespace {
			t.Errorf("%s is in namespace %q, want %q", o.GetName(), o.GetNamespace(), namespace)
		}
	}
}

// The headless Service, the StatefulSet, its selector and its PDB all
// mean the node pods and only them; the router's mean the router's pods.
func TestSelectorsMatchTheirPods(t *testing.T) {
	m := load(t)
	sts := one(t, m.statefulSets, "StatefulSet", nodeSet)
	router := one(t, m.deployments, "Deployment", routerName)
	nodePods, routerPods := sts.Spec.Template.Labels, router.Spec.Template.Labels

	if !selects(t, sts.Spec.Selector, nodePods) {
		t.Error("the StatefulSet's selector does not match its pod template")
	}
	if selects(t, sts.Spec.Selector, routerPods) {
		t.Error("the StatefulSet's selector matches the router's pods")
	}
	if !selects(t, router.Spec.Selector, routerPods) {
		t.Error("the router Deployment's selector does not match its pod template")
	}
	if selects(t, router.Spec.Selector, nodePods) {
		t.Error("the router Deployment's selector matches the node pods")
	}

	svc := one(t, m.services, "Service", nodeService)
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("Service %s: clusterIP %q, want None (headless: a DNS name per pod)", svc.Name, svc.Spec.ClusterIP)
	}
	if svc.Spec.PublishNotReadyAddresses {
		t.Errorf("Service %s publishes pods that are not ready: the router would send new sessions to a node still compiling", svc.Name)
	}
	if sts.Spec.ServiceName != svc.Name {
		t.Errorf("StatefulSet serviceName %q, want the headless Service %q", sts.Spec.ServiceName, svc.Name)
	}
	if !serviceSelects(svc, nodePods) || serviceSelects(svc, routerPods) {
		t.Errorf("Service %s selector %v must select the node pods %v and not the router's %v", svc.Name, svc.Spec.Selector, nodePods, routerPods)
	}
	rsvc := one(t, m.services, "Service", routerName)
	if !serviceSelects(rsvc, routerPods) || serviceSelects(rsvc, nodePods) {
		t.Errorf("Service %s selector %v must select the router pods %v and not the nodes' %v", rsvc.Name, rsvc.Spec.Selector, routerPods, nodePods)
	}

	for name, want := range map[string]map[string]string{nodeSet: nodePods, routerName: routerPods} {
		pdb := one(t, m.pdbs, "PodDisruptionBudget", name)
		if !selects(t, pdb.Spec.Selector, want) {
			t.Errorf("PodDisruptionBudget %s does not select its pods %v", name, want)
		}
		other := routerPods
		if name == routerName {
			other = nodePods
		}
		if selects(t, pdb.Spec.Selector, other) {
			t.Errorf("PodDisruptionBudget %s also selects %v", name, other)
		}
		if (pdb.Spec.MinAvailable == nil) == (pdb.Spec.MaxUnavailable == nil) {
			t.Errorf("PodDisruptionBudget %s: set one of minAvailable and maxUnavailable", name)
		}
	}
}

// Every Service port reaches a named container port, and the node
// Service's port is the container's (the router dials pod addresses the
// headless Service resolves to, so there is no port mapping in between).
func TestPortsAgree(t *testing.T) {
	m := load(t)
	sts := one(t, m.statefulSets, "StatefulSet", nodeSet)
	router := one(t, m.deployments, "Deployment", routerName)
	for _, c := range []struct {
		svc  *corev1.Service
		ctr  *corev1.Container
		same bool
	}{
		{one(t, m.services, "Service", nodeService), container(t, &sts.Spec.Template.Spec, nodeContainer), true},
		{one(t, m.services, "Service", routerName), container(t, &router.Spec.Template.Spec, routerContainer), false},
	} {
		if len(c.svc.Spec.Ports) != 1 {
			t.Fatalf("Service %s: want one port, got %d", c.svc.Name, len(c.svc.Spec.Ports))
		}
		sp := c.svc.Spec.Ports[0]
		if sp.TargetPort.Type != intstr.String || sp.TargetPort.StrVal != portName {
			t.Errorf("Service %s targets %s, want the named port %q", c.svc.Name, sp.TargetPort.String(), portName)
		}
		cp := namedPort(t, c.ctr, portName)
		if c.same && sp.Port != cp {
			t.Errorf("Service %s port %d, container port %d: they must agree", c.svc.Name, sp.Port, cp)
		}
	}
}

// nodeEnv is the environment the StatefulSet gives pod ordinal 0.
func nodeEnv(t *testing.T, sts *appsv1.StatefulSet) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, e := range container(t, &sts.Spec.Template.Spec, nodeContainer).Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			env[e.Name] = sts.Name + "-0"
		default:
			t.Fatalf("env %s: a source this test does not resolve", e.Name)
		}
	}
	return env
}

// The node id is the pod's name, from the downward API, and every pod
// name the StatefulSet makes is a valid node id.
func TestNodeIDIsThePodName(t *testing.T) {
	m := load(t)
	sts := one(t, m.statefulSets, "StatefulSet", nodeSet)
	c := container(t, &sts.Spec.Template.Spec, nodeContainer)
	var found bool
	for _, e := range c.Env {
		if e.Name != "CODEPORT_NODE_ID" {
			continue
		}
		found = true
		if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.name" {
			t.Errorf("CODEPORT_NODE_ID must come from the pod's metadata.name, got %+v", e)
		}
	}
	if !found {
		t.Fatal("CODEPORT_NODE_ID is not set")
	}
	replicas := int32(1)
	if sts.Spec.Replicas != nil {
		replicas = *sts.Spec.Replicas
	}
	// Headroom for scaling out: ids of ordinals far above the replicas.
	for _, ordinal := range []int32{0, replicas - 1, 999} {
		if err := port.CheckNodeID(fmt.Sprintf("%s-%d", sts.Name, ordinal)); err != nil {
			t.Errorf("pod %d: %v", ordinal, err)
		}
	}
	// Service links would put CODEPORT_<SERVICE>_PORT and the like into
	// the environment codeport reads its settings from.
	for name, spec := range map[string]*corev1.PodSpec{nodeSet: &sts.Spec.Template.Spec, routerName: &one(t, m.deployments, "Deployment", routerName).Spec.Template.Spec} {
		if spec.EnableServiceLinks == nil || *spec.EnableServiceLinks {
			t.Errorf("%s: enableServiceLinks must be false", name)
		}
		if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
			t.Errorf("%s: automountServiceAccountToken must be false: neither talks to the API server", name)
		}
	}
}

// mountFor is the volume mount under which path lies (the deepest), or nil.
func mountFor(c *corev1.Container, path string) *corev1.VolumeMount {
	var best *corev1.VolumeMount
	for i := range c.VolumeMounts {
		vm := &c.VolumeMounts[i]
		if (path == vm.MountPath || strings.HasPrefix(path, vm.MountPath+"/")) && (best == nil || len(vm.MountPath) > len(best.MountPath)) {
			best = vm
		}
	}
	return best
}

func volume(t *testing.T, spec *corev1.PodSpec, name string) *corev1.Volume {
	t.Helper()
	for i := range spec.Volumes {
		if spec.Volumes[i].Name == name {
			return &spec.Volumes[i]
		}
	}
	t.Fatalf("no volume %q", name)
	return nil
}

// writable reports whether path lies on a volume the container may write:
// an emptyDir or one of the StatefulSet's claims, mounted read-write.
func writable(t *testing.T, sts *appsv1.StatefulSet, c *corev1.Container, path string) bool {
	t.Helper()
	vm := mountFor(c, path)
	if vm == nil || vm.ReadOnly {
		return false
	}
	for _, pvc := range sts.Spec.VolumeClaimTemplates {
		if pvc.Name == vm.Name {
			return true
		}
	}
	return volume(t, &sts.Spec.Template.Spec, vm.Name).EmptyDir != nil
}

// nodeSettings loads the node ConfigMap's codeport.yaml with codeport's
// own loader, in the environment the StatefulSet gives pod 0, with every
// adapter serve offers registered: an unknown key is an error there.
func nodeSettings(t *testing.T, m *manifests) (binding.Config, *wasm.Settings, string) {
	t.Helper()
	cm := one(t, m.configMaps, "ConfigMap", nodeConfig)
	text, ok := cm.Data[nodeConfigKey]
	if !ok {
		t.Fatalf("ConfigMap %s has no %s", cm.Name, nodeConfigKey)
	}
	path := filepath.Join(t.TempDir(), nodeConfigKey)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := binding.New(httpadapter.Opener(), wasm.Opener(nil), subprocess.Opener(nil))
	if err != nil {
		t.Fatal(err)
	}
	env := nodeEnv(t, one(t, m.statefulSets, "StatefulSet", nodeSet))
	if _, ok := env["CODEPORT_CONFIG"]; ok {
		t.Fatal("the StatefulSet names the configuration file twice: in its args and in CODEPORT_CONFIG")
	}
	env["CODEPORT_CONFIG"] = path
	cfg, err := b.Load(nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("codeport refuses %s: %v", nodeConfigKey, err)
	}
	s, ok := cfg.Settings("wasm").(*wasm.Settings)
	if !ok {
		t.Fatal("no wasm settings")
	}
	if sel, err := cfg.Selected(); err != nil || sel.Name() != "wasm" {
		t.Fatalf("the configuration binds %v (%v), want the in-process runtime", sel, err)
	}
	return cfg, s, text
}

// codeport's settings wire into the pod: the file is where the args say,
// the port is the container's, every directory it writes is on a
// writable volume (the root file system is read-only), the token file is
// the mounted Secret's.
func TestNodeSettingsFitThePod(t *testing.T) {
	m := load(t)
	cfg, s, text := nodeSettings(t, m)
	sts := one(t, m.statefulSets, "StatefulSet", nodeSet)
	spec := &sts.Spec.Template.Spec
	c := container(t, spec, nodeContainer)

	var raw map[string]any
	if err := yaml.UnmarshalStrict([]byte(text), &raw); err != nil {
		t.Fatal(err)
	}
	if _, ok := raw["node_id"]; ok {
		t.Error("node_id in the ConfigMap: every pod would get the same id (it comes from the pod's name)")
	}
	if cfg.NodeID != sts.Name+"-0" {
		t.Errorf("pod 0 runs as node %q, want %q", cfg.NodeID, sts.Name+"-0")
	}

	// args: serve --config <the ConfigMap's file, where it is mounted>.
	i := slices.Index(c.Args, "--config")
	if len(c.Args) == 0 || c.Args[0] != "serve" || i < 0 || i+1 >= len(c.Args) {
		t.Fatalf("args %q, want serve --config FILE", c.Args)
	}
	cfgPath := c.Args[i+1]
	vm := mountFor(c, cfgPath)
	if vm == nil || filepath.Base(cfgPath) != nodeConfigKey || filepath.Dir(cfgPath) != vm.MountPath {
		t.Fatalf("--config %s is not the key %s of a mounted volume", cfgPath, nodeConfigKey)
	}
	if v := volume(t, spec, vm.Name); v.ConfigMap == nil || v.ConfigMap.Name != nodeConfig {
		t.Errorf("--config %s is on volume %s, not the ConfigMap %s", cfgPath, vm.Name, nodeConfig)
	}

	_, portText, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		t.Fatalf("listen %q: %v", cfg.Listen, err)
	}
	if want := namedPort(t, c, portName); portText != strconv.Itoa(int(want)) {
		t.Errorf("codeport listens on %s, the container port is %d", cfg.Listen, want)
	}
	if host, _, _ := net.SplitHostPort(cfg.Listen); host != "" && host != "0.0.0.0" && host != "::" {
		t.Errorf("listen %q: the kubelet and the router reach the pod on its own address", cfg.Listen)
	}

	for setting, dir := range map[string]string{
		"compile-cache-dir": s.CompilationCacheDir, "sessions-dir": s.SessionsDir,
		"hibernate-dir": s.HibernateDir, "TMPDIR": "/tmp",
	} {
		if dir == "" {
			t.Errorf("%s is not set: its default is on the read-only root file system", setting)
			continue
		}
		if !writable(t, sts, c, dir) {
			t.Errorf("%s %s is not on a writable volume", setting, dir)
		}
	}
	// Sessions must survive a restart: the hibernate directory is on the
	// pod's own persistent volume, not an emptyDir.
	if vm := mountFor(c, s.HibernateDir); vm == nil || !slices.ContainsFunc(sts.Spec.VolumeClaimTemplates, func(p corev1.PersistentVolumeClaim) bool { return p.Name == vm.Name }) {
		t.Errorf("hibernate-dir %s is not on a volumeClaimTemplate", s.HibernateDir)
	}

	if cfg.AuthTokenFile == "" {
		t.Error("no auth-token-file: every pod in the cluster could run code on the nodes")
	} else {
		vm := mountFor(c, cfg.AuthTokenFile)
		if vm == nil || !vm.ReadOnly {
			t.Fatalf("auth-token-file %s is not on a read-only mount", cfg.AuthTokenFile)
		}
		v := volume(t, spec, vm.Name)
		if v.Secret == nil || v.Secret.DefaultMode == nil {
			t.Fatalf("auth-token-file %s is not on a Secret volume with a defaultMode", cfg.AuthTokenFile)
		}
		// serve warns about a token file other users may read.
		if *v.Secret.DefaultMode&0o007 != 0 {
			t.Errorf("the token Secret's mode %#o lets other users read it", *v.Secret.DefaultMode)
		}
		if !slices.ContainsFunc(v.Secret.Items, func(k corev1.KeyToPath) bool {
			return filepath.Join(vm.MountPath, k.Path) == cfg.AuthTokenFile
		}) {
			t.Errorf("auth-token-file %s is not a key of Secret %s", cfg.AuthTokenFile, v.Secret.SecretName)
		}
	}
}

// Probes ask codeport's /healthz on the named port; the startup probe
// lets a cold compile finish before liveness may restart the pod.
func TestProbes(t *testing.T) {
	m := load(t)
	node := container(t, &one(t, m.statefulSets, "StatefulSet", nodeSet).Spec.Template.Spec, nodeContainer)
	router := container(t, &one(t, m.deployments, "Deployment", routerName).Spec.Template.Spec, routerContainer)
	check := func(who string, p *corev1.Probe, c *corev1.Container) {
		t.Helper()
		if p == nil {
			t.Errorf("%s: missing", who)
			return
		}
		h := p.HTTPGet
		if h == nil || h.Path != "/healthz" || h.Port.Type != intstr.String || h.Port.StrVal != portName {
			t.Errorf("%s: want GET /healthz on port %q, got %+v", who, portName, p.ProbeHandler)
		}
		namedPort(t, c, portName)
	}
	check("node readiness", node.ReadinessProbe, node)
	check("node liveness", node.LivenessProbe, node)
	check("node startup", node.StartupProbe, node)
	check("router readiness", router.ReadinessProbe, router)
	check("router liveness", router.LivenessProbe, router)
	if p := node.StartupProbe; p != nil {
		budget := time.Duration(p.PeriodSeconds*p.FailureThreshold) * time.Second
		if budget < minStartupBudget {
			t.Errorf("the startup probe gives up after %v; a cold compile may take %v", budget, minStartupBudget)
		}
	}
}

// Every pod runs as the restricted Pod Security Standard requires, and
// the node pods as the Dockerfile's user.
func TestSecurityContexts(t *testing.T) {
	m := load(t)
	sts := one(t, m.statefulSets, "StatefulSet", nodeSet)
	pods := map[string]*corev1.PodSpec{nodeSet: &sts.Spec.Template.Spec, routerName: &one(t, m.deployments, "Deployment", routerName).Spec.Template.Spec}
	for name, spec := range pods {
		psc := spec.SecurityContext
		if psc == nil {
			t.Errorf("%s: no pod securityContext", name)
			continue
		}
		if psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
			t.Errorf("%s: the pod must run as a non-root user id", name)
		}
		if psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: pod seccomp profile must be RuntimeDefault", name)
		}
		if len(spec.InitContainers) > 0 || len(spec.EphemeralContainers) > 0 {
			t.Errorf("%s: containers beyond the checked ones", name)
		}
		for _, c := range spec.Containers {
			sc := c.SecurityContext
			if sc == nil {
				t.Errorf("%s/%s: no securityContext", name, c.Name)
				continue
			}
			switch {
			case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot:
				t.Errorf("%s/%s: runAsNonRoot must be true", name, c.Name)
			case sc.RunAsUser != nil && *sc.RunAsUser == 0:
				t.Errorf("%s/%s: runs as root", name, c.Name)
			}
			if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				t.Errorf("%s/%s: allowPrivilegeEscalation must be false", name, c.Name)
			}
			if sc.Privileged != nil && *sc.Privileged {
				t.Errorf("%s/%s: privileged", name, c.Name)
			}
			if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
				t.Errorf("%s/%s: readOnlyRootFilesystem must be true", name, c.Name)
			}
			if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
				t.Errorf("%s/%s: capabilities must drop ALL and add none, got %+v", name, c.Name, sc.Capabilities)
			}
			if sc.SeccompProfile != nil && sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("%s/%s: seccomp profile %s", name, c.Name, sc.SeccompProfile.Type)
			}
		}
		for _, v := range spec.Volumes {
			if v.HostPath != nil {
				t.Errorf("%s: volume %s is a hostPath", name, v.Name)
			}
		}
	}

	uid := dockerfileUser(t)
	if got := sts.Spec.Template.Spec.SecurityContext.RunAsUser; got == nil || *got != uid {
		t.Errorf("the node pods' runAsUser is not the Dockerfile's USER %d", uid)
	}
}

// dockerfileUser checks the Dockerfile's shape (a Go builder that links
// statically, an empty or distroless final stage) and returns its numeric
// USER.
func dockerfileUser(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	var froms []string
	var user string
	for line := range strings.SplitSeq(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "FROM":
			froms = append(froms, f[1])
			user = "" // USER is per stage
		case "USER":
			user = f[1]
		}
	}
	if len(froms) < 2 || !strings.HasPrefix(froms[0], "golang:") {
		t.Errorf("want a multi-stage build from a golang image, got stages %v", froms)
	}
	if last := froms[len(froms)-1]; last != "scratch" && !strings.Contains(last, "distroless/static") {
		t.Errorf("the final stage is %s, want scratch or distroless static", last)
	}
	if !strings.Contains(text, "CGO_ENABLED=0") || !strings.Contains(text, "./cmd/codeport") {
		t.Error("the binary is not built with CGO_ENABLED=0 from ./cmd/codeport")
	}
	// The image starts compiled: the build stage fills the final home's
	// compilation cache, which the final stage copies.
	if !strings.Contains(text, "HOME=/out/home /out/codeport compile") || !strings.Contains(text, "/out/home /home/codeport") || !strings.Contains(text, "ENV HOME=/home/codeport") {
		t.Error("the build stage does not run codeport compile into the home the final stage runs with")
	}
	uid, _, _ := strings.Cut(user, ":")
	n, err := strconv.ParseInt(uid, 10, 64)
	if err != nil || n == 0 {
		t.Fatalf("the final stage's USER is %q, want a numeric non-root user", user)
	}
	return n
}

func quantity(t *testing.T, rl corev1.ResourceList, name corev1.ResourceName) int64 {
	t.Helper()
	q, ok := rl[name]
	if !ok {
		t.Errorf("no %s", name)
		return 0
	}
	return q.Value()
}

// Every container asks for CPU and memory and is bounded; limits are at
// least the requests; the node's memory and storage cover its settings:
// the request every session idle, the limit every session at its memory
// limit, the sessions volume every workspace full.
func TestResources(t *testing.T) {
	m := load(t)
	sts := one(t, m.statefulSets, "StatefulSet", nodeSet)
	for name, spec := range map[string]*corev1.PodSpec{nodeSet: &sts.Spec.Template.Spec, routerName: &one(t, m.deployments, "Deployment", routerName).Spec.Template.Spec} {
		for _, c := range spec.Containers {
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
				req, okReq := c.Resources.Requests[r]
				lim, okLim := c.Resources.Limits[r]
				if !okReq || !okLim {
					t.Errorf("%s/%s: %s needs a request and a limit", name, c.Name, r)
					continue
				}
				if lim.Cmp(req) < 0 {
					t.Errorf("%s/%s: %s limit %s is below its request %s", name, c.Name, r, lim.String(), req.String())
				}
			}
		}
	}

	_, s, _ := nodeSettings(t, m)
	c := container(t, &sts.Spec.Template.Spec, nodeContainer)
	sessions := int64(s.MaxSessions)
	mib := func(n int64) string { return resource.NewQuantity(n, resource.BinarySI).String() }
	if want, got := processBytes+sessions*idleSessionBytes, quantity(t, c.Resources.Requests, corev1.ResourceMemory); got < want {
		t.Errorf("memory request %s, want at least %s: the process and %d idle sessions", mib(got), mib(want), sessions)
	}
	if want, got := processBytes+sessions*s.MemoryLimit, quantity(t, c.Resources.Limits, corev1.ResourceMemory); got < want {
		t.Errorf("memory limit %s, want at least %s: the process and %d sessions at memory-limit %s", mib(got), mib(want), sessions, mib(s.MemoryLimit))
	}
	vm := mountFor(c, s.SessionsDir)
	if vm == nil {
		t.Fatalf("sessions-dir %s is not mounted", s.SessionsDir)
	}
	v := volume(t, &sts.Spec.Template.Spec, vm.Name)
	if v.EmptyDir == nil || v.EmptyDir.SizeLimit == nil {
		t.Fatalf("sessions-dir %s: want an emptyDir with a sizeLimit", s.SessionsDir)
	}
	// An emptyDir over its sizeLimit gets the pod evicted, every session
	// with it: the limit covers every workspace full.
	if want, got := sessions*(s.WorkspaceLimit+int64(s.WorkspaceEntries)*entryBlockBytes), v.EmptyDir.SizeLimit.Value(); got < want {
		t.Errorf("sessions volume sizeLimit %s, want at least %s", mib(got), mib(want))
	}
	var emptyDirs int64
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.EmptyDir != nil && v.EmptyDir.SizeLimit != nil {
			emptyDirs += v.EmptyDir.SizeLimit.Value()
		}
	}
	if lim := quantity(t, c.Resources.Limits, corev1.ResourceEphemeralStorage); lim < emptyDirs {
		t.Errorf("ephemeral-storage limit %s is below the emptyDirs' %s", mib(lim), mib(emptyDirs))
	}
}

// directive is one nginx directive and, for a block, what it holds.
type directive struct {
	name  string
	args  []string
	block []*directive
}

// parseNginx reads nginx's configuration syntax: directives of words
// (quoted or not) ended by ';' or a '{ ... }' block, '#' comments. It is
// enough for the checks below, not a validator (TestRouterConfigSyntax
// runs nginx itself).
func parseNginx(text string) ([]*directive, error) {
	var tokens []string
	for i := 0; i < len(text); {
		switch ch := text[i]; {
		case ch == '#':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
			i++
		case ch == '{' || ch == '}' || ch == ';':
			tokens = append(tokens, string(ch))
			i++
		case ch == '"' || ch == '\'':
			var b strings.Builder
			j := i + 1
			// As nginx reads a quoted word: \", \' and \\ stand for the
			// character, \t, \r and \n for the control character, and
			// any other backslash is kept (a regular expression's \.).
			for ; j < len(text) && text[j] != ch; j++ {
				if text[j] == '\\' && j+1 < len(text) {
					switch text[j+1] {
					case '"', '\'', '\\':
						j++
					case 't', 'r', 'n':
						j++
						b.WriteByte(map[byte]byte{'t': '\t', 'r': '\r', 'n': '\n'}[text[j]])
						continue
					}
				}
				b.WriteByte(text[j])
			}
			if j >= len(text) {
				return nil, errors.New("unterminated quote")
			}
			tokens = append(tokens, b.String())
			i = j + 1
		default:
			j := i
			for j < len(text) && !strings.ContainsRune(" \t\r\n;{}", rune(text[j])) {
				j++
			}
			tokens = append(tokens, text[i:j])
			i = j
		}
	}
	var parse func(depth int) ([]*directive, error)
	parse = func(depth int) ([]*directive, error) {
		var out []*directive
		var cur *directive
		for len(tokens) > 0 {
			tok := tokens[0]
			tokens = tokens[1:]
			switch {
			case tok == ";" && cur != nil:
				out, cur = append(out, cur), nil
			case tok == "{" && cur != nil:
				inner, err := parse(depth + 1)
				if err != nil {
					return nil, err
				}
				cur.block = inner
				out, cur = append(out, cur), nil
			case tok == "}" && cur == nil && depth > 0:
				return out, nil
			case tok == ";" || tok == "{" || tok == "}":
				return nil, fmt.Errorf("unexpected %q", tok)
			case cur == nil:
				cur = &directive{name: tok}
			default:
				cur.args = append(cur.args, tok)
			}
		}
		if cur != nil || depth > 0 {
			return nil, errors.New("unexpected end")
		}
		return out, nil
	}
	return parse(0)
}

// find returns the directives called name directly in ds.
func find(ds []*directive, name string) []*directive {
	var out []*directive
	for _, d := range ds {
		if d.name == name {
			out = append(out, d)
		}
	}
	return out
}

// args lists the arguments of ds, for messages.
func args(ds []*directive) [][]string {
	out := make([][]string, len(ds))
	for i, d := range ds {
		out[i] = d.args
	}
	return out
}

// all returns the directives called name anywhere in ds.
func all(ds []*directive, name string) []*directive {
	var out []*directive
	for _, d := range ds {
		if d.name == name {
			out = append(out, d)
		}
		out = append(out, all(d.block, name)...)
	}
	return out
}

// nginxBytes parses an nginx size: a number with k, m or g.
func nginxBytes(t *testing.T, s string) int64 {
	t.Helper()
	mult := int64(1)
	switch strings.ToLower(s[len(s)-1:]) {
	case "k":
		mult = 1 << 10
	case "m":
		mult = 1 << 20
	case "g":
		mult = 1 << 30
	}
	n, err := strconv.ParseInt(strings.TrimRight(s, "kKmMgG"), 10, 64)
	if err != nil {
		t.Fatalf("size %q: %v", s, err)
	}
	return n * mult
}

// routerConf is the router's nginx.conf, as its ConfigMap holds it and
// where its command reads it from.
func routerConf(t *testing.T, m *manifests) (string, []*directive) {
	t.Helper()
	cm := one(t, m.configMaps, "ConfigMap", routerName)
	text, ok := cm.Data[routerConfigKey]
	if !ok {
		t.Fatalf("ConfigMap %s has no %s", cm.Name, routerConfigKey)
	}
	ds, err := parseNginx(text)
	if err != nil {
		t.Fatalf("%s: %v", routerConfigKey, err)
	}
	return text, ds
}

// sessionRoute is the regular expression of the location that routes by
// node, with its node capture written as Go writes it.
func sessionRoute(t *testing.T, server *directive) (string, *directive) {
	t.Helper()
	for _, loc := range find(server.block, "location") {
		if len(loc.args) == 2 && loc.args[0] == "~" && strings.Contains(loc.args[1], "<node>") {
			return strings.Replace(loc.args[1], "(?<node>", "(?P<node>", 1), loc
		}
	}
	t.Fatal("no location routes by a node capture")
	return "", nil
}

// The router is wired to the Service, namespace and port that exist, and
// routes by httpserver.SessionRoutePattern, the expression node ids are made for.
func TestRouterConfig(t *testing.T) {
	m := load(t)
	_, ds := routerConf(t, m)
	_, s, _ := nodeSettings(t, m)
	svc := one(t, m.services, "Service", nodeService)
	svcPort := svc.Spec.Ports[0].Port
	serviceHost := fmt.Sprintf("%s.%s.%s", svc.Name, svc.Namespace, clusterDomain)

	https := find(ds, "http")
	if len(https) != 1 {
		t.Fatalf("want one http block, got %d", len(https))
	}
	http := https[0]
	servers := find(http.block, "server")
	if len(servers) != 1 {
		t.Fatalf("want one server block, got %d", len(servers))
	}
	server := servers[0]

	re, loc := sessionRoute(t, server)
	if re != httpserver.SessionRoutePattern {
		t.Errorf("the router routes by %q, node ids are made for %q", re, httpserver.SessionRoutePattern)
	}
	pp := find(loc.block, "proxy_pass")
	if want := fmt.Sprintf("http://$served_by.%s:%d", serviceHost, svcPort); len(pp) != 1 || len(pp[0].args) != 1 || pp[0].args[0] != want {
		t.Errorf("the session route's proxy_pass is %v, want %s", args(pp), want)
	}
	// $served_by is the node's own name unless it was drained.
	maps := find(http.block, "map")
	servedBy := false
	for _, m := range maps {
		if len(m.args) == 2 && m.args[0] == "$node" && m.args[1] == "$served_by" {
			d := find(m.block, "default")
			servedBy = len(d) == 1 && len(d[0].args) == 1 && d[0].args[0] == "$node"
		}
	}
	if !servedBy {
		t.Error("no map $node $served_by { default $node; }: the session route's host is not the id's node")
	}
	if len(find(http.block, "resolver")) != 1 {
		t.Error("no resolver: nginx cannot resolve the node names at run time")
	}

	// The upstream of new sessions is every ready pod of the Service.
	ups := find(http.block, "upstream")
	if len(ups) != 1 {
		t.Fatalf("want one upstream, got %d", len(ups))
	}
	up := ups[0]
	srv := find(up.block, "server")
	if want := fmt.Sprintf("%s:%d", serviceHost, svcPort); len(srv) != 1 || len(srv[0].args) < 1 || srv[0].args[0] != want || !slices.Contains(srv[0].args, "resolve") {
		t.Errorf("upstream %v: want server %s resolve (re-read as pods come and go)", up.args, want)
	}
	if len(find(up.block, "least_conn")) != 1 || len(find(up.block, "zone")) != 1 {
		t.Error("the upstream must balance by least_conn and live in a zone (needed by resolve)")
	}
	for _, path := range []string{"/sessions", "/snapshots/restore", "/capabilities", "/openapi.yaml"} {
		var found bool
		for _, l := range find(server.block, "location") {
			if len(l.args) == 2 && l.args[0] == "=" && l.args[1] == path {
				found = true
				if p := find(l.block, "proxy_pass"); len(p) != 1 || p[0].args[0] != "http://"+up.args[0] {
					t.Errorf("location = %s proxies to %v, want the upstream %s", path, args(p), up.args[0])
				}
			}
		}
		if !found {
			t.Errorf("no location = %s", path)
		}
	}

	// The router listens on its container's port.
	router := one(t, m.deployments, "Deployment", routerName)
	rc := container(t, &router.Spec.Template.Spec, routerContainer)
	listens := find(server.block, "listen")
	if want := strconv.Itoa(int(namedPort(t, rc, portName))); len(listens) != 1 || listens[0].args[0] != want {
		t.Errorf("the router listens on %v, its container port is %s", args(listens), want)
	}
	// Its command reads the ConfigMap's file.
	i := slices.Index(rc.Command, "-c")
	if i < 0 || i+1 >= len(rc.Command) {
		t.Fatalf("router command %q has no -c FILE", rc.Command)
	}
	confPath := rc.Command[i+1]
	vm := mountFor(rc, confPath)
	if vm == nil || filepath.Base(confPath) != routerConfigKey || filepath.Dir(confPath) != vm.MountPath {
		t.Fatalf("-c %s is not the key %s of a mounted volume", confPath, routerConfigKey)
	}
	if v := volume(t, &router.Spec.Template.Spec, vm.Name); v.ConfigMap == nil || v.ConfigMap.Name != routerName {
		t.Errorf("-c %s is not on the ConfigMap %s", confPath, routerName)
	}

	// Streams and uploads pass unbuffered, calls may run to max-timeout,
	// and an upload as large as codeport takes is let through.
	for _, d := range []string{"proxy_buffering", "proxy_request_buffering"} {
		if got := all(ds, d); len(got) == 0 || slices.ContainsFunc(got, func(d *directive) bool { return d.args[0] != "off" }) {
			t.Errorf("%s must be off everywhere", d)
		}
	}
	for _, d := range all(ds, "proxy_read_timeout") {
		v, err := time.ParseDuration(d.args[0])
		if err != nil {
			t.Fatalf("proxy_read_timeout %s: %v", d.args[0], err)
		}
		if v <= s.MaxTimeout {
			t.Errorf("proxy_read_timeout %v would cut an exec of max-timeout %v", v, s.MaxTimeout)
		}
	}
	if len(all(ds, "proxy_read_timeout")) == 0 {
		t.Error("no proxy_read_timeout: nginx's 60 s would cut long execs")
	}
	for _, d := range all(ds, "client_max_body_size") {
		if got, want := nginxBytes(t, d.args[0]), s.FileLimit+uploadFramingBytes; got < want {
			t.Errorf("client_max_body_size %s is below codeport's upload cap of %d bytes", d.args[0], want)
		}
	}
	if len(find(server.block, "client_max_body_size")) == 0 {
		t.Error("no client_max_body_size in the server: nginx's 1 MiB would refuse uploads")
	}
}

// deploy/nginx, the configuration for nginx outside Kubernetes, routes by
// the same expression. It is written beside this one; until it exists
// there is nothing to compare.
func TestPlainNginxSharesTheRoute(t *testing.T) {
	confs, err := filepath.Glob(filepath.Join("nginx", "*.conf*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(confs) == 0 {
		t.Skip("no deploy/nginx/*.conf yet: the k8s router is checked against httpserver.SessionRoutePattern alone (TestRouterConfig)")
	}
	for _, p := range confs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := parseNginx(string(b))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var res []string
		for _, loc := range all(ds, "location") {
			if len(loc.args) == 2 && loc.args[0] == "~" && strings.Contains(loc.args[1], "<node>") {
				res = append(res, strings.Replace(loc.args[1], "(?<node>", "(?P<node>", 1))
			}
		}
		// Sessions by server.SessionRoutePattern, and the Containers
		// API's routes of a container by containers.PathPattern: nothing
		// else routes by a node.
		for _, re := range res {
			if re != httpserver.SessionRoutePattern && re != containers.PathPattern {
				t.Errorf("%s routes by %q, want %q (or, for containers, %q)", p, re, httpserver.SessionRoutePattern, containers.PathPattern)
			}
		}
		if strings.HasSuffix(p, "codeport.conf") && !slices.Contains(res, httpserver.SessionRoutePattern) {
			t.Errorf("%s does not route sessions by %q", p, httpserver.SessionRoutePattern)
		}
	}
}

// The router's configuration is one nginx accepts. The cluster's names
// become loopback addresses (nginx -t resolves what it can at start), and
// an nginx older than 1.27.3, which has no "resolve" on an upstream
// server, is given the server without it.
func TestRouterConfigSyntax(t *testing.T) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		t.Skip("nginx is not installed (apt-get install nginx-light): the router's syntax is not checked")
	}
	m := load(t)
	text, ds := routerConf(t, m)
	out, err := exec.Command(bin, "-v").CombinedOutput()
	if err != nil {
		t.Fatalf("nginx -v: %v: %s", err, out)
	}
	ver := regexp.MustCompile(`nginx/(\d+)\.(\d+)\.(\d+)`).FindStringSubmatch(string(out))
	if ver == nil {
		t.Fatalf("nginx -v: %s", out)
	}
	v := [3]int{}
	for i := range v {
		v[i], _ = strconv.Atoi(ver[i+1])
	}
	hasResolve := v[0] > 1 || v[1] > 27 || (v[1] == 27 && v[2] >= 3)

	dir := t.TempDir()
	for _, r := range all(ds, "resolver") {
		text = strings.Replace(text, r.args[0], "127.0.0.1", 1)
	}
	for _, up := range all(ds, "upstream") {
		for _, s := range find(up.block, "server") {
			if !hasResolve {
				text = strings.Replace(text, s.args[0]+" resolve", "127.0.0.1:1", 1)
			}
		}
	}
	text = strings.ReplaceAll(text, " /tmp/", " "+dir+"/")
	if strings.Contains(strings.ReplaceAll(text, dir+"/", ""), "/tmp/") {
		t.Fatal("a /tmp path this test does not move")
	}
	path := filepath.Join(dir, routerConfigKey)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(bin, "-t", "-q", "-e", "stderr", "-p", dir, "-c", path).CombinedOutput()
	if err != nil {
		t.Fatalf("nginx %d.%d.%d -t refuses the router's configuration: %v\n%s", v[0], v[1], v[2], err, out)
	}
	if !hasResolve {
		t.Logf("nginx %d.%d.%d has no upstream \"resolve\": checked without it", v[0], v[1], v[2])
	}
}

// addOnce files an object of a manifest file by its name, refusing a name
// the file set has defined already for that kind.
func addOnce[T any](t *testing.T, file string, into map[string]T, name string, o T) {
	t.Helper()
	if _, seen := into[name]; seen {
		t.Fatalf("%s: %T %s is defined twice", file, o, name)
	}
	into[name] = o
}
