// Parameter types as plain-data kinds, and argument values in probe_values' encoding.

package main

import (
	"encoding/base64"
	"go/ast"
	"go/constant"
	"go/token"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// -- types -----------------------------------------------------------------------------------

var basics = map[string]desc{
	"int": {"kind": "int", "bits": 64}, "int8": {"kind": "int", "bits": 8},
	"int16": {"kind": "int", "bits": 16}, "int32": {"kind": "int", "bits": 32},
	"rune": {"kind": "int", "bits": 32}, "int64": {"kind": "int", "bits": 64},
	"uint": {"kind": "uint", "bits": 64}, "uint8": {"kind": "uint", "bits": 8},
	"byte": {"kind": "uint", "bits": 8}, "uint16": {"kind": "uint", "bits": 16},
	"uint32": {"kind": "uint", "bits": 32}, "uint64": {"kind": "uint", "bits": 64},
	"float32": {"kind": "float", "bits": 32}, "float64": {"kind": "float", "bits": 64},
	"string": {"kind": "string"}, "bool": {"kind": "bool"},
}

// describe: what kind of plain data a parameter of type t takes; nil when it is not plain data
// (interfaces, functions, channels, pointers, types of other packages, unexported fields).
func describe(t ast.Expr, env *scope, depth int) desc {
	if depth > maxDepth {
		return nil
	}
	switch x := t.(type) {
	case *scopedType:
		return describe(x.Expr, x.env, depth+1)
	case *ast.ParenExpr:
		return describe(x.X, env, depth+1)
	case *ast.Ident:
		if env != nil {
			if b := env.lookupType(x.Name); b != nil {
				return describe(b.expr, b.env, depth+1)
			}
		}
		return basics[x.Name]
	case *ast.ArrayType:
		elem := describe(x.Elt, env, depth+1)
		if elem == nil {
			return nil
		}
		if x.Len == nil {
			if id, ok := x.Elt.(*ast.Ident); ok && (id.Name == "byte" || id.Name == "uint8") &&
				(env == nil || env.lookupType(id.Name) == nil) {
				return desc{"kind": "bytes"}
			}
			return desc{"kind": "slice", "elem": elem}
		}
		if _, ok := x.Len.(*ast.Ellipsis); ok {
			return nil
		}
		n, ok := (&finder{}).constant(x.Len, env, -1, depth+1)
		if !ok {
			return nil
		}
		size, exact := constant.Int64Val(constant.ToInt(n))
		if !exact || size < 0 || size > maxItems {
			return nil
		}
		return desc{"kind": "array", "len": size, "elem": elem}
	case *ast.MapType:
		key, elem := describe(x.Key, env, depth+1), describe(x.Value, env, depth+1)
		if key == nil || elem == nil {
			return nil
		}
		switch key["kind"] {
		case "int", "uint", "float", "string", "bool":
			return desc{"kind": "map", "key": key, "elem": elem}
		}
		return nil
	case *ast.StructType:
		fields := []any{}
		for _, fl := range x.Fields.List {
			if len(fl.Names) == 0 {
				return nil
			}
			d := describe(fl.Type, env, depth+1)
			if d == nil {
				return nil
			}
			for _, name := range fl.Names {
				if !ast.IsExported(name.Name) {
					return nil
				}
				fields = append(fields, []any{name.Name, d})
			}
		}
		return desc{"kind": "struct", "fields": fields}
	}
	return nil
}

// -- values ----------------------------------------------------------------------------------

// value: e's value as a parameter of kind d takes it, in probe_values' encoding.
func (f *finder) value(e ast.Expr, d desc, env *scope, depth int) (out any, ok bool) {
	// A panic here (go/constant's on a division by zero, a value of an unexpected shape) is
	// a value this cannot read, never the end of the search.
	defer func() {
		if recover() != nil {
			out, ok = nil, false
		}
	}()
	return f.valueOf(e, d, env, depth)
}

func (f *finder) valueOf(e ast.Expr, d desc, env *scope, depth int) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	if e == nil { // a field the literal leaves out
		return zero(d), true
	}
	if id, ok := e.(*ast.Ident); ok && id.Name == "nil" && env.lookup("nil") == nil {
		switch d["kind"] {
		case "slice", "map", "bytes":
			return nil, true
		}
		return nil, false
	}
	if c, ok := f.constant(e, env, -1, depth+1); ok {
		return convert(c, d)
	}
	switch x := e.(type) {
	case *ast.ParenExpr:
		return f.valueOf(x.X, d, env, depth+1)
	case *ast.CallExpr: // []byte("text")
		if at, ok := x.Fun.(*ast.ArrayType); ok && at.Len == nil && len(x.Args) == 1 &&
			d["kind"] == "bytes" {
			if c, ok := f.constant(x.Args[0], env, -1, depth+1); ok && c.Kind() == constant.String {
				return text(constant.StringVal(c))
			}
		}
		return nil, false
	case *ast.Ident:
		b := env.lookup(x.Name)
		if b == nil || b.expr == nil {
			return nil, false
		}
		return f.valueOf(b.expr, d, b.env, depth+1)
	case *ast.SelectorExpr:
		value, _, fieldEnv, ok := f.field(x, env, depth+1)
		if !ok {
			return nil, false
		}
		if value == nil {
			return zero(d), true
		}
		return f.valueOf(value, d, fieldEnv, depth+1)
	}
	lit, _, litEnv, ok := f.literal(e, env, depth+1)
	if !ok {
		return nil, false
	}
	return f.composite(lit, d, litEnv, depth+1)
}

