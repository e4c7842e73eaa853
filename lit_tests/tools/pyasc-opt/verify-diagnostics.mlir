// RUN: pyasc-opt %s --split-input-file --verify-diagnostics
// RUN: not pyasc-opt %S/Inputs/verify-mismatch.mlir --split-input-file --verify-diagnostics 2>&1 | filecheck %s --check-prefix=MISMATCH

// In a file with expected-* annotations, --verify-diagnostics checks them as mlir-opt does:
// `{{text}}` must be part of an error reported at the annotated line (the annotation's own
// line, @+N / @-N lines away, or @above / @below: the nearest line that holds no
// annotation); errors nobody expected and expected errors that did not occur fail the run.

func.func @same_line(%x: tensor<4xf32>) {
  %y = asc.unary "foo" %x : tensor<4xf32> // expected-error {{unknown unary kind 'foo'}}
  func.return
}

// -----

func.func @plus_one(%x: tensor<4xf32>) {
  // expected-error @+1 {{unknown binary kind 'pow'; expected one of}}
  %y = asc.binary "pow" %x, %x : tensor<4xf32>
  func.return
}

// -----

func.func @minus_one(%x: tensor<4xf32>) {
  %y = asc.compare "foo" %x, %x : tensor<4xf32> -> tensor<4xi1>
  // expected-error @-1 {{unknown predicate 'foo'}}
  func.return
}

// -----

func.func @below(%x: tensor<4xf32>) {
  // expected-error @below {{unknown unary kind 'bar'}}
  // expected-error @+2 {{unknown unary kind 'qux'}}
  %y = asc.unary "bar" %x : tensor<4xf32>
  %z = asc.unary "qux" %x : tensor<4xf32>
  func.return
}

// -----

func.func @above(%x: tensor<4xf32>) {
  %y = asc.unary "baz" %x : tensor<4xf32>
  // expected-error @above {{unknown unary kind 'baz'}}
  func.return
}

// -----

// Two errors in one chunk: every op that does not verify is reported.
func.func @two(%x: tensor<4xf32>) {
  // expected-error @+1 {{'one'}}
  %y = asc.unary "one" %x : tensor<4xf32>
  // expected-error @+1 {{'two'}}
  %z = asc.unary "two" %x : tensor<4xf32>
  func.return
}

// -----

// A parse error is a diagnostic too.
func.func @parse() {
  // expected-error @+1 {{Operation asc.nope is not registered}}
  asc.nope
}

// -----

// A chunk without errors and without annotations is fine.
func.func @fine(%x: tensor<4xf32>) {
  func.return
}

// MISMATCH-NOT:  Traceback
// MISMATCH:      verify-mismatch.mlir:5:3: error: unexpected error: Operation does not verify: asc.unary: unknown unary kind 'foo'
// MISMATCH:      verify-mismatch.mlir:4:6: error: expected error "unknown unary kind 'fooo'" was not produced
// MISMATCH:      verify-mismatch.mlir:12:6: error: expected error "this never happens" was not produced
// MISMATCH:      verify-mismatch.mlir:20:3: error: unexpected error: Operation does not verify: asc.unary: unknown unary kind 'bar'
// MISMATCH:      verify-mismatch.mlir:24:30: error: expected error "at line 23" was not produced
// MISMATCH-NOT:  error:
