// RUN: not pyasc-opt %s.missing 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not pyasc-opt %S 2>&1 | filecheck %s --check-prefix=DIR
// RUN: %python -c "open(r'%t.bin', 'wb').write(b'func.func @f() {\n  \xd0\xff\x00\n}\n')"
// RUN: not pyasc-opt %t.bin 2>&1 | filecheck %s --check-prefix=BINARY
// RUN: %python -c "print('func.func @f() {' + 'scf.execute_region {' * 3000 + '}' * 3000 + ' func.return }')" | not pyasc-opt 2>&1 | filecheck %s --check-prefix=DEEP
// RUN: not pyasc-opt %s -o %t.nodir/out.mlir 2>&1 | filecheck %s --check-prefix=OUTPUT
// RUN: not pyasc-opt %s -o %S 2>&1 | filecheck %s --check-prefix=OUTDIR
// RUN: not pyasc-opt %s -p 'asc-tile{nope=1}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not pyasc-opt %s -p 'cse{nope=1}' 2>&1 | filecheck %s --check-prefix=XOPTION
// RUN: not pyasc-opt %s -p 'asc-tile{' 2>&1 | filecheck %s --check-prefix=SPEC

// Misuse of the tool is an MLIR-style diagnostic and exit status 1, never a Python traceback.

// MISSING:      pyasc-opt: error: cannot read input file '{{.*}}input-errors.mlir.missing': No such file or directory
// MISSING-NOT:  Traceback
// DIR:          pyasc-opt: error: cannot read input file '{{.*}}pyasc-opt': Is a directory
// DIR-NOT:      Traceback
// BINARY:       pyasc-opt: error: input file '{{.*}}.bin' is not UTF-8 text: invalid byte 0xd0 at line 2, column 3
// BINARY-NOT:   Traceback
// DEEP:         pyasc-opt: error: <stdin>: the IR nests too deeply for pyasc-opt (Python's recursion limit was reached while parsing)
// DEEP-NEXT:    hint: flatten the nesting (deeper than about {{[0-9]+}} levels)
// DEEP-NOT:     Traceback
// OUTPUT:       pyasc-opt: error: cannot open output file '{{.*}}.nodir/out.mlir': No such file or directory
// OUTPUT-NOT:   Traceback
// OUTDIR:       pyasc-opt: error: cannot open output file '{{.*}}pyasc-opt': Is a directory
// OPTION:       pyasc-opt: error: invalid options for pass 'asc-tile': Provided arguments ["nope"] not found in expected arguments ["platform", "buffers", "tile", "block_dim", "nan_guards"]
// OPTION-NOT:   Traceback
// XOPTION:      pyasc-opt: error: invalid options for pass 'cse'
// XOPTION-NOT:  Traceback
// SPEC:         pyasc-opt: error: invalid pass pipeline 'asc-tile{'
// SPEC-NOT:     Traceback
func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> {
  func.return %x : tensor<16xf32>
}