func (f *finder) composite(lit *ast.CompositeLit, d desc, env *scope, depth int) (any, bool) {
	if len(lit.Elts) > maxItems {
		return nil, false
	}
	switch d["kind"] {
	case "slice", "array", "bytes":
		elem, _ := d["elem"].(desc)
		if d["kind"] == "bytes" {
			elem = basics["byte"]
		}
		items := []any{}
		for _, elt := range lit.Elts {
			if _, keyed := elt.(*ast.KeyValueExpr); keyed {
				return nil, false
			}
			v, ok := f.valueOf(elt, elem, env, depth+1)
			if !ok {
				return nil, false
			}
			items = append(items, v)
		}
		if d["kind"] == "bytes" {
			raw := make([]byte, len(items))
			for i, v := range items {
				raw[i] = byte(v.(int64))
			}
			return text(string(raw))
		}
		if d["kind"] == "array" {
			size := int(d["len"].(int64))
			if len(items) > size {
				return nil, false
			}
			for len(items) < size {
				items = append(items, zero(elem))
			}
		}
		return items, true
	case "map":
		key, elem := d["key"].(desc), d["elem"].(desc)
		pairs := [][]any{}
		plain := key["kind"] == "string"
		for _, elt := range lit.Elts {
			kv, ok := elt.(*ast.KeyValueExpr)
			if !ok {
				return nil, false
			}
			k, ok := f.valueOf(kv.Key, key, env, depth+1)
			if !ok {
				return nil, false
			}
			v, ok := f.valueOf(kv.Value, elem, env, depth+1)
			if !ok {
				return nil, false
			}
			if s, isString := k.(string); !isString || strings.HasPrefix(s, "$") {
				plain = false
			}
			pairs = append(pairs, []any{k, v})
		}
		if !plain {
			return map[string]any{"$dict": pairs}, true
		}
		out := map[string]any{}
		for _, pair := range pairs {
			out[pair[0].(string)] = pair[1]
		}
		return out, true
	case "struct":
		fields := d["fields"].([]any)
		out := map[string]any{}
		for i, elt := range lit.Elts {
			var name string
			var value ast.Expr
			if kv, ok := elt.(*ast.KeyValueExpr); ok {
				id, ok := kv.Key.(*ast.Ident)
				if !ok {
					return nil, false
				}
				name, value = id.Name, kv.Value
			} else if i < len(fields) {
				name, value = fields[i].([]any)[0].(string), elt
			} else {
				return nil, false
			}
			var fd desc
			for _, field := range fields {
				if pair := field.([]any); pair[0] == name {
					fd = pair[1].(desc)
				}
			}
			if fd == nil {
				return nil, false
			}
			v, ok := f.valueOf(value, fd, env, depth+1)
			if !ok {
				return nil, false
			}
			out[name] = v
		}
		return out, true
	}
	return nil, false
}

