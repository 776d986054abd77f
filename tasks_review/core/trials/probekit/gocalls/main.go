// traj2env Go call finder: the calls a Go project's tests make to its own package-level
// functions with plain-data arguments, read from the source.
//
// Usage: go run gocalls.go PROJECT    (standard library only; at keep time, in the pristine
// image, on the reference's files: nothing of the project runs)
//
// A Go test binary runs no tracer of ours, so the calls are found statically: every call in a
// _test.go file to a function the project declares at package level (no receiver, no type
// parameters), called by name from an internal test or through the package's import from an
// external test (or another package's tests), whose parameters are plain data (numbers, strings,
// booleans, []byte, and slices, arrays, maps and structs of them) and whose arguments evaluate
// here: constant expressions (literals, named constants with iota, conversions, arithmetic),
// composite literals of them, and the tables a test ranges over (a `for _, tc := range cases`
// binds tc to each element in turn, so `F(tc.in)` is one call per element). Names are resolved
// by scope as written, without type checking: a wrong guess only costs a probe, since every
// input is run on the reference twice and kept only where its outcome is plain and the same.
//
// Prints {"calls": [{"module", "package", "function", "params", "variadic", "args", "tests"}],
// "found": N, "unreadable": N, "not_plain": N}: module is the package's folder relative to the
// project, package its import path, params a description of each parameter's type, args the
// values in probe_values' encoding (numbers past 2**53 as {"$int": digits}, invalid UTF-8 as
// {"$bytes": base64}, maps with other than string keys as {"$dict": [[k, v], ...]}), tests the
// ids the grader's go test reports give the test that makes the call ("<import path>.TestX").
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

const (
	maxCalls    = 400
	maxElements = 100 // elements of one table a loop ranges over
	maxItems    = 200 // items of one value
	maxDepth    = 12
	maxText     = 4000
	maxFiles    = 2000
	maxSteps    = 1000000 // statements walked in all (nested table loops multiply)
	safeInt     = 1 << 53
)

type desc map[string]any

type binding struct {
	expr    ast.Expr // nil: not known here (it shadows what an outer scope binds)
	typ     ast.Expr // its type when the expression's own does not say (an elided element's)
	iota    int      // a constant's iota, -1 for anything else
	env     *scope   // where expr is read
	isConst bool
}

type scope struct {
	parent *scope
	names  map[string]*binding
	types  map[string]*binding // type declarations: expr is the type
	pkg    *pkg                // the package whose top level this chain ends in
	file   *file               // the file being walked (its imports)
}

func newScope(parent *scope) *scope {
	s := &scope{parent: parent, names: map[string]*binding{}, types: map[string]*binding{}}
	if parent != nil {
		s.pkg, s.file = parent.pkg, parent.file
	}
	return s
}

func (s *scope) lookup(name string) *binding {
	for at := s; at != nil; at = at.parent {
		if b, ok := at.names[name]; ok {
			return b
		}
	}
	return nil
}

func (s *scope) lookupType(name string) *binding {
	for at := s; at != nil; at = at.parent {
		if b, ok := at.types[name]; ok {
			return b
		}
	}
	return nil
}

type file struct {
	syntax   *ast.File
	external bool
	imports  map[string]*pkg // local name -> a package of the project
}

type pkg struct {
	dir, rel, importPath, name string
	funcs                      map[string]*ast.FuncType
	top                        *scope // the package's top level: its files and internal tests
	extTop                     *scope // the external test package's top level
	tests                      []*file
}

type call struct {
	Module   string   `json:"module"`
	Package  string   `json:"package"`
	Function string   `json:"function"`
	Params   []desc   `json:"params"`
	Variadic bool     `json:"variadic"`
	Args     []any    `json:"args"`
	Tests    []string `json:"tests"`
}

type finder struct {
	fset       *token.FileSet
	byPath     map[string]*pkg
	calls      []call
	found      int // calls to the project's functions
	unreadable int // ... whose parameters are not plain data
	notPlain   int // ... whose arguments could not be evaluated here
	test       string
	steps      int
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gocalls PROJECT")
		os.Exit(2)
	}
	f := &finder{fset: token.NewFileSet(), byPath: map[string]*pkg{}}
	f.load(os.Args[1])
	f.walkTests()
	out := map[string]any{
		"calls": f.calls, "found": f.found, "unreadable": f.unreadable, "not_plain": f.notPlain,
	}
	if f.calls == nil {
		out["calls"] = []call{}
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		os.Exit(1)
	}
}

// -- loading ---------------------------------------------------------------------------------

func skipDir(name string) bool {
	return name == "vendor" || name == "testdata" || name == "node_modules" ||
		strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

func (f *finder) load(project string) {
	dirs := map[string][]string{}
	count := 0
	filepath.WalkDir(project, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if path != project && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".go") && d.Type().IsRegular() && count < maxFiles {
			dirs[filepath.Dir(path)] = append(dirs[filepath.Dir(path)], path)
			count++
		}
		return nil
	})
	var order []string
	for dir := range dirs {
		order = append(order, dir)
	}
	sort.Strings(order)
	for _, dir := range order {
		f.loadPackage(project, dir, dirs[dir])
	}
	for _, p := range f.byPath {
		for _, t := range p.tests {
			t.imports = map[string]*pkg{}
			for _, spec := range t.syntax.Imports {
				path, err := strconv.Unquote(spec.Path.Value)
				target := f.byPath[path]
				if err != nil || target == nil {
					continue
				}
				name := target.name
				if spec.Name != nil {
					name = spec.Name.Name
				}
				t.imports[name] = target
			}
		}
	}
}

