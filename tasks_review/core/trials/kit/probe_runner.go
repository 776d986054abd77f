// traj2env probe runner (Go): the test that calls a package's functions on given inputs and
// prints the outcomes. probe_runner_go.py writes it, with the package's own name and a table of
// the functions probed (traj2envFuncs), as an internal test file the build reads through an
// overlay; the test binary runs this test alone. It knows no expected value: it reports what the
// code did, and the grader (root, in its own process) compares.
//
// stdin: {"timeout": seconds, "calls": [{"id", "function", "args"}]}, each argument in
// probe_values' encoding, decoded into the parameter's own type (a value that does not fit, an
// int8 given 300 or a uint given -1, makes the call "unavailable"). Report, on the descriptor
// that was stdout, one line per call: {"id", "outcome"}, the outcome {"returns": value} (one
// result as itself, several as a list, an error result left out when it is nil),
// {"raises": "error"} (a non-nil error result), {"raises": "panic"}, {"opaque": type},
// {"unavailable": why} or {"timeout": true}. Everything else the code prints goes to stderr.
//
// Names are prefixed so they clash with nothing the package declares; the syntax is Go 1.16's,
// so a module whose go.mod names an old language version still builds it.
package traj2envprobe

import (
	traj2envBase64 "encoding/base64"
	traj2envJSON "encoding/json"
	traj2envMath "math"
	traj2envOS "os"
	traj2envReflect "reflect"
	traj2envSort "sort"
	traj2envStrconv "strconv"
	traj2envStrings "strings"
	traj2envSyscall "syscall"
	traj2envTesting "testing"
	traj2envTime "time"
	traj2envUTF8 "unicode/utf8"
)

const (
	traj2envMaxDepth   = 8
	traj2envMaxItems   = 200
	traj2envMaxText    = 4000
	traj2envMaxEncoded = 20000
	traj2envSafeInt    = 1 << 53
)

type traj2envCall struct {
	ID       string                    `json:"id"`
	Function string                    `json:"function"`
	Args     []traj2envJSON.RawMessage `json:"args"`
}

type traj2envRequest struct {
	Timeout float64        `json:"timeout"`
	Calls   []traj2envCall `json:"calls"`
}

type traj2envOutcome map[string]interface{}

var traj2envErrorType = traj2envReflect.TypeOf((*error)(nil)).Elem()

type traj2envUnfit struct{ why string }

func (u traj2envUnfit) Error() string { return u.why }

func TestTraj2envProbe(t *traj2envTesting.T) {
	// The report goes to a descriptor of its own; fd 1 then points at stderr, so a print in
	// the code under test cannot break it (it could forge it: see probing.py).
	fd, err := traj2envSyscall.Dup(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := traj2envSyscall.Dup3(2, 1, 0); err != nil {
		t.Fatal(err)
	}
	traj2envOS.Stdout = traj2envOS.Stderr
	report := traj2envOS.NewFile(uintptr(fd), "report")
	var request traj2envRequest
	if err := traj2envJSON.NewDecoder(traj2envOS.Stdin).Decode(&request); err != nil {
		t.Fatal(err)
	}
	timeout := traj2envTime.Duration(request.Timeout * float64(traj2envTime.Second))
	if timeout <= 0 {
		timeout = 2 * traj2envTime.Second
	}
	for _, call := range request.Calls {
		line, err := traj2envJSON.Marshal(map[string]interface{}{
			"id": call.ID, "outcome": traj2envCallOne(call, timeout),
		})
		if err != nil {
			line, _ = traj2envJSON.Marshal(map[string]interface{}{
				"id": call.ID, "outcome": traj2envOutcome{"opaque": "unreadable"},
			})
		}
		report.Write(append(line, '\n'))
	}
	report.Close()
	traj2envOS.Exit(0) // nothing of the code under test runs after the report
}

func traj2envCallOne(call traj2envCall, timeout traj2envTime.Duration) traj2envOutcome {
	fn, ok := traj2envFuncs[call.Function]
	if !ok {
		return traj2envOutcome{"unavailable": "no such function"}
	}
	value := traj2envReflect.ValueOf(fn)
	kind := value.Type()
	if len(call.Args) != kind.NumIn() {
		return traj2envOutcome{"unavailable": "another number of parameters"}
	}
	in := make([]traj2envReflect.Value, len(call.Args))
	for i, raw := range call.Args {
		decoder := traj2envJSON.NewDecoder(traj2envStrings.NewReader(string(raw)))
		decoder.UseNumber()
		var plain interface{}
		if err := decoder.Decode(&plain); err != nil {
			return traj2envOutcome{"unavailable": "unreadable argument"}
		}
		arg, err := traj2envDecode(plain, kind.In(i), 0)
		if err != nil {
			return traj2envOutcome{"unavailable": "an argument that does not fit its parameter"}
		}
		in[i] = arg
	}
	done := make(chan traj2envOutcome, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- traj2envOutcome{"raises": "panic"}
			}
		}()
		var out []traj2envReflect.Value
		if kind.IsVariadic() {
			out = value.CallSlice(in)
		} else {
			out = value.Call(in)
		}
		done <- traj2envResult(kind, out)
	}()
	timer := traj2envTime.NewTimer(timeout)
	defer timer.Stop()
	select {
	case outcome := <-done:
		return outcome
	case <-timer.C:
		return traj2envOutcome{"timeout": true}
	}
}