func zero(d desc) any {
	switch d["kind"] {
	case "int", "uint":
		return int64(0)
	case "float":
		return 0.0
	case "string", "bytes":
		return ""
	case "bool":
		return false
	case "array":
		items := []any{}
		for i := int64(0); i < d["len"].(int64); i++ {
			items = append(items, zero(d["elem"].(desc)))
		}
		return items
	case "struct":
		return map[string]any{}
	}
	return nil
}

func text(s string) (any, bool) {
	if len(s) > maxText {
		return nil, false
	}
	if utf8.ValidString(s) {
		return s, true
	}
	return map[string]any{"$bytes": base64.StdEncoding.EncodeToString([]byte(s))}, true
}

// convert: a constant as a parameter of kind d takes it (an exact fit, or nothing).
func convert(c constant.Value, d desc) (any, bool) {
	bits, _ := d["bits"].(int)
	switch d["kind"] {
	case "int":
		v := constant.ToInt(c)
		i, exact := constant.Int64Val(v)
		if v.Kind() != constant.Int || !exact || bits < 64 && (i < -(1<<(bits-1)) || i >= 1<<(bits-1)) {
			return nil, false
		}
		if i >= safeInt || i <= -safeInt {
			return map[string]any{"$int": strconv.FormatInt(i, 10)}, true
		}
		return i, true
	case "uint":
		v := constant.ToInt(c)
		u, exact := constant.Uint64Val(v)
		if v.Kind() != constant.Int || !exact || bits < 64 && u >= 1<<bits {
			return nil, false
		}
		if u >= safeInt {
			return map[string]any{"$int": strconv.FormatUint(u, 10)}, true
		}
		return int64(u), true
	case "float":
		v := constant.ToFloat(c)
		if v.Kind() != constant.Float && v.Kind() != constant.Int {
			return nil, false
		}
		x, _ := constant.Float64Val(v)
		if math.IsInf(x, 0) || math.IsNaN(x) || bits == 32 && math.Abs(x) > math.MaxFloat32 {
			return nil, false
		}
		return x, true
	case "string", "bytes":
		if c.Kind() != constant.String {
			return nil, false
		}
		return text(constant.StringVal(c))
	case "bool":
		if c.Kind() != constant.Bool {
			return nil, false
		}
		return constant.BoolVal(c), true
	}
	return nil, false
}

// Constants of the standard library tests often pass.
var known = map[string]constant.Value{
	"math.MaxInt":     constant.MakeInt64(math.MaxInt),
	"math.MinInt":     constant.MakeInt64(math.MinInt),
	"math.MaxInt8":    constant.MakeInt64(math.MaxInt8),
	"math.MinInt8":    constant.MakeInt64(math.MinInt8),
	"math.MaxInt16":   constant.MakeInt64(math.MaxInt16),
	"math.MinInt16":   constant.MakeInt64(math.MinInt16),
	"math.MaxInt32":   constant.MakeInt64(math.MaxInt32),
	"math.MinInt32":   constant.MakeInt64(math.MinInt32),
	"math.MaxInt64":   constant.MakeInt64(math.MaxInt64),
	"math.MinInt64":   constant.MakeInt64(math.MinInt64),
	"math.MaxUint8":   constant.MakeUint64(math.MaxUint8),
	"math.MaxUint16":  constant.MakeUint64(math.MaxUint16),
	"math.MaxUint32":  constant.MakeUint64(math.MaxUint32),
	"math.MaxUint64":  constant.MakeUint64(math.MaxUint64),
	"math.MaxUint":    constant.MakeUint64(math.MaxUint),
	"math.Pi":         constant.MakeFloat64(math.Pi),
	"math.E":          constant.MakeFloat64(math.E),
	"math.MaxFloat64": constant.MakeFloat64(math.MaxFloat64),
	"math.MaxFloat32": constant.MakeFloat64(math.MaxFloat32),
}

// constant: e's value when it is a constant expression (iota: the constant declaration's, or
// -1). Variables whose last assignment was a constant count as that constant.
func (f *finder) constant(e ast.Expr, env *scope, iota int, depth int) (value constant.Value, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			value, ok = nil, false
		}
	}()
	value = f.constantOf(e, env, iota, depth)
	return value, value != nil && value.Kind() != constant.Unknown
}

