// Walking the tests: scopes as written, the tables loops range over, and the calls.

package main

import (
	"go/ast"
	"go/constant"
	"go/token"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// -- walking the tests -----------------------------------------------------------------------

func (f *finder) walkTests() {
	var paths []string
	for path := range f.byPath {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	for _, path := range paths {
		p := f.byPath[path]
		for _, t := range p.tests {
			top := p.top
			if t.external {
				top = p.extTop
			}
			for _, decl := range t.syntax.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				f.test = ""
				if fn.Recv == nil && isTest(fn) {
					f.test = p.importPath + "." + fn.Name.Name
				}
				env := newScope(top)
				env.file = t
				bindUnknown(env, fn.Recv)
				bindUnknown(env, fn.Type.Params)
				f.stmts(fn.Body.List, env)
			}
		}
	}
}

// isTest: a function go test runs as a top-level test (TestX(t *testing.T)).
func isTest(fn *ast.FuncDecl) bool {
	name := fn.Name.Name
	if !strings.HasPrefix(name, "Test") || name == "TestMain" || fn.Type.TypeParams != nil {
		return false
	}
	if rest := name[len("Test"):]; rest != "" {
		r, _ := utf8.DecodeRuneInString(rest)
		if unicode.IsLower(r) {
			return false
		}
	}
	if fn.Type.Params == nil || len(fn.Type.Params.List) != 1 {
		return false
	}
	star, ok := fn.Type.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "T"
}

func bindUnknown(env *scope, fields *ast.FieldList) {
	if fields == nil {
		return
	}
	for _, field := range fields.List {
		for _, name := range field.Names {
			env.names[name.Name] = &binding{iota: -1}
		}
	}
}

func (f *finder) stmts(list []ast.Stmt, env *scope) {
	for _, s := range list {
		f.stmt(s, env)
	}
}

func (f *finder) stmt(s ast.Stmt, env *scope) {
	f.steps++
	if s == nil || len(f.calls) >= maxCalls || f.steps > maxSteps {
		return
	}
	switch s := s.(type) {
	case *ast.AssignStmt:
		f.exprs(s.Rhs, env)
		f.exprs(s.Lhs, env)
		for i, lhs := range s.Lhs {
			id, ok := lhs.(*ast.Ident)
			if !ok || id.Name == "_" {
				continue
			}
			b := &binding{env: env, iota: -1}
			if len(s.Lhs) == len(s.Rhs) && (s.Tok == token.DEFINE || s.Tok == token.ASSIGN) {
				b.expr = s.Rhs[i]
			}
			target := env
			if s.Tok != token.DEFINE {
				for at := env; at != nil; at = at.parent {
					if _, ok := at.names[id.Name]; ok {
						target = at
						break
					}
				}
			}
			target.names[id.Name] = b
		}
	case *ast.DeclStmt:
		if gen, ok := s.Decl.(*ast.GenDecl); ok {
			for _, spec := range gen.Specs {
				if v, ok := spec.(*ast.ValueSpec); ok {
					f.exprs(v.Values, env)
				}
			}
			declareGen(env, gen)
		}
	case *ast.RangeStmt:
		f.expr(s.X, env)
		f.ranged(s, env)
	case *ast.BlockStmt:
		f.stmts(s.List, newScope(env))
	case *ast.IfStmt:
		inner := newScope(env)
		f.stmt(s.Init, inner)
		f.expr(s.Cond, inner)
		f.stmts(s.Body.List, newScope(inner))
		f.stmt(s.Else, inner)
	case *ast.ForStmt:
		inner := newScope(env)
		f.stmt(s.Init, inner)
		// A counter changes from one turn to the next: not a constant inside the loop.
		if assign, ok := s.Init.(*ast.AssignStmt); ok {
			for _, lhs := range assign.Lhs {
				if id, ok := lhs.(*ast.Ident); ok {
					inner.names[id.Name] = &binding{iota: -1}
				}
			}
		}
		f.expr(s.Cond, inner)
		f.stmt(s.Post, inner)
		f.stmts(s.Body.List, newScope(inner))
	case *ast.SwitchStmt:
		inner := newScope(env)
		f.stmt(s.Init, inner)
		f.expr(s.Tag, inner)
		f.stmts(s.Body.List, inner)
	case *ast.TypeSwitchStmt:
		inner := newScope(env)
		f.stmt(s.Init, inner)
		if assign, ok := s.Assign.(*ast.AssignStmt); ok {
			f.exprs(assign.Rhs, inner)
			for _, lhs := range assign.Lhs {
				if id, ok := lhs.(*ast.Ident); ok {
					inner.names[id.Name] = &binding{iota: -1}
				}
			}
		} else {
			f.stmt(s.Assign, inner)
		}
		f.stmts(s.Body.List, inner)
	case *ast.CaseClause:
		f.exprs(s.List, env)
		f.stmts(s.Body, newScope(env))
	case *ast.SelectStmt:
		f.stmts(s.Body.List, env)
	case *ast.CommClause:
		inner := newScope(env)
		f.stmt(s.Comm, inner)
		f.stmts(s.Body, inner)
	case *ast.LabeledStmt:
		f.stmt(s.Stmt, env)
	case *ast.ExprStmt:
		f.expr(s.X, env)
	case *ast.GoStmt:
		f.expr(s.Call, env)
	case *ast.DeferStmt:
		f.expr(s.Call, env)
	case *ast.ReturnStmt:
		f.exprs(s.Results, env)
	case *ast.SendStmt:
		f.expr(s.Chan, env)
		f.expr(s.Value, env)
	case *ast.IncDecStmt:
		f.expr(s.X, env)
	}
}

// ranged walks a range loop's body once per element of the table it ranges over, each time
// with the key and value bound to that element; once with them unknown when the table is not
// a literal this can read.
func (f *finder) ranged(s *ast.RangeStmt, env *scope) {
	elements, ok := f.elements(s.X, env, 0)
	if !ok || len(elements) == 0 {
		inner := newScope(env)
		for _, e := range []ast.Expr{s.Key, s.Value} {
			if id, ok := e.(*ast.Ident); ok {
				inner.names[id.Name] = &binding{iota: -1}
			}
		}
		f.stmts(s.Body.List, newScope(inner))
		return
	}
	for i, el := range elements {
		if i >= maxElements || len(f.calls) >= maxCalls {
			break
		}
		inner := newScope(env)
		bind := func(e, value, typ ast.Expr) {
			if id, ok := e.(*ast.Ident); ok && id.Name != "_" {
				inner.names[id.Name] = &binding{expr: value, typ: typ, env: el.env, iota: -1}
			}
		}
		bind(s.Key, el.key, el.keyType)
		bind(s.Value, el.value, el.valueType)
		f.stmts(s.Body.List, newScope(inner))
	}
}

type element struct {
	key, value, keyType, valueType ast.Expr
	env                            *scope
}

// elements: the elements of the composite literal e stands for, each with its key (the index
// for a slice) and their types when the literal's type says them.
func (f *finder) elements(e ast.Expr, env *scope, depth int) ([]element, bool) {
	lit, typ, litEnv, ok := f.literal(e, env, depth)
	if !ok {
		return nil, false
	}
	resolved, typEnv := underlying(typ, litEnv, 0)
	var keyType, valueType ast.Expr
	isMap := false
	switch t := resolved.(type) {
	case *ast.ArrayType:
		valueType = t.Elt
	case *ast.MapType:
		keyType, valueType, isMap = t.Key, t.Value, true
	case nil:
	default:
		return nil, false
	}
	var out []element
	for i, elt := range lit.Elts {
		el := element{keyType: keyType, valueType: valueType, env: litEnv}
		if kv, ok := elt.(*ast.KeyValueExpr); ok {
			el.key, el.value = kv.Key, kv.Value
		} else if isMap {
			return nil, false
		} else {
			el.key, el.value = &ast.BasicLit{Kind: token.INT, Value: strconv.Itoa(i)}, elt
		}
		if typEnv != nil && valueType != nil {
			// The element types are read where the table's type was declared.
			el.keyType, el.valueType = typed(keyType, typEnv), typed(valueType, typEnv)
		}
		out = append(out, el)
	}
	return out, true
}

// typed wraps a type expression with the scope it is read in, so a named type declared in
// another scope still resolves there.
type scopedType struct {
	ast.Expr
	env *scope
}

func typed(t ast.Expr, env *scope) ast.Expr {
	if t == nil {
		return nil
	}
	if _, ok := t.(*scopedType); ok {
		return t
	}
	return &scopedType{Expr: t, env: env}
}

// underlying: the type expression behind named types (and parentheses), with the scope it is
// read in.
func underlying(t ast.Expr, env *scope, depth int) (ast.Expr, *scope) {
	for ; depth < maxDepth && t != nil; depth++ {
		switch x := t.(type) {
		case *scopedType:
			t, env = x.Expr, x.env
		case *ast.ParenExpr:
			t = x.X
		case *ast.Ident:
			if env == nil {
				return t, env
			}
			b := env.lookupType(x.Name)
			if b == nil {
				return t, env
			}
			t, env = b.expr, b.env
		default:
			return t, env
		}
	}
	return t, env
}

// literal: the composite literal e stands for (through variables, range elements, indexes and
// fields of other literals), its type and the scope it is read in.
func (f *finder) literal(e ast.Expr, env *scope, depth int) (*ast.CompositeLit, ast.Expr, *scope, bool) {
	if depth > maxDepth {
		return nil, nil, nil, false
	}
	switch x := e.(type) {
	case *ast.ParenExpr:
		return f.literal(x.X, env, depth+1)
	case *ast.CompositeLit:
		if x.Type != nil {
			return x, typed(x.Type, env), env, true
		}
		return x, nil, env, true
	case *ast.UnaryExpr:
		if x.Op == token.AND { // &T{...}: the literal itself
			return f.literal(x.X, env, depth+1)
		}
	case *ast.Ident:
		b := env.lookup(x.Name)
		if b == nil || b.expr == nil || b.isConst {
			return nil, nil, nil, false
		}
		lit, typ, litEnv, ok := f.literal(b.expr, b.env, depth+1)
		if ok && typ == nil && b.typ != nil {
			typ = b.typ
		}
		return lit, typ, litEnv, ok
	case *ast.IndexExpr:
		elements, ok := f.elements(x.X, env, depth+1)
		if !ok {
			return nil, nil, nil, false
		}
		index, ok := f.constant(x.Index, env, -1, depth+1)
		if !ok {
			return nil, nil, nil, false
		}
		for _, el := range elements {
			key, ok := f.constant(el.key, el.env, -1, depth+1)
			if ok && constant.Compare(key, token.EQL, index) {
				lit, typ, litEnv, ok := f.literal(el.value, el.env, depth+1)
				if ok && typ == nil {
					typ = el.valueType
				}
				return lit, typ, litEnv, ok
			}
		}
	case *ast.SelectorExpr:
		value, typ, fieldEnv, ok := f.field(x, env, depth+1)
		if !ok {
			return nil, nil, nil, false
		}
		lit, litType, litEnv, ok := f.literal(value, fieldEnv, depth+1)
		if ok && litType == nil {
			litType = typ
		}
		return lit, litType, litEnv, ok
	}
	return nil, nil, nil, false
}

// field: the expression a struct literal gives the field x.Sel (nil: the field is left out, its
// zero value), its type and the scope it is read in.
func (f *finder) field(x *ast.SelectorExpr, env *scope, depth int) (ast.Expr, ast.Expr, *scope, bool) {
	lit, typ, litEnv, ok := f.literal(x.X, env, depth+1)
	if !ok {
		return nil, nil, nil, false
	}
	resolved, typEnv := underlying(typ, litEnv, 0)
	if star, isStar := resolved.(*ast.StarExpr); isStar {
		resolved, typEnv = underlying(typed(star.X, typEnv), typEnv, 0)
	}
	st, _ := resolved.(*ast.StructType)
	var fieldType ast.Expr
	var names []string
	if st != nil {
		for _, fl := range st.Fields.List {
			for _, name := range fl.Names {
				names = append(names, name.Name)
				if name.Name == x.Sel.Name {
					fieldType = typed(fl.Type, typEnv)
				}
			}
			if len(fl.Names) == 0 {
				names = append(names, "") // embedded: positional literals count it
			}
		}
	}
	for i, elt := range lit.Elts {
		if kv, ok := elt.(*ast.KeyValueExpr); ok {
			if id, ok := kv.Key.(*ast.Ident); ok && id.Name == x.Sel.Name {
				return kv.Value, fieldType, litEnv, true
			}
			continue
		}
		if i < len(names) && names[i] == x.Sel.Name {
			return elt, fieldType, litEnv, true
		}
	}
	if st == nil {
		return nil, nil, nil, false
	}
	for _, name := range names {
		if name == x.Sel.Name {
			return nil, fieldType, litEnv, true // left out: the zero value
		}
	}
	return nil, nil, nil, false
}

func (f *finder) exprs(list []ast.Expr, env *scope) {
	for _, e := range list {
		f.expr(e, env)
	}
}

// expr finds the calls in e (function literals' bodies walked as blocks of their own).
func (f *finder) expr(e ast.Expr, env *scope) {
	if e == nil {
		return
	}
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			inner := newScope(env)
			bindUnknown(inner, n.Type.Params)
			f.stmts(n.Body.List, inner)
			return false
		case *ast.CallExpr:
			f.call(n, env)
		}
		return true
	})
}

