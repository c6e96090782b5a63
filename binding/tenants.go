package binding

import (
	"encoding/hex"
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"
)

// The YAML file's tenants section: API keys, each naming a tenant with its
// limits. It is the one setting that is a list, so it has no flag or
// environment form; it is read strictly (an unknown or repeated key, a
// value of the wrong type, is an error naming its line).
//
//	tenants:
//	  - name: acme
//	    keys:
//	      - sha256: 350a906a07d73824d19aff9d6a376dd3ecf047c998da71b78ea94566d7023c36
//	      - file: /run/secrets/acme-next.key
//	    max_sessions: 8
//	    executions_per_second: 5
//	    burst: 10
//
// A key is given by its SHA-256 (hex) or by a file holding it, so the
// YAML file need not hold a secret. Names, limits and duplicates are
// checked by whoever serves the tenants (server.NewTenants), and
// key files are read there too (cmd/codeport).

// tenantsKey is the section's key in the YAML file.
const tenantsKey = "tenants"

// TenantConfig is one entry of the tenants section.
type TenantConfig struct {
	Name string
	Keys []TenantKey
	// MaxSessions bounds the tenant's sessions at once; 0 is no limit.
	MaxSessions int
	// ExecutionsPerSecond bounds its exec calls, with Burst at once; 0
	// is no limit.
	ExecutionsPerSecond float64
	Burst               int
	// Line is where the entry starts in the file, for messages.
	Line int
}

// TenantKey is one key of a tenant: exactly one of SHA256 (the key's
// digest, 32 bytes) and File (a file holding the key, on one line).
type TenantKey struct {
	SHA256 []byte
	File   string
	Line   int
}

// loadTenants reads the tenants section of the YAML document b, nil when
// it has none.
func loadTenants(b []byte) ([]TenantConfig, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == tenantsKey {
			return decodeTenants(top.Content[i+1])
		}
	}
	return nil, nil
}

func decodeTenants(n *yaml.Node) ([]TenantConfig, error) {
	if n.Tag == "!!null" {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("line %d: tenants: want a list of tenants", n.Line)
	}
	out := make([]TenantConfig, 0, len(n.Content))
	var errs []error
	for _, e := range n.Content {
		t, err := decodeTenant(e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, t)
	}
	return out, errors.Join(errs...)
}

// mapping calls f for each key and value of a mapping node, refusing a
// key given twice and, through f, unknown ones.
func mapping(n *yaml.Node, what string, f func(key string, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: %s: want a mapping", n.Line, what)
	}
	seen := map[string]bool{}
	var errs []error
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			errs = append(errs, fmt.Errorf("line %d: %s: %q given twice", k.Line, what, k.Value))
			continue
		}
		seen[k.Value] = true
		if err := f(k.Value, v); err != nil {
			errs = append(errs, fmt.Errorf("line %d: %s: %s: %w", v.Line, what, k.Value, err))
		}
	}
	return errors.Join(errs...)
}

func decodeTenant(n *yaml.Node) (TenantConfig, error) {
	t := TenantConfig{Line: n.Line}
	what := fmt.Sprintf("tenant at line %d", n.Line)
	err := mapping(n, what, func(key string, v *yaml.Node) error {
		var err error
		switch key {
		case "name":
			t.Name, err = scalar(v, "!!str")
		case "keys":
			t.Keys, err = decodeKeys(v)
		case "max_sessions":
			t.MaxSessions, err = wholeNumber(v)
		case "burst":
			t.Burst, err = wholeNumber(v)
		case "executions_per_second":
			if _, err = scalar(v, "!!float", "!!int"); err == nil {
				err = v.Decode(&t.ExecutionsPerSecond)
			}
		default:
			err = errors.New("unknown key (known: name, keys, max_sessions, executions_per_second, burst)")
		}
		return err
	})
	if err == nil && len(t.Keys) == 0 {
		err = fmt.Errorf("%s: keys: give at least one key (sha256 or file)", what)
	}
	return t, err
}

func decodeKeys(n *yaml.Node) ([]TenantKey, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, errors.New("want a list of keys, each {sha256: HEX} or {file: PATH}")
	}
	var out []TenantKey
	var errs []error
	for _, e := range n.Content {
		k := TenantKey{Line: e.Line}
		err := mapping(e, fmt.Sprintf("key at line %d", e.Line), func(key string, v *yaml.Node) error {
			s, err := scalar(v, "!!str")
			if err != nil {
				return err
			}
			switch key {
			case "sha256":
				b, err := hex.DecodeString(s)
				if err != nil || len(b) != 32 {
					return errors.New("want the key's SHA-256 as 64 hexadecimal digits (sha256sum of the key, without its newline)")
				}
				k.SHA256 = b
			case "file":
				if s == "" {
					return errors.New("empty path")
				}
				k.File = s
			default:
				return errors.New("unknown key (known: sha256, file)")
			}
			return nil
		})
		if err == nil && (k.SHA256 == nil) == (k.File == "") {
			err = fmt.Errorf("line %d: a key is given by exactly one of sha256 and file", e.Line)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, k)
	}
	return out, errors.Join(errs...)
}

// scalar is a scalar node's value, refused unless its tag is one of tags.
func scalar(n *yaml.Node, tags ...string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", errors.New("want a single value")
	}
	for _, t := range tags {
		if n.ShortTag() == t {
			return n.Value, nil
		}
	}
	return "", fmt.Errorf("%q is not a %s", n.Value, kindOf(tags[0]))
}

func kindOf(tag string) string {
	switch tag {
	case "!!int":
		return "whole number"
	case "!!str":
		return "string"
	}
	return "number"
}

// wholeNumber is an integer node's value: "1.5" or "2x" are errors, not
// rounded or read as 0.
func wholeNumber(n *yaml.Node) (int, error) {
	if _, err := scalar(n, "!!int"); err != nil {
		return 0, err
	}
	var v int
	if err := n.Decode(&v); err != nil {
		return 0, err
	}
	return v, nil
}