func (f *finder) constantOf(e ast.Expr, env *scope, iota int, depth int) constant.Value {
	if depth > maxDepth || e == nil {
		return nil
	}
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind == token.IMAG {
			return nil
		}
		return constant.MakeFromLiteral(x.Value, x.Kind, 0)
	case *ast.ParenExpr:
		return f.constantOf(x.X, env, iota, depth+1)
	case *ast.Ident:
		var b *binding
		if env != nil {
			b = env.lookup(x.Name)
		}
		if b == nil {
			switch x.Name {
			case "true":
				return constant.MakeBool(true)
			case "false":
				return constant.MakeBool(false)
			case "iota":
				if iota >= 0 {
					return constant.MakeInt64(int64(iota))
				}
			}
			return nil
		}
		if b.expr == nil {
			return nil
		}
		return f.constantOf(b.expr, b.env, b.iota, depth+1)
	case *ast.UnaryExpr:
		v := f.constantOf(x.X, env, iota, depth+1)
		if v == nil {
			return nil
		}
		switch x.Op {
		case token.ADD, token.SUB, token.NOT:
			return constant.UnaryOp(x.Op, v, 0)
		case token.XOR:
			if v.Kind() == constant.Int {
				return constant.UnaryOp(x.Op, v, 0)
			}
		}
		return nil
	case *ast.BinaryExpr:
		a, b := f.constantOf(x.X, env, iota, depth+1), f.constantOf(x.Y, env, iota, depth+1)
		if a == nil || b == nil {
			return nil
		}
		switch x.Op {
		case token.SHL, token.SHR:
			s, exact := constant.Uint64Val(constant.ToInt(b))
			if !exact || s > 1024 {
				return nil
			}
			return constant.Shift(constant.ToInt(a), x.Op, uint(s))
		case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
			return constant.MakeBool(constant.Compare(a, x.Op, b))
		case token.QUO:
			if a.Kind() == constant.Int && b.Kind() == constant.Int {
				return constant.BinaryOp(a, token.QUO_ASSIGN, b) // integer division
			}
		}
		return constant.BinaryOp(a, x.Op, b)
	case *ast.CallExpr: // a conversion: int64(3), float64(2), Celsius(3.5), price.Cents(250)
		if len(x.Args) != 1 {
			return nil
		}
		target, _ := underlying(imported(x.Fun, env), env, 0)
		id, ok := target.(*ast.Ident)
		if !ok {
			return nil
		}
		d := basics[id.Name]
		v := f.constantOf(x.Args[0], env, iota, depth+1)
		if d == nil || v == nil {
			return nil
		}
		switch d["kind"] {
		case "int", "uint":
			return constant.ToInt(v)
		case "float":
			return constant.ToFloat(v)
		}
		if d["kind"] == "string" && v.Kind() == constant.String {
			return v
		}
		return nil
	case *ast.SelectorExpr:
		alias, ok := x.X.(*ast.Ident)
		if !ok || env == nil || shadowed(env, alias.Name) {
			return nil
		}
		if env.file != nil {
			if p := env.file.imports[alias.Name]; p != nil {
				if b := p.top.names[x.Sel.Name]; b != nil && b.isConst {
					return f.constantOf(b.expr, b.env, b.iota, depth+1)
				}
				return nil
			}
		}
		return known[alias.Name+"."+x.Sel.Name]
	}
	return nil
}

// imported: a type named through a project package's import (price.Cents) as that package
// declares it; t itself otherwise.
func imported(t ast.Expr, env *scope) ast.Expr {
	sel, ok := t.(*ast.SelectorExpr)
	if !ok || env == nil || env.file == nil {
		return t
	}
	alias, ok := sel.X.(*ast.Ident)
	if !ok || shadowed(env, alias.Name) {
		return t
	}
	if p := env.file.imports[alias.Name]; p != nil {
		if b := p.top.types[sel.Sel.Name]; b != nil {
			return typed(b.expr, b.env)
		}
	}
	return t
}