func traj2envResult(kind traj2envReflect.Type, out []traj2envReflect.Value) traj2envOutcome {
	if n := len(out); n > 0 && kind.Out(n-1) == traj2envErrorType {
		if !out[n-1].IsNil() {
			return traj2envOutcome{"raises": "error"}
		}
		out = out[:n-1]
	}
	values := make([]interface{}, 0, len(out))
	for _, v := range out {
		encoded, ok := traj2envEncode(v, 0)
		if !ok {
			return traj2envOutcome{"opaque": v.Type().String()}
		}
		values = append(values, encoded)
	}
	var returns interface{}
	if len(values) == 1 {
		returns = values[0]
	} else if len(values) > 1 {
		returns = values
	}
	if text, err := traj2envJSON.Marshal(returns); err != nil || len(text) > traj2envMaxEncoded {
		return traj2envOutcome{"opaque": "too large"}
	}
	return traj2envOutcome{"returns": returns}
}

// -- encoding results --------------------------------------------------------------------------

func traj2envEncode(v traj2envReflect.Value, depth int) (interface{}, bool) {
	if depth > traj2envMaxDepth {
		return nil, false
	}
	if !v.IsValid() {
		return nil, true
	}
	switch v.Kind() {
	case traj2envReflect.Interface:
		if v.IsNil() {
			return nil, true
		}
		if v.Type() == traj2envErrorType { // an error as data: whether there is one
			return map[string]interface{}{"$error": true}, true
		}
		return traj2envEncode(v.Elem(), depth+1)
	case traj2envReflect.Ptr:
		if v.IsNil() {
			return nil, true
		}
		return traj2envEncode(v.Elem(), depth+1)
	case traj2envReflect.Bool:
		return v.Bool(), true
	case traj2envReflect.Int, traj2envReflect.Int8, traj2envReflect.Int16, traj2envReflect.Int32,
		traj2envReflect.Int64:
		i := v.Int()
		if i < traj2envSafeInt && i > -traj2envSafeInt {
			return i, true
		}
		return map[string]interface{}{"$int": traj2envStrconv.FormatInt(i, 10)}, true
	case traj2envReflect.Uint, traj2envReflect.Uint8, traj2envReflect.Uint16,
		traj2envReflect.Uint32, traj2envReflect.Uint64, traj2envReflect.Uintptr:
		u := v.Uint()
		if u < traj2envSafeInt {
			return u, true
		}
		return map[string]interface{}{"$int": traj2envStrconv.FormatUint(u, 10)}, true
	case traj2envReflect.Float32, traj2envReflect.Float64:
		f := v.Float()
		switch {
		case traj2envMath.IsNaN(f):
			return map[string]interface{}{"$float": "nan"}, true
		case traj2envMath.IsInf(f, 1):
			return map[string]interface{}{"$float": "inf"}, true
		case traj2envMath.IsInf(f, -1):
			return map[string]interface{}{"$float": "-inf"}, true
		}
		return f, true
	case traj2envReflect.String:
		return traj2envText([]byte(v.String()), true)
	case traj2envReflect.Slice, traj2envReflect.Array:
		if v.Kind() == traj2envReflect.Slice && v.Type().Elem().Kind() == traj2envReflect.Uint8 {
			return traj2envText(v.Bytes(), false)
		}
		if v.Len() > traj2envMaxItems {
			return nil, false
		}
		items := make([]interface{}, 0, v.Len()) // a nil slice is an empty list
		for i := 0; i < v.Len(); i++ {
			item, ok := traj2envEncode(v.Index(i), depth+1)
			if !ok {
				return nil, false
			}
			items = append(items, item)
		}
		return items, true
	case traj2envReflect.Map:
		return traj2envEncodeMap(v, depth)
	case traj2envReflect.Struct:
		out := map[string]interface{}{}
		exported := 0
		for i := 0; i < v.NumField(); i++ {
			field := v.Type().Field(i)
			if field.PkgPath != "" { // unexported: the package's own business
				continue
			}
			exported++
			item, ok := traj2envEncode(v.Field(i), depth+1)
			if !ok {
				return nil, false
			}
			out[field.Name] = item
		}
		if exported == 0 && v.NumField() > 0 {
			return nil, false // all of it hidden (a time.Time, a big.Int): opaque
		}
		return out, true
	}
	return nil, false // functions, channels, complex numbers, unsafe pointers
}