func (f *finder) loadPackage(project, dir string, paths []string) {
	sort.Strings(paths)
	rel, err := filepath.Rel(project, dir)
	if err != nil {
		return
	}
	p := &pkg{dir: dir, rel: filepath.ToSlash(rel), funcs: map[string]*ast.FuncType{}}
	p.importPath = importPath(project, dir)
	var sources, internal, external []*ast.File
	names := map[string]int{}
	for _, path := range paths {
		syntax, err := parser.ParseFile(f.fset, path, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil || ignored(syntax) {
			continue
		}
		if strings.HasSuffix(path, "_test.go") {
			if strings.HasSuffix(syntax.Name.Name, "_test") {
				external = append(external, syntax)
			} else {
				internal = append(internal, syntax)
			}
			continue
		}
		sources = append(sources, syntax)
		names[syntax.Name.Name]++
	}
	for name, n := range names {
		if n > names[p.name] || (n == names[p.name] && name < p.name) {
			p.name = name
		}
	}
	if p.name == "" && len(internal) > 0 {
		p.name = internal[0].Name.Name
	}
	p.top = newScope(nil)
	p.top.pkg = p
	for _, syntax := range append(sources, internal...) {
		if syntax.Name.Name != p.name {
			continue
		}
		declare(p.top, syntax.Decls)
		if strings.HasSuffix(f.fset.File(syntax.Pos()).Name(), "_test.go") {
			continue
		}
		for _, decl := range syntax.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if ok && fn.Recv == nil && fn.Type.TypeParams == nil && fn.Name.Name != "init" &&
				fn.Name.Name != "_" {
				p.funcs[fn.Name.Name] = fn.Type
			}
		}
	}
	p.extTop = newScope(nil)
	p.extTop.pkg = p
	for _, syntax := range external {
		declare(p.extTop, syntax.Decls)
		p.tests = append(p.tests, &file{syntax: syntax, external: true})
	}
	for _, syntax := range internal {
		if syntax.Name.Name == p.name {
			p.tests = append(p.tests, &file{syntax: syntax})
		}
	}
	f.byPath[p.importPath] = p
}

// ignored: a file that says it is never built (//go:build ignore).
func ignored(syntax *ast.File) bool {
	for _, group := range syntax.Comments {
		if group.Pos() > syntax.Package {
			break
		}
		for _, c := range group.List {
			text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
			if (strings.HasPrefix(text, "go:build") || strings.HasPrefix(text, "+build")) &&
				strings.Contains(text, "ignore") {
				return true
			}
		}
	}
	return false
}

// importPath: the module path of the nearest go.mod at or above dir, joined with the rest.
func importPath(project, dir string) string {
	for at := dir; ; at = filepath.Dir(at) {
		if module := modulePath(filepath.Join(at, "go.mod")); module != "" {
			rel, _ := filepath.Rel(at, dir)
			if rel == "." {
				return module
			}
			return module + "/" + filepath.ToSlash(rel)
		}
		if at == project || at == filepath.Dir(at) {
			rel, _ := filepath.Rel(project, dir)
			return filepath.ToSlash(rel)
		}
	}
}

func modulePath(gomod string) string {
	handle, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer handle.Close()
	lines := bufio.NewScanner(handle)
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		if len(fields) >= 2 && fields[0] == "module" {
			if unquoted, err := strconv.Unquote(fields[1]); err == nil {
				return unquoted
			}
			return fields[1]
		}
	}
	return ""
}

// declare binds a top level's (or a block's) constants, variables and types in s.
func declare(s *scope, decls []ast.Decl) {
	for _, decl := range decls {
		if gen, ok := decl.(*ast.GenDecl); ok {
			declareGen(s, gen)
		}
	}
}

func declareGen(s *scope, gen *ast.GenDecl) {
	var last []ast.Expr
	var lastType ast.Expr
	for index, spec := range gen.Specs {
		switch spec := spec.(type) {
		case *ast.TypeSpec:
			if spec.TypeParams == nil {
				s.types[spec.Name.Name] = &binding{expr: spec.Type, env: s, iota: -1}
			}
		case *ast.ValueSpec:
			values, typ := spec.Values, spec.Type
			if gen.Tok == token.CONST && len(values) == 0 {
				values, typ = last, lastType // the implicit repetition of the line above
			}
			if gen.Tok == token.CONST {
				last, lastType = values, typ
			}
			for i, name := range spec.Names {
				b := &binding{env: s, typ: typ, iota: -1, isConst: gen.Tok == token.CONST}
				if gen.Tok == token.CONST {
					b.iota = index
				}
				if len(values) == len(spec.Names) {
					b.expr = values[i]
				}
				s.names[name.Name] = b
			}
		}
	}
}
