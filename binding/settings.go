package binding

import (
	"encoding"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/codeport/codeport/internal/bytesize"
)

// A settings struct declares its settings in struct tags, so that flags,
// environment variables and YAML keys are derived from the one type that
// holds them, never written out a second time:
//
//	Timeout     time.Duration `setting:"timeout" help:"execution timeout of a call that asks for none"`
//	MemoryLimit int64         `setting:"memory-limit" unit:"bytes" help:"memory per session"`
//
// The name is the flag; the YAML key is the name with '_' for '-', the
// environment variable CODEPORT_ and the key in capitals. Fields of an
// embedded struct are the embedding struct's. Supported types: string,
// bool, int, int64 (a size with unit:"bytes": "256MiB", "0" or a negative
// number for "none"), time.Duration ("30s", or seconds) and any type with
// UnmarshalText and MarshalText.

// field is one setting of one settings struct.
type field struct {
	name, help string
	bytes      bool
	v          reflect.Value // addressable
	// owner names the adapter whose settings declare the field ("" for
	// the server's own).
	owner string
}

// fieldsOf lists the settings of the struct ptr points to.
func fieldsOf(ptr any) ([]field, error) {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("binding: settings must be a pointer to a struct, not %T", ptr)
	}
	var out []field
	var walk func(v reflect.Value) error
	walk = func(v reflect.Value) error {
		t := v.Type()
		for i := range t.NumField() {
			sf := t.Field(i)
			if sf.Anonymous && sf.Type.Kind() == reflect.Struct {
				if err := walk(v.Field(i)); err != nil {
					return err
				}
				continue
			}
			name := sf.Tag.Get("setting")
			if name == "" || !sf.IsExported() {
				continue
			}
			f := field{name: name, help: sf.Tag.Get("help"), bytes: sf.Tag.Get("unit") == "bytes", v: v.Field(i)}
			if err := f.check(); err != nil {
				return fmt.Errorf("binding: %s.%s: %w", t, sf.Name, err)
			}
			out = append(out, f)
		}
		return nil
	}
	return out, walk(v.Elem())
}

var durationType = reflect.TypeFor[time.Duration]()

func (f field) text() (encoding.TextUnmarshaler, bool) {
	u, ok := f.v.Addr().Interface().(encoding.TextUnmarshaler)
	return u, ok
}

// check refuses a field of a type no source can set.
func (f field) check() error {
	if _, ok := f.text(); ok {
		if _, ok := f.v.Interface().(encoding.TextMarshaler); !ok {
			return fmt.Errorf("%s has UnmarshalText but no MarshalText", f.v.Type())
		}
		return nil
	}
	switch f.v.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int64:
		return nil
	}
	return fmt.Errorf("unsupported setting type %s", f.v.Type())
}

// set parses s into the field.
func (f field) set(s string) error {
	if u, ok := f.text(); ok {
		return u.UnmarshalText([]byte(s))
	}
	s = strings.TrimSpace(s)
	switch {
	case f.v.Type() == durationType:
		d, err := parseDuration(s)
		if err != nil {
			return err
		}
		f.v.SetInt(int64(d))
	case f.v.Kind() == reflect.String:
		f.v.SetString(s)
	case f.v.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", s)
		}
		f.v.SetBool(b)
	case f.bytes:
		n, err := parseSize(s)
		if err != nil {
			return err
		}
		f.v.SetInt(n)
	default:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || f.v.OverflowInt(n) {
			return fmt.Errorf("want a whole number, got %q", s)
		}
		f.v.SetInt(n)
	}
	return nil
}

// get formats the field as set reads it.
func (f field) get() string {
	if m, ok := f.v.Interface().(encoding.TextMarshaler); ok {
		b, err := m.MarshalText()
		if err != nil {
			return ""
		}
		return string(b)
	}
	switch {
	case f.v.Type() == durationType:
		return time.Duration(f.v.Int()).String()
	case f.v.Kind() == reflect.String:
		return f.v.String()
	case f.v.Kind() == reflect.Bool:
		return strconv.FormatBool(f.v.Bool())
	case f.bytes && f.v.Int() > 0:
		return bytesize.Format(f.v.Int())
	}
	return strconv.FormatInt(f.v.Int(), 10)
}