// traj2envText: a string as itself (bytes as {"$bytes": base64}, as probe_values.py has them),
// or as bytes when it is not valid UTF-8 (JSON would change it).
func traj2envText(raw []byte, isString bool) (interface{}, bool) {
	if len(raw) > traj2envMaxText {
		return nil, false
	}
	if isString && traj2envUTF8.Valid(raw) {
		return string(raw), true
	}
	return map[string]interface{}{"$bytes": traj2envBase64.StdEncoding.EncodeToString(raw)}, true
}

// A map's entries in the order of their keys' JSON (Go's own order changes from run to run).
func traj2envEncodeMap(v traj2envReflect.Value, depth int) (interface{}, bool) {
	if v.Len() > traj2envMaxItems {
		return nil, false
	}
	type pair struct {
		key, value interface{}
		order      string
	}
	pairs := make([]pair, 0, v.Len())
	plain := v.Type().Key().Kind() == traj2envReflect.String
	iter := v.MapRange()
	for iter.Next() {
		key, ok := traj2envEncode(iter.Key(), depth+1)
		if !ok {
			return nil, false
		}
		value, ok := traj2envEncode(iter.Value(), depth+1)
		if !ok {
			return nil, false
		}
		if text, isText := key.(string); !isText || traj2envStrings.HasPrefix(text, "$") {
			plain = false
		}
		order, _ := traj2envJSON.Marshal(key)
		pairs = append(pairs, pair{key, value, string(order)})
	}
	if plain {
		out := map[string]interface{}{}
		for _, p := range pairs {
			out[p.key.(string)] = p.value
		}
		return out, true
	}
	traj2envSort.Slice(pairs, func(i, j int) bool { return pairs[i].order < pairs[j].order })
	items := make([]interface{}, 0, len(pairs))
	for _, p := range pairs {
		items = append(items, []interface{}{p.key, p.value})
	}
	return map[string]interface{}{"$dict": items}, true
}

// -- decoding arguments ------------------------------------------------------------------------

// traj2envTag: the tag and its content of a tagged value ({"$int": "..."}), if v is one.
func traj2envTag(v interface{}) (string, interface{}) {
	object, ok := v.(map[string]interface{})
	if !ok || len(object) != 1 {
		return "", nil
	}
	for tag, inner := range object {
		if traj2envStrings.HasPrefix(tag, "$") {
			return tag, inner
		}
	}
	return "", nil
}

func traj2envDecode(v interface{}, t traj2envReflect.Type, depth int) (traj2envReflect.Value, error) {
	out := traj2envReflect.New(t).Elem()
	if depth > traj2envMaxDepth {
		return out, traj2envUnfit{"nested too deeply"}
	}
	tag, inner := traj2envTag(v)
	switch t.Kind() {
	case traj2envReflect.Bool:
		b, ok := v.(bool)
		if !ok {
			return out, traj2envUnfit{"not a boolean"}
		}
		out.SetBool(b)
		return out, nil
	case traj2envReflect.Int, traj2envReflect.Int8, traj2envReflect.Int16, traj2envReflect.Int32,
		traj2envReflect.Int64:
		i, err := traj2envStrconv.ParseInt(traj2envDigits(v, tag, inner), 10, 64)
		if err != nil || out.OverflowInt(i) {
			return out, traj2envUnfit{"not an integer of this size"}
		}
		out.SetInt(i)
		return out, nil
	case traj2envReflect.Uint, traj2envReflect.Uint8, traj2envReflect.Uint16,
		traj2envReflect.Uint32, traj2envReflect.Uint64, traj2envReflect.Uintptr:
		u, err := traj2envStrconv.ParseUint(traj2envDigits(v, tag, inner), 10, 64)
		if err != nil || out.OverflowUint(u) {
			return out, traj2envUnfit{"not an unsigned integer of this size"}
		}
		out.SetUint(u)
		return out, nil
	case traj2envReflect.Float32, traj2envReflect.Float64:
		var f float64
		var err error
		if number, ok := v.(traj2envJSON.Number); ok {
			f, err = traj2envStrconv.ParseFloat(string(number), 64)
		} else if name, ok := inner.(string); ok && tag == "$float" {
			f, err = traj2envStrconv.ParseFloat(name, 64) // nan, inf, -inf
		} else {
			err = traj2envUnfit{"not a number"}
		}
		if err != nil || out.OverflowFloat(f) {
			return out, traj2envUnfit{"not a number of this size"}
		}
		out.SetFloat(f)
		return out, nil
	case traj2envReflect.String:
		raw, ok := traj2envBytes(v, tag, inner)
		if !ok {
			return out, traj2envUnfit{"not a string"}
		}
		out.SetString(string(raw))
		return out, nil
	case traj2envReflect.Ptr:
		if v == nil {
			return out, nil
		}
		target, err := traj2envDecode(v, t.Elem(), depth+1)
		if err != nil {
			return out, err
		}
		out.Set(traj2envReflect.New(t.Elem()))
		out.Elem().Set(target)
		return out, nil
	case traj2envReflect.Slice, traj2envReflect.Array:
		return traj2envDecodeList(v, t, tag, inner, depth)
	case traj2envReflect.Map:
		return traj2envDecodeMap(v, t, tag, inner, depth)
	case traj2envReflect.Struct:
		object, ok := v.(map[string]interface{})
		if !ok || tag != "" {
			return out, traj2envUnfit{"not a struct"}
		}
		for name, item := range object {
			field, ok := t.FieldByName(name)
			if !ok || field.PkgPath != "" || len(field.Index) != 1 {
				return out, traj2envUnfit{"no such field"}
			}
			value, err := traj2envDecode(item, field.Type, depth+1)
			if err != nil {
				return out, err
			}
			out.Field(field.Index[0]).Set(value)
		}
		return out, nil
	}
	return out, traj2envUnfit{"not plain data"}
}