// -- the calls -------------------------------------------------------------------------------

// target: the project package and function a call's callee names, if it names one.
func (f *finder) target(fun ast.Expr, env *scope) (*pkg, string, *ast.FuncType) {
	switch x := fun.(type) {
	case *ast.ParenExpr:
		return f.target(x.X, env)
	case *ast.Ident:
		if env.file.external || shadowed(env, x.Name) {
			return nil, "", nil
		}
		if fn := env.pkg.funcs[x.Name]; fn != nil {
			return env.pkg, x.Name, fn
		}
	case *ast.SelectorExpr:
		alias, ok := x.X.(*ast.Ident)
		if !ok || shadowed(env, alias.Name) || !ast.IsExported(x.Sel.Name) {
			return nil, "", nil
		}
		if p := env.file.imports[alias.Name]; p != nil {
			if fn := p.funcs[x.Sel.Name]; fn != nil {
				return p, x.Sel.Name, fn
			}
		}
	}
	return nil, "", nil
}

// shadowed: name is bound by a scope below the package's top level (a local of the test).
func shadowed(env *scope, name string) bool {
	for at := env; at != nil && at.parent != nil; at = at.parent {
		if _, ok := at.names[name]; ok {
			return true
		}
	}
	return false
}

func (f *finder) call(c *ast.CallExpr, env *scope) {
	p, name, fn := f.target(c.Fun, env)
	if p == nil || len(f.calls) >= maxCalls {
		return
	}
	f.found++
	params := []desc{}
	variadic := false
	for _, field := range fn.Params.List {
		t := field.Type
		if ell, ok := t.(*ast.Ellipsis); ok {
			variadic, t = true, &ast.ArrayType{Elt: ell.Elt}
		}
		d := describe(t, p.top, 0)
		if d == nil {
			f.unreadable++
			return
		}
		for n := 0; n < len(field.Names) || n == 0; n++ {
			params = append(params, d)
		}
	}
	args, ok := f.arguments(c, params, variadic, env)
	if !ok {
		f.notPlain++
		return
	}
	tests := []string{}
	if f.test != "" {
		tests = append(tests, f.test)
	}
	f.calls = append(f.calls, call{
		Module: p.rel, Package: p.importPath, Function: name, Params: params,
		Variadic: variadic, Args: args, Tests: tests,
	})
}

func (f *finder) arguments(c *ast.CallExpr, params []desc, variadic bool, env *scope) ([]any, bool) {
	fixed := len(params)
	if variadic && c.Ellipsis == token.NoPos {
		fixed--
	}
	if len(c.Args) < fixed || (len(c.Args) != fixed && !(variadic && c.Ellipsis == token.NoPos)) {
		return nil, false
	}
	args := []any{}
	for i := 0; i < fixed; i++ {
		v, ok := f.value(c.Args[i], params[i], env, 0)
		if !ok {
			return nil, false
		}
		args = append(args, v)
	}
	if variadic && c.Ellipsis == token.NoPos {
		rest := []any{}
		elem := params[len(params)-1]["elem"].(desc)
		for _, a := range c.Args[fixed:] {
			v, ok := f.value(a, elem, env, 0)
			if !ok {
				return nil, false
			}
			rest = append(rest, v)
		}
		args = append(args, rest)
	}
	return args, true
}