// setting is one name, with every field it sets: adapters that share a
// setting (every runtime has a timeout) declare it with the same name and
// type, and one value sets them all.
type setting struct {
	name, help string
	fields     []field
}

func (s *setting) env() string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(s.name, "-", "_"))
}

// usage is the setting's help and default for a flag, those of the
// adapter named selected (the one the defaults bind) when it declares the
// setting. A setting adapters share may have another default in another
// adapter: the help says so, since those apply when that adapter is bound.
func (s *setting) usage(selected string) (help, def string) {
	shown := s.fields[0]
	for _, f := range s.fields {
		if f.owner == selected {
			shown = f
			break
		}
	}
	def = shown.defaultText()
	help = shown.help + " (env " + s.env()
	seen := map[string]bool{def: true}
	for _, f := range s.fields {
		d := f.defaultText()
		if f.owner == shown.owner || f.owner == "" || seen[d] {
			continue
		}
		seen[d] = true
		if d == "" {
			d = "none"
		}
		help += fmt.Sprintf("; the %s adapter's default: %s", f.owner, d)
	}
	return help + ")", def
}

// defaultText is the field's value as a flag's default: none for a zero
// duration.
func (f field) defaultText() string {
	if d := f.get(); d != "0s" {
		return d
	}
	return ""
}

func (s *setting) yamlKey() string { return strings.ReplaceAll(s.name, "-", "_") }

func (s *setting) set(v string) error {
	for _, f := range s.fields {
		if err := f.set(v); err != nil {
			return err
		}
	}
	return nil
}

// settingsOf is a settings struct and the adapter that declares it (""
// for the server's own).
type settingsOf struct {
	owner string
	ptr   any
}

// collect groups the fields of every settings struct by name, in order of
// first appearance.
func collect(structs ...settingsOf) ([]*setting, error) {
	byName := map[string]*setting{}
	var out []*setting
	for _, st := range structs {
		fields, err := fieldsOf(st.ptr)
		if err != nil {
			return nil, err
		}
		for _, f := range fields {
			f.owner = st.owner
			s := byName[f.name]
			if s == nil {
				s = &setting{name: f.name, help: f.help}
				byName[f.name] = s
				out = append(out, s)
			} else if t := s.fields[0]; t.v.Type() != f.v.Type() || t.bytes != f.bytes {
				return nil, fmt.Errorf("binding: setting %q is declared as %s and as %s", f.name, t.v.Type(), f.v.Type())
			}
			s.fields = append(s.fields, f)
		}
	}
	return out, nil
}

func names(settings []*setting) []string {
	out := make([]string, 0, len(settings))
	for _, s := range settings {
		out = append(out, s.yamlKey())
	}
	slices.Sort(out)
	return out
}

// parseSize reads a size ("256MiB", "1048576"); "0" and negative numbers
// are taken as they are, for settings where they mean "none".
func parseSize(v string) (int64, error) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n <= 0 {
		return n, nil
	}
	return bytesize.Parse(v)
}

// parseDuration reads a Go duration ("30s", "5m") or a number of seconds.
// A number that is not one (NaN), or that rounds to no time at all, is
// refused: converted, NaN is whatever the platform makes of it (a
// negative duration on amd64), and a positive number below a nanosecond
// would be 0, which for some settings means off.
func parseDuration(v string) (time.Duration, error) {
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if math.IsNaN(n) || n <= 0 || n > float64(1<<63-1)/float64(time.Second) || time.Duration(n*float64(time.Second)) <= 0 {
			return 0, fmt.Errorf("want a positive duration, got %q", v)
		}
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want a positive duration such as 30s or 5m, got %q", v)
	}
	return d, nil
}