func traj2envDigits(v interface{}, tag string, inner interface{}) string {
	if number, ok := v.(traj2envJSON.Number); ok {
		return string(number)
	}
	if digits, ok := inner.(string); ok && tag == "$int" {
		return digits
	}
	return "not a number"
}

func traj2envBytes(v interface{}, tag string, inner interface{}) ([]byte, bool) {
	if text, ok := v.(string); ok {
		return []byte(text), true
	}
	if encoded, ok := inner.(string); ok && tag == "$bytes" {
		raw, err := traj2envBase64.StdEncoding.DecodeString(encoded)
		return raw, err == nil
	}
	return nil, false
}

func traj2envDecodeList(v interface{}, t traj2envReflect.Type, tag string, inner interface{}, depth int) (traj2envReflect.Value, error) {
	out := traj2envReflect.New(t).Elem()
	if v == nil && t.Kind() == traj2envReflect.Slice {
		return out, nil
	}
	if t.Kind() == traj2envReflect.Slice && t.Elem().Kind() == traj2envReflect.Uint8 {
		if raw, ok := traj2envBytes(v, tag, inner); ok {
			return traj2envReflect.ValueOf(raw).Convert(t), nil
		}
	}
	items, ok := v.([]interface{})
	if !ok && tag == "$tuple" {
		items, ok = inner.([]interface{})
	}
	if !ok || len(items) > traj2envMaxItems {
		return out, traj2envUnfit{"not a list"}
	}
	if t.Kind() == traj2envReflect.Array {
		if len(items) != t.Len() {
			return out, traj2envUnfit{"another length"}
		}
	} else {
		out = traj2envReflect.MakeSlice(t, len(items), len(items))
	}
	for i, item := range items {
		value, err := traj2envDecode(item, t.Elem(), depth+1)
		if err != nil {
			return out, err
		}
		out.Index(i).Set(value)
	}
	return out, nil
}

func traj2envDecodeMap(v interface{}, t traj2envReflect.Type, tag string, inner interface{}, depth int) (traj2envReflect.Value, error) {
	out := traj2envReflect.New(t).Elem()
	if v == nil {
		return out, nil
	}
	var pairs [][2]interface{}
	if object, ok := v.(map[string]interface{}); ok && tag == "" {
		for key, item := range object {
			pairs = append(pairs, [2]interface{}{key, item})
		}
	} else if items, ok := inner.([]interface{}); ok && tag == "$dict" {
		for _, item := range items {
			pair, ok := item.([]interface{})
			if !ok || len(pair) != 2 {
				return out, traj2envUnfit{"not a pair"}
			}
			pairs = append(pairs, [2]interface{}{pair[0], pair[1]})
		}
	} else {
		return out, traj2envUnfit{"not a map"}
	}
	if len(pairs) > traj2envMaxItems {
		return out, traj2envUnfit{"too many items"}
	}
	out = traj2envReflect.MakeMapWithSize(t, len(pairs))
	for _, pair := range pairs {
		key, err := traj2envDecode(pair[0], t.Key(), depth+1)
		if err != nil {
			return out, err
		}
		value, err := traj2envDecode(pair[1], t.Elem(), depth+1)
		if err != nil {
			return out, err
		}
		out.SetMapIndex(key, value)
	}
	return out, nil
}
